#include "lib/mpit_session.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "events/selection.hpp"
#include "lib/journal.hpp"
#include "lib/metric_ids.hpp"
#include "lib/mpit_variables.hpp"
#include "lib/thread_buffer.hpp"
#include "lib/world.hpp"
#include "record/archive_schema.hpp"

namespace perusetrace::mpit {

namespace {

// How a variable's values become metric values (docs/mpit.md).
enum class Kind : std::uint8_t {
  Delta,      // COUNTER, TIMER, AGGREGATE, Open MPI's monotonic SPC counters: change per read
  Value,      // STATE, SIZE, LEVEL, PERCENTAGE, GENERIC: the value, when it changed
  Watermark,  // HIGH/LOWWATERMARK: the value, how often it moved, the sum of its moves
};

Kind kind_of(const PvarInfo& p) {
  // Open MPI's software performance counters (runtime_spc_*) are declared SIZE but only ever
  // grow, except the queue lengths (now) and their maxima, which reset when read.
  if (p.name.rfind("runtime_spc_", 0) == 0 && p.var_class == MPI_T_PVAR_CLASS_SIZE) {
    if (p.name.find("MAX_") != std::string::npos) return Kind::Watermark;
    if (p.name.find("IN_QUEUE") != std::string::npos) return Kind::Value;
    return Kind::Delta;
  }
  switch (p.var_class) {
    case MPI_T_PVAR_CLASS_COUNTER:
    case MPI_T_PVAR_CLASS_TIMER:
    case MPI_T_PVAR_CLASS_AGGREGATE:
      return Kind::Delta;
    case MPI_T_PVAR_CLASS_HIGHWATERMARK:
    case MPI_T_PVAR_CLASS_LOWWATERMARK:
      return Kind::Watermark;
    default:
      return Kind::Value;
  }
}

struct Element {
  std::uint32_t metric = 0;  // its first metric id; a watermark's moves and change follow
  std::int64_t last = 0;
  double last_real = 0;
  std::int64_t moves = 0;
  double change = 0;
};

struct Handle {
  const PvarInfo* pvar = nullptr;
  Kind kind = Kind::Value;
  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL: not bound
  MPI_T_pvar_handle handle{};
  int count = 0;
  std::vector<unsigned char> buffer;
  std::vector<Element> elements;
  bool active = true;
};

struct Session {
  int rank = 0;
  bool started = false;
  MPI_T_pvar_session session{};
  std::deque<PvarInfo> selected;      // stable addresses: handles point into it
  std::vector<std::string> patterns;  // MPITRACE_PVARS, for PVARs that appear later
  int known_pvars = 0;                // MPI_T_pvar_get_num when last matched
  std::vector<std::unique_ptr<Handle>> handles;
  std::vector<trace::MetricInfo> metrics;
  std::string cvars, cvars_set;
  std::vector<std::string> failed;  // PVARs already reported as failing
};
Session g_session;
// Reads (any thread, at MPI calls) skip while another thread reads or a communicator's handles
// come or go; the latter wait for the flag.
std::atomic_flag g_busy = ATOMIC_FLAG_INIT;
std::mutex g_changes;  // orders attach/detach among themselves

// One MPITRACE_CVARS item and what came of it, said after MPI_Init.
struct CvarRequest {
  std::string name, value;
  std::string outcome;  // "set", "not set, WHY", ...; empty: the MPI did not have it yet
};
std::vector<CvarRequest> g_cvar_requests;

class BusyLock {
 public:
  BusyLock() {
    while (g_busy.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  ~BusyLock() { g_busy.clear(std::memory_order_release); }
};

std::string comm_label(std::uint32_t local_id) {
  if (local_id == kCommWorld) return "MPI_COMM_WORLD";
  if (local_id == kCommSelf) return "MPI_COMM_SELF";
  return "comm " + std::to_string(local_id);
}

void report_failure_once(const PvarInfo& p, const char* what, int rc) {
  if (std::find(g_session.failed.begin(), g_session.failed.end(), p.name) != g_session.failed.end())
    return;
  g_session.failed.push_back(p.name);
  std::fprintf(stderr, "perusetrace rank %d: MPI_T variable %s: %s failed (%s); it is skipped.\n",
               g_session.rank, p.name.c_str(), what, error_name(rc).c_str());
}

std::uint32_t add_metric(const std::string& name, const PvarInfo& p, const char* note, bool delta,
                         bool real) {
  trace::MetricInfo m;
  m.local_id = next_metric_id();
  m.name = name;
  m.description =
      p.description + " [MPI_T " + class_name(p.var_class) + ", " + bind_name(p.bind) + "]" + note;
  m.delta = delta;
  m.real = real;
  journal::note_metric(m);
  g_session.metrics.push_back(m);
  return m.local_id;
}

void emit_value(std::uint32_t metric, std::int64_t value) noexcept {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  emit(Record{0, RecordKind::PvarValue, 0, 0, metric, 0, 0, bits, 0, 0});
}
void emit_real(std::uint32_t metric, double value) noexcept {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  emit(Record{0, RecordKind::PvarValue, 0, 0, metric, 0, 1, bits, 0, 0});
}

// Reads one handle and records what changed; `first`: only take the starting values (and
// record the level of value-kind variables, so a plot starts where the variable stands).
void read_handle(Handle& h, bool first) noexcept {
  const int rc = PMPI_T_pvar_read(g_session.session, h.handle, h.buffer.data());
  if (rc != MPI_SUCCESS) {
    h.active = false;
    report_failure_once(*h.pvar, "reading", rc);
    return;
  }
  for (int i = 0; i < h.count; ++i) {
    Element& e = h.elements[static_cast<std::size_t>(i)];
    double real = 0;
    bool is_real = false;
    const std::int64_t v = element(h.buffer.data(), h.pvar->datatype, i, real, is_real);
    const bool changed = is_real ? real != e.last_real : v != e.last;
    if (first) {
      if (h.kind == Kind::Value) is_real ? emit_real(e.metric, real) : emit_value(e.metric, v);
    } else if (changed) {
      switch (h.kind) {
        case Kind::Delta:
          is_real ? emit_real(e.metric, real - e.last_real) : emit_value(e.metric, v - e.last);
          break;
        case Kind::Value:
          is_real ? emit_real(e.metric, real) : emit_value(e.metric, v);
          break;
        case Kind::Watermark:
          e.change += is_real ? real - e.last_real : static_cast<double>(v - e.last);
          is_real ? emit_real(e.metric, real) : emit_value(e.metric, v);
          emit_value(e.metric + 1, ++e.moves);
          emit_real(e.metric + 2, e.change);
          break;
      }
    }
    e.last = v;
    e.last_real = real;
  }
}

// A handle of `p` bound to `object` (nullptr: NO_OBJECT), its metrics named after `where`.
void add_handle(const PvarInfo& p, void* object, MPI_Comm comm, const std::string& where,
                const std::vector<int>& world_ranks) {
  auto h = std::make_unique<Handle>();
  h->pvar = &p;
  h->kind = kind_of(p);
  h->comm = comm;
  int rc = PMPI_T_pvar_handle_alloc(g_session.session, p.index, object, &h->handle, &h->count);
  if (rc != MPI_SUCCESS) {
    report_failure_once(p, "allocating a handle", rc);
    return;
  }
  const std::size_t size = type_size(p.datatype);
  if (size == 0 || p.datatype == MPI_CHAR || h->count <= 0 || h->count > (1 << 20)) {
    // Text (char) and unknown types have no numeric value to plot.
    PMPI_T_pvar_handle_free(g_session.session, &h->handle);
    return;
  }
  if (!p.continuous && (rc = PMPI_T_pvar_start(g_session.session, h->handle)) != MPI_SUCCESS) {
    report_failure_once(p, "starting", rc);
    PMPI_T_pvar_handle_free(g_session.session, &h->handle);
    return;
  }
  h->buffer.assign(size * static_cast<std::size_t>(h->count), 0);
  h->elements.resize(static_cast<std::size_t>(h->count));
  const bool real = p.datatype == MPI_DOUBLE;
  const bool per_peer = comm != MPI_COMM_NULL && static_cast<std::size_t>(h->count) > 1 &&
                        static_cast<std::size_t>(h->count) == world_ranks.size();
  for (int i = 0; i < h->count; ++i) {
    std::string name = trace::kPvarMetricPrefix + p.name + where;
    if (per_peer)
      name += " [peer " + std::to_string(world_ranks[static_cast<std::size_t>(i)]) + "]";
    else if (h->count > 1)
      name += "[" + std::to_string(i) + "]";
    Element& e = h->elements[static_cast<std::size_t>(i)];
    switch (h->kind) {
      case Kind::Delta:
        e.metric = add_metric(name, p, ", change since the previous read", true, real);
        break;
      case Kind::Value:
        e.metric = add_metric(name, p, "", false, real);
        break;
      case Kind::Watermark:
        e.metric = add_metric(name, p, "", false, real);
        add_metric(name + " moves", p, ", times the watermark moved", false, false);
        add_metric(name + " change", p, ", sum of the watermark's moves", false, true);
        break;
    }
  }
  read_handle(*h, true);
  g_session.handles.push_back(std::move(h));
}

// Allocating or reading a handle can kill the process on some MPIs (Debian's Open MPI 4.1.4
// lists mtl_psm2_* variables of a component that is not running). A child process does with
// each variable what the process will do (allocate, start, read, free) first: one that kills
// the child is left out in the parent.
std::vector<bool> survivable(const std::vector<PvarInfo>& pvars) {
  std::vector<bool> ok(pvars.size(), true);
  std::size_t from = 0;
  while (from < pvars.size()) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return ok;
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) {
      ::close(pipe_fds[0]);
      ::close(pipe_fds[1]);
      return ok;
    }
    if (child == 0) {
      ::close(pipe_fds[0]);
      // The MPI's own report of the crash would read as if the program had died.
      if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, 2);
      MPI_T_pvar_session session;
      if (PMPI_T_pvar_session_create(&session) != MPI_SUCCESS) ::_exit(0);
      for (std::size_t i = from; i < pvars.size(); ++i) {
        const std::uint32_t at = static_cast<std::uint32_t>(i);
        if (::write(pipe_fds[1], &at, sizeof at) != sizeof at) ::_exit(0);
        MPI_Comm world = MPI_COMM_WORLD;
        void* object = pvars[i].bind == MPI_T_BIND_MPI_COMM ? &world : nullptr;
        if (pvars[i].bind != MPI_T_BIND_NO_OBJECT && pvars[i].bind != MPI_T_BIND_MPI_COMM) continue;
        MPI_T_pvar_handle handle;
        int count = 0;
        if (PMPI_T_pvar_handle_alloc(session, pvars[i].index, object, &handle, &count) !=
            MPI_SUCCESS)
          continue;
        // What the process will do with it: start it, read it, free it.
        const std::size_t size = type_size(pvars[i].datatype);
        if (size > 0 && count > 0 && count <= (1 << 20)) {
          std::vector<unsigned char> buffer(size * static_cast<std::size_t>(count));
          if (!pvars[i].continuous) PMPI_T_pvar_start(session, handle);
          PMPI_T_pvar_read(session, handle, buffer.data());
        }
        PMPI_T_pvar_handle_free(session, &handle);
      }
      const std::uint32_t done = 0xffffffffu;
      (void)!::write(pipe_fds[1], &done, sizeof done);
      ::_exit(0);
    }
    ::close(pipe_fds[1]);
    std::uint32_t at = 0, last = 0xfffffffeu;
    while (::read(pipe_fds[0], &at, sizeof at) == sizeof at) last = at;
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (last == 0xffffffffu || last >= pvars.size()) return ok;
    ok[last] = false;  // the child died trying this one
    from = last + 1;
  }
  return ok;
}

// The three names of `all` closest to `pattern`, for a message about a name that matched none.
template <typename Info>
std::string closest_names(const std::string& pattern, const std::vector<Info>& all) {
  std::multimap<std::size_t, const std::string*> by_distance;
  for (const Info& v : all) by_distance.emplace(edit_distance(pattern, v.name), &v.name);
  std::string out;
  int n = 0;
  for (const auto& [distance, name] : by_distance) {
    if (n++ == 3) break;
    out += (out.empty() ? "" : ", ") + *name;
  }
  return out;
}

// The CVARs as "NAME=VALUE" lines, the unreadable and bound ones left out.
std::string cvar_lines() {
  std::string out;
  for (const CvarInfo& c : mpit::cvars()) {
    std::string error;
    std::string value = read_cvar(c, error);
    if (!error.empty()) continue;
    for (char& ch : value)
      if (ch == '\n') ch = ' ';
    out += c.name + '=' + value + '\n';
  }
  return out;
}

}  // namespace

void before_init() {
  const Settings settings = read_settings([](const char* name) { return std::getenv(name); });
  if (settings.cvars.empty() || !initialise()) return;
  const std::vector<CvarInfo> all = mpit::cvars();
  for (const auto& [name, value] : settings.cvars) {
    CvarRequest request{name, value, ""};
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const CvarInfo& c) { return c.name == name; });
    std::string error;
    if (it != all.end())
      request.outcome = write_cvar(*it, value, error) ? "set" : "not set, " + error;
    g_cvar_requests.push_back(std::move(request));
  }
}

SelectResult select(const Settings& settings) {
  SelectResult result;
  // CVARs an MPI registers only at MPI_Init are set now, when they exist.
  if (!g_cvar_requests.empty()) {
    const std::vector<CvarInfo> all = mpit::cvars();
    std::string lines;
    for (CvarRequest& request : g_cvar_requests) {
      if (request.outcome.empty()) {
        const auto it = std::find_if(all.begin(), all.end(),
                                     [&](const CvarInfo& c) { return c.name == request.name; });
        std::string error;
        if (it == all.end()) {
          result.errors += "MPITRACE_CVARS: this MPI has no control variable " + request.name +
                           "; closest: " + closest_names(request.name, all) +
                           " (`perusetrace mpit` lists them all).\n";
          request.outcome = "not set, unknown";
        } else if (write_cvar(*it, request.value, error)) {
          request.outcome = "set after MPI_Init (it exists only from then on)";
        } else {
          request.outcome = "not set, " + error;
        }
      }
      lines += request.name + '=' + request.value + ": " + request.outcome + '\n';
    }
    g_session.cvars_set = lines;
    result.notice += "MPITRACE_CVARS:\n" + lines;
  }
  if (settings.pvars.empty()) return result;
  if (!initialise()) {
    result.notice += "this MPI's tool interface (MPI_T) does not start: no PVARs are read.\n";
    return result;
  }
  const std::vector<PvarInfo> all = pvars();
  if (all.empty()) {
    result.notice += "this MPI offers no MPI_T performance variables: none are read.\n";
    return result;
  }
  g_session.patterns = settings.pvars;
  PMPI_T_pvar_get_num(&g_session.known_pvars);
  for (const std::string& pattern : settings.pvars) {
    bool matched = false;
    for (const PvarInfo& p : all) {
      if (::fnmatch(pattern.c_str(), p.name.c_str(), 0) != 0) continue;
      matched = true;
      const bool known = std::any_of(g_session.selected.begin(), g_session.selected.end(),
                                     [&](const PvarInfo& c) { return c.index == p.index; });
      if (!known) g_session.selected.push_back(p);
    }
    if (!matched)
      result.errors +=
          "MPITRACE_PVARS: '" + pattern +
          "' matches no performance variable of this MPI; closest: " + closest_names(pattern, all) +
          " (`perusetrace mpit` lists them all).\n";
  }
  std::size_t other = 0;
  for (const PvarInfo& p : g_session.selected)
    other += p.bind != MPI_T_BIND_NO_OBJECT && p.bind != MPI_T_BIND_MPI_COMM;
  if (other > 0)
    result.notice += std::to_string(other) +
                     " of the selected PVARs are bound to objects other than communicators "
                     "(windows, files, ...) and are not read (docs/mpit.md).\n";
  return result;
}

void start(const Settings& settings, int rank, const TickScale& scale) {
  g_session.rank = rank;
  if (!initialise()) return;
  // Rank 0's CVARs in full; every other rank keeps those that differ from them.
  std::string mine = cvar_lines();
  const std::string rank0 = broadcast(mine);
  if (rank != 0) {
    std::string differ;
    for (std::size_t at = 0, end; at < mine.size(); at = end + 1) {
      end = mine.find('\n', at);
      const std::string line = mine.substr(at, end - at + 1);
      // A whole line of rank 0's ("ba=1" must not match "a=1"): at its start, or after a '\n'.
      bool same = false;
      for (std::size_t from = 0; !same && (from = rank0.find(line, from)) != std::string::npos;
           ++from)
        same = from == 0 || rank0[from - 1] == '\n';
      if (!same) differ += line;
    }
    mine = differ;
  }
  g_session.cvars = mine;
  journal::note_cvars(g_session.cvars, g_session.cvars_set);

  if (g_session.selected.empty()) return;
  const std::vector<bool> ok = survivable({g_session.selected.begin(), g_session.selected.end()});
  std::deque<PvarInfo> kept;
  std::string deadly;
  for (std::size_t i = 0; i < ok.size(); ++i) {
    if (ok[i])
      kept.push_back(g_session.selected[i]);
    else
      deadly += (deadly.empty() ? "" : ", ") + g_session.selected[i].name;
  }
  g_session.selected = std::move(kept);
  // Said once for the run: by rank 0, and by a rank whose list differs from rank 0's.
  const std::string rank0_deadly = broadcast(deadly);
  if (!deadly.empty() && (rank == 0 || deadly != rank0_deadly))
    std::fprintf(stderr,
                 "perusetrace%s: these MPI_T variables kill a process that reads them (tried "
                 "in a child process) and are skipped: %s\n",
                 rank == 0 ? "" : (" rank " + std::to_string(rank)).c_str(), deadly.c_str());
  if (PMPI_T_pvar_session_create(&g_session.session) != MPI_SUCCESS) {
    if (rank == 0)
      std::fprintf(stderr,
                   "perusetrace: MPI_T refused a performance session: no PVARs are read.\n");
    return;
  }
  g_session.started = true;
  {
    BusyLock lock;
    for (const PvarInfo& p : g_session.selected)
      if (p.bind == MPI_T_BIND_NO_OBJECT) add_handle(p, nullptr, MPI_COMM_NULL, "", {});
  }
  // MPI_T_pvar_read costs tens of ns per handle in Open MPI 4.1.4 (docs/performance.md, MPI_T):
  // two reads of many per call slow short messages down by microseconds.
  constexpr std::size_t kManyPerCall = 16;
  if (rank == 0 && settings.pvar_period_ns == 0 && g_session.handles.size() > kManyPerCall)
    std::fprintf(stderr,
                 "perusetrace: %zu MPI_T variables are read twice in every traced MPI call, "
                 "which costs microseconds per call; MPITRACE_PVAR_READ=10ms reads them every "
                 "10 ms instead.\n",
                 g_session.handles.size());
  if (settings.pvar_period_ns > 0)
    g_period_ticks = std::max<std::uint64_t>(
        scale.to_ticks(scale.a.ns + settings.pvar_period_ns) - scale.a.ticks, 1);
  g_reading.store(true);
}

namespace {

// Components register PVARs when they open, which can be after MPI_Init (a one-sided component
// at the first window): new ones that MPITRACE_PVARS matches are read from then on. They are not
// tried in a child first, as the program may have threads by now (a fork would copy their
// locks held); communicator-bound ones apply to the communicators that come after.
void adopt_new_pvars() {
  int n = 0;
  if (PMPI_T_pvar_get_num(&n) != MPI_SUCCESS || n <= g_session.known_pvars) return;
  for (const PvarInfo& p : pvars()) {
    if (p.index < g_session.known_pvars) continue;
    const bool wanted = std::any_of(g_session.patterns.begin(), g_session.patterns.end(),
                                    [&](const std::string& pattern) {
                                      return ::fnmatch(pattern.c_str(), p.name.c_str(), 0) == 0;
                                    });
    if (!wanted) continue;
    g_session.selected.push_back(p);
    if (p.bind == MPI_T_BIND_NO_OBJECT)
      add_handle(g_session.selected.back(), nullptr, MPI_COMM_NULL, "", {});
  }
  g_session.known_pvars = n;
}

}  // namespace

void attach(MPI_Comm comm, std::uint32_t local_id, const std::vector<int>& world_ranks) {
  if (!g_session.started) return;
  std::lock_guard changes(g_changes);
  BusyLock lock;
  adopt_new_pvars();
  for (const PvarInfo& p : g_session.selected)
    if (p.bind == MPI_T_BIND_MPI_COMM)
      add_handle(p, &comm, comm, " (" + comm_label(local_id) + ")", world_ranks);
}

void detach(MPI_Comm comm) {
  if (!g_session.started) return;
  std::lock_guard changes(g_changes);
  BusyLock lock;
  for (auto& h : g_session.handles) {
    if (h->comm != comm || h->comm == MPI_COMM_NULL) continue;
    if (h->active) read_handle(*h, false);  // what the communicator did until now
    PMPI_T_pvar_handle_free(g_session.session, &h->handle);
    h->active = false;
    h->comm = MPI_COMM_NULL;
  }
  std::erase_if(g_session.handles, [](const auto& h) { return !h->active; });
}

void read_now() noexcept {
  if (g_busy.test_and_set(std::memory_order_acquire)) return;
  for (auto& h : g_session.handles)
    if (h->active) read_handle(*h, false);
  g_busy.clear(std::memory_order_release);
}

void stop() {
  if (g_session.started) {
    g_reading.store(false);
    BusyLock lock;
    for (auto& h : g_session.handles) {
      if (!h->active) continue;
      read_handle(*h, false);
      PMPI_T_pvar_handle_free(g_session.session, &h->handle);
    }
    g_session.handles.clear();
    PMPI_T_pvar_session_free(&g_session.session);
    g_session.started = false;
  }
  finalise();
}

std::vector<trace::MetricInfo> recorded_metrics() {
  return g_session.metrics;
}
std::string recorded_cvars() {
  return g_session.cvars;
}
std::string cvar_settings() {
  return g_session.cvars_set;
}

}  // namespace perusetrace::mpit
