// Start and end of tracing: MPI_Init/MPI_Init_thread and MPI_Finalize.
#include <errno.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "lib/clock_sync.hpp"
#include "lib/comm_registry.hpp"
#include "lib/crash_guard.hpp"
#include "lib/file_registry.hpp"
#include "lib/global_clock.hpp"
#include "lib/journal.hpp"
#include "lib/journal_format.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/peruse_session.hpp"
#include "lib/regions.hpp"
#include "lib/record_file.hpp"
#include "lib/settings.hpp"
#include "lib/tick_clock.hpp"

extern char* program_invocation_short_name;  // glibc

namespace perusetrace {

namespace {

struct Run {
  int rank = 0;
  int size = 1;
  std::string directory;
  std::uint64_t start_time = 0;
  std::uint64_t realtime_start = 0;
  TickPoint ticks_first;  // the records' clock at init; with the point at the end, its scale
  std::string settings;
  ClockSync clocks;
};
Run g_run;

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Rank 0 picks the directory: the requested one, or NAME.1, NAME.2, ... when it already holds
// something, since a trace is never overwritten. An empty result carries the reason in `why`.
std::string choose_directory(const Settings& s, std::string& why) {
  std::string base =
      s.output.empty() ? std::string(program_invocation_short_name) + "-trace" : s.output;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string dir = base;
  for (int n = 1; exists(dir) && n < 10000; ++n) dir = base + "." + std::to_string(n);
  if (dir != base) {
    std::fprintf(stderr, "perusetrace: %s already exists; writing this trace to %s instead.\n",
                 base.c_str(), dir.c_str());
  }
  const std::string parent = parent_of(dir);
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    why = "cannot write the trace to " + dir + ": " + parent + " " +
          (errno == ENOENT ? "does not exist" : "is not writable") +
          ". Set MPITRACE_OUTPUT to a directory path in a writable place.";
    return "";
  }
  if (!journal::create_directories(dir, why)) return "";
  return dir;
}

std::string broadcast(std::string text) {
  int length = static_cast<int>(text.size());
  PMPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  text.resize(static_cast<std::size_t>(length));
  PMPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return text;
}

// Bad settings stop the run at MPI_Init, before the program has done any work: a tracing run
// with settings other than the user asked for would be a wasted batch job.
[[noreturn]] void stop_for_bad_settings(const std::string& errors) {
  if (g_run.rank == 0) {
    std::fprintf(stderr, "perusetrace: the run stops at MPI_Init because of its settings:\n%s",
                 errors.c_str());
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  PMPI_Finalize();
  std::exit(2);
}

void warn_unknown_variables() {
  const std::string lines = unknown_variables(environ);
  for (std::size_t start = 0, end; start < lines.size(); start = end + 1) {
    end = lines.find('\n', start);
    std::fprintf(stderr, "perusetrace: %.*s\n", static_cast<int>(end - start), &lines[start]);
  }
}

std::string host_name() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

bool all_ranks(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

trace::ClockOffset to_trace(const OffsetPoint& p) {
  return {p.local_ns, p.offset_ns, p.error_ns, p.exchanges};
}

// A new offset measurement, noted in the journal as soon as it is known.
void measure_clock() {
  g_run.clocks.measure();
  journal::note_clock_offset(to_trace(g_run.clocks.points().back()));
}

// Ranks on different hosts may see different files under one path (a node-local scratch
// directory): each checks that it sees the token rank 0 left in the directory it chose. A trace
// with the other hosts' ranks missing would look whole; the run goes untraced instead, saying
// which hosts and what to set.
bool same_directory_everywhere(const std::string& dir) {
  const std::string path = dir + "/.perusetrace-run";
  std::string token;
  if (g_run.rank == 0) {
    token = std::to_string(realtime_ns()) + "-" + std::to_string(::getpid()) + "-" + host_name();
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fputs(token.c_str(), f);
      std::fclose(f);
    }
  }
  token = broadcast(token);
  char seen[256] = {0};
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    if (std::fgets(seen, sizeof seen, f) == nullptr) seen[0] = '\0';
    std::fclose(f);
  }
  const bool mine = token == seen;
  const bool all = all_ranks(mine);
  if (!all) {
    // Only now, and only the hosts that cannot see it, travel to rank 0.
    char host[64] = {0};
    if (!mine) std::snprintf(host, sizeof host, "%s", host_name().c_str());
    std::vector<char> hosts(g_run.rank == 0 ? sizeof host * g_run.size : 0);
    PMPI_Gather(host, sizeof host, MPI_CHAR, hosts.data(), sizeof host, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (g_run.rank == 0) {
      std::set<std::string> unseen;
      int ranks = 0;
      for (int r = 0; r < g_run.size; ++r) {
        const std::string h(&hosts[static_cast<std::size_t>(r) * sizeof host]);
        if (!h.empty()) ++ranks, unseen.insert(h);
      }
      std::string names;
      for (const std::string& h : unseen) names += (names.empty() ? " " : ", ") + h;
      std::fprintf(stderr,
                   "perusetrace: the trace directory %s is not the same directory on every host: "
                   "%d rank(s) on%s do not see what rank 0 (on %s) wrote there (a node-local "
                   "disk?). Set MPITRACE_OUTPUT to a directory on a file system every host "
                   "shares. The program runs untraced.\n",
                   dir.c_str(), ranks, names.c_str(), host_name().c_str());
    }
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  if (g_run.rank == 0) {
    std::remove(path.c_str());
    if (!all) {
      ::rmdir(journal::directory(dir).c_str());
      ::rmdir(dir.c_str());
    }
  }
  return all;
}

// OTF2 reports success even when its buffered writes met a full disk (an empty anchor file was
// seen on a full tmpfs), so the journal is removed only if the files look whole and the file
// system still had room after the last of them. A directory removed while the archive was
// written (the anchor file gone, or the directory) is told apart from a full one: the advice
// differs.
bool archive_fits(std::string& error) {
  struct statvfs fs;
  const std::string anchor = g_run.directory + "/traces.otf2";
  struct stat st;
  const bool anchor_there = g_run.rank != 0 || ::stat(anchor.c_str(), &st) == 0;
  const bool anchor_ok = anchor_there && (g_run.rank != 0 || st.st_size > 0);
  const bool room = ::statvfs(g_run.directory.c_str(), &fs) != 0 || fs.f_bavail > 0;
  if (anchor_ok && room) return true;
  if (!anchor_there || ::access(g_run.directory.c_str(), W_OK | X_OK) != 0)
    error = "the output directory " + g_run.directory +
            " (or the archive in it) was removed while the archive was written: set "
            "MPITRACE_OUTPUT to a directory that stays for the whole run.";
  else
    error = "the file system of " + g_run.directory +
            " was full when the archive was written, so it may be cut short.";
  return false;
}

// What the user can still do with the records when the archive failed.
std::string what_is_kept() {
  const std::string journal = journal::directory(g_run.directory);
  if (::access(journal.c_str(), R_OK | X_OK) != 0)
    return " The records were in " + journal + ", which is gone too: this run's trace is lost.";
  return " The records are kept in " + journal +
         ": once the cause is fixed, `perusetrace recover " + g_run.directory +
         "` makes the archive from them.";
}

// Encodes this rank's journal into the OTF2 archive (collective). The journal goes once the
// archive is complete on every rank; otherwise it stays for `perusetrace recover`.
void write_archive(trace::ProcessInfo process, std::uint32_t threads, const GlobalClock& clock) {
  trace::ArchiveSpec spec;
  spec.directory = g_run.directory;
  spec.rank = g_run.rank;
  spec.size = g_run.size;
  spec.regions = region_table();
  spec.peruse_region_base = kPeruseRegionBase;
  spec.otf2_memory_bytes = 2u << 20;
  spec.settings = g_run.settings;
  spec.quiet_failures = journal::failed();
  std::string error;
  const bool opened = trace::open_archive(spec, error);
  if (!all_ranks(opened)) {
    if (!opened)
      std::fprintf(stderr, "perusetrace rank %d: %s%s\n", g_run.rank, error.c_str(),
                   what_is_kept().c_str());
    return;
  }
  constexpr std::size_t kBlock = 1 << 14;
  static Record block[kBlock];  // finalize runs once, on one thread
  for (std::uint32_t t = 0; t < threads; ++t) {
    void* location = trace::open_location(t);
    RecordFile file(kRegionCount, static_cast<std::uint8_t>(kPeruseEventCount));
    file.set_clock(clock);
    std::string ignored;  // a thread whose journal file could not be created has no records
    if (location != nullptr && file.open(journal::records_file(t), ignored)) {
      std::size_t n = 0;
      while ((n = file.read(block, kBlock)) > 0) trace::write(location, block, n);
    }
    // The archive's time span holds every event, whatever rounding the clock's maps did.
    const RecordFile::Counts& c = file.counts();
    if (c.kept > 0 && c.first_time < process.start_time) {
      process.realtime_start -= std::min(process.realtime_start, process.start_time - c.first_time);
      process.start_time = c.first_time;
    }
    if (c.kept > 0) process.end_time = std::max(process.end_time, c.last_time);
    trace::close_location(location);
  }
  bool ok = trace::close_archive(process, error);
  if (ok) ok = archive_fits(error);
  if (!error.empty() && (ok || g_run.rank == 0))
    std::fprintf(stderr, "perusetrace rank %d: %s%s\n", g_run.rank, error.c_str(),
                 ok ? "" : what_is_kept().c_str());
  if (all_ranks(ok)) journal::remove(threads);
  if (g_run.rank == 0 && ok) {
    std::fprintf(stderr, "perusetrace: trace %s in %s/traces.otf2\n",
                 g_state.load() == TraceState::Stopped ? "written incompletely" : "written",
                 g_run.directory.c_str());
  }
}

}  // namespace

void on_init(int rc, Fn fn, std::uint64_t start, int provided) {
  if (rc != MPI_SUCCESS) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_run.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_run.size);

  const Settings settings = read_settings([](const char* name) { return std::getenv(name); });
  if (!settings.errors.empty()) stop_for_bad_settings(settings.errors);
  if (g_run.rank == 0) warn_unknown_variables();
  if (!settings.enabled) return;

  std::string why;
  g_run.directory = broadcast(g_run.rank == 0 ? choose_directory(settings, why) : "");
  if (g_run.directory.empty()) {
    if (g_run.rank == 0)
      std::fprintf(stderr, "perusetrace: %s The program runs untraced.\n", why.c_str());
    return;
  }

  if (!same_directory_everywhere(g_run.directory)) return;

  // `start` was read before the clock was chosen, so it is ns: records want ticks.
  std::string clock_problem;
  if (!choose_tick_clock(settings.clock, clock_problem))
    std::fprintf(stderr, "perusetrace rank %d: %s This rank uses CLOCK_MONOTONIC.\n", g_run.rank,
                 clock_problem.c_str());
  g_run.ticks_first = tick_point();
  TickPoint second = tick_point();
  // A scale for a rank that dies without a word (SIGKILL): 2 ms is an error of a few ppm.
  while (tick_clock_is_tsc() && second.ns - g_run.ticks_first.ns < 2'000'000) second = tick_point();
  const std::uint64_t start_ticks = tick_scale(g_run.ticks_first, second).to_ticks(start);
  g_run.start_time = start;
  g_run.realtime_start = realtime_ns() - (now_ns() - start);
  g_run.settings = describe(settings) + " MPITRACE_CLOCK=" + tick_clock_name();
  journal::Header header;
  header.rank = g_run.rank;
  header.size = g_run.size;
  header.host = host_name();
  header.start_time = g_run.start_time;
  header.realtime_start = g_run.realtime_start;
  header.ticks_first = g_run.ticks_first;
  header.ticks_second = second;
  header.settings = g_run.settings;
  std::string error;
  const bool ok = journal::open(g_run.directory, header, error);
  if (!all_ranks(ok)) {
    if (!ok)
      std::fprintf(stderr, "perusetrace rank %d: %s The program runs untraced.\n", g_run.rank,
                   error.c_str());
    return;
  }

  // Before Peruse is attached: the clock's messages are the tracer's, not the program's.
  g_run.clocks.join();
  journal::note_clock_domain(g_run.clocks.leader(), g_run.clocks.domain());
  measure_clock();

  g_group_mask = settings.group_mask;
  configure_buffers(settings.buffer_bytes);
  g_comms.start();
  const peruse::StartResult peruse =
      peruse::start(settings.peruse_events, provided == MPI_THREAD_MULTIPLE);
  // Without an explicit MPITRACE_PERUSE_EVENTS a missing Peruse is expected, not news.
  if (g_run.rank == 0 && !peruse.notice.empty() && (settings.peruse_events_set || peruse.active))
    std::fprintf(stderr, "perusetrace: %s\n", peruse.notice.c_str());
  peruse::attach(MPI_COMM_WORLD, g_comms.find(MPI_COMM_WORLD));
  peruse::attach(MPI_COMM_SELF, g_comms.find(MPI_COMM_SELF));

  g_state.store(TraceState::On);
  install_crash_guard();
  const auto region = static_cast<std::uint16_t>(fn);
  emit_first(Record{start_ticks, RecordKind::Enter, 0, region, 0, 0, 0, 0, 0, 0});
  record_region(RecordKind::Leave, region);
}

void on_finalize() {
  if (g_state.load() == TraceState::Off) return;
  const auto region = static_cast<std::uint16_t>(Fn::MPI_Finalize);
  record_region(RecordKind::Enter, region);
  peruse::stop();
  measure_clock();
  g_run.clocks.leave();
  record_region(RecordKind::Leave, region);
  const std::uint64_t end = now_ns();

  const bool stopped = g_state.exchange(TraceState::Off) == TraceState::Stopped;
  drain_all_buffers();
  remove_crash_guard();
  const TickPoint last = tick_point();
  journal::note_end(end, last);

  // Only what is on disk counts: the directory may have gone since the last drain.
  if (!all_ranks(journal::still_writable())) {
    if (g_run.rank == 0)
      std::fprintf(stderr,
                   "perusetrace: no trace was written: %s is missing or not writable (was the "
                   "directory removed while the program ran?).\n",
                   g_run.directory.c_str());
    return;
  }
  trace::ProcessInfo process;
  process.host = host_name();
  process.comms = g_comms.snapshot();
  process.files = g_files.snapshot();
  GlobalClock clock;
  clock.scale = tick_scale(g_run.ticks_first, last);
  for (const OffsetPoint& p : g_run.clocks.points()) {
    clock.offsets.add(p.local_ns, p.offset_ns, p.error_ns);
    process.clock_offsets.push_back(to_trace(p));
  }
  process.clock_leader = g_run.clocks.leader();
  process.start_time = clock.offsets.to_global(g_run.start_time);
  process.end_time = clock.offsets.to_global(end);
  process.realtime_start = g_run.realtime_start;
  if (stopped) g_state.store(TraceState::Stopped);  // the archive says it is incomplete
  write_archive(process, thread_count(), clock);
}

}  // namespace perusetrace
