#include "lib/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "lib/mpi_functions.hpp"

namespace perusetrace {

namespace {

constexpr std::size_t kMinBuffer = 64u << 10;  // below this the flush region dominates
constexpr std::size_t kMaxBuffer = 1u << 30;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void add_error(Settings& s, const std::string& line) {
  s.errors += line;
  s.errors += '\n';
}

// A time such as "10ms" (a number, then the unit s, ms or us) in ns; -1 when `value` is no such
// time or its unit is not one of `units`.
double time_ns(const std::string& value, std::initializer_list<std::string_view> units) {
  char* end = nullptr;
  const double number = std::strtod(value.c_str(), &end);
  const std::string_view unit = end;
  if (end == value.c_str() || std::find(units.begin(), units.end(), unit) == units.end()) return -1;
  return unit == "s" ? number * 1e9 : unit == "ms" ? number * 1e6 : number * 1e3;
}

std::string group_list() {
  std::string out;
  for (std::size_t i = 0; i < static_cast<std::size_t>(Group::Count); ++i) {
    if (i) out += ", ";
    out += kGroupNames[i];
  }
  return out;
}

// Every MPITRACE_* variable anything in the project reads: the runtime's settings, the
// launcher's and scripts/setup's (CI exports those into the ranks' environment too).
constexpr const char* kKnownVariables[] = {
    "MPITRACE_ENABLED",         "MPITRACE_PERUSE_EVENTS",  "MPITRACE_OUTPUT",
    "MPITRACE_BUFFER_SIZE",     "MPITRACE_GROUPS",         "MPITRACE_MPIRUN",
    "MPITRACE_CLOCK",           "MPITRACE_OMPI_PREFIX",    "MPITRACE_OMPI_TARBALL",
    "MPITRACE_BUILD_DIR",       "MPITRACE_SETUP_SKIP_APT", "MPITRACE_PVARS",
    "MPITRACE_PVAR_READ",       "MPITRACE_CVARS",          "MPITRACE_OTF2_COMMS",
    "MPITRACE_SAMPLING",        "MPITRACE_MAX_SIZE",       "MPITRACE_SAMPLING_CLOCK",
    "MPITRACE_BUFFERS",         "MPITRACE_WRITEBACK",      "MPITRACE_MODE",
    "MPITRACE_FOLD_POLLS",      "MPITRACE_RANKS",          "MPITRACE_DEMO_NO_SETUP",
    "MPITRACE_PARAVER_TARBALL", "MPITRACE_PARAVER_PREFIX", "MPITRACE_PIPIT_TARBALL",
    "MPITRACE_SPAWN_DIRECTORY",  // set by a traced parent for its spawned children (lib/spawn.hpp)
};

}  // namespace

std::string unknown_variables(const char* const* environment) {
  std::string out;
  constexpr std::string_view prefix = "MPITRACE_";
  for (; environment && *environment; ++environment) {
    const std::string_view entry = *environment;
    if (entry.substr(0, prefix.size()) != prefix) continue;
    const std::string_view name = entry.substr(0, entry.find('='));
    const char* closest = nullptr;
    std::size_t best = 4;  // beyond three edits a suggestion is a guess
    bool known = false;
    for (const char* k : kKnownVariables) {
      const std::size_t d = edit_distance(name, k);
      if (d == 0 && name == k) known = true;
      if (d < best) best = d, closest = k;
    }
    if (known) continue;
    out += std::string(name) + " is not a perusetrace setting and is ignored";
    if (closest)
      out += std::string("; did you mean ") + closest + "?";
    else
      out +=
          ". Settings: MPITRACE_ENABLED, MPITRACE_PERUSE_EVENTS, MPITRACE_OUTPUT, "
          "MPITRACE_BUFFER_SIZE, MPITRACE_GROUPS (docs/settings.md).";
    out += '\n';
  }
  return out;
}

bool parse_size(const std::string& text, std::size_t& out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE) return false;
  std::string suffix = lower(end);
  unsigned shift = 0;
  if (suffix == "k" || suffix == "kb" || suffix == "kib")
    shift = 10;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib")
    shift = 20;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib")
    shift = 30;
  else if (suffix == "t" || suffix == "tb" || suffix == "tib")
    shift = 40;
  else if (!suffix.empty() && suffix != "b")
    return false;
  if (value > (~0ull >> shift)) return false;
  out = static_cast<std::size_t>(value << shift);
  return true;
}

std::uint32_t default_group_mask() {
  std::uint32_t mask = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(Group::Count); ++i) mask |= 1u << i;
  // MPI_Wtime/MPI_Wtick are the program's own clock, called in tight loops: off by default.
  return mask & ~(1u << static_cast<unsigned>(Group::timer));
}

bool parse_groups(const std::string& text, std::uint32_t& mask, std::string& error) {
  const std::string value = lower(text);
  if (value.empty()) {
    error =
        "MPITRACE_GROUPS is set but empty. Unset it for the default groups. Allowed: all, "
        "default, or a comma-separated list of " +
        group_list() + ".";
    return false;
  }
  if (value == "all") {
    mask = default_group_mask() | 1u << static_cast<unsigned>(Group::timer);
    return true;
  }
  if (value == "default") {
    mask = default_group_mask();
    return true;
  }
  std::uint32_t result = 0;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    const std::string name = value.substr(start, comma - start);
    std::size_t i = 0;
    while (i < static_cast<std::size_t>(Group::Count) && name != kGroupNames[i]) ++i;
    if (i == static_cast<std::size_t>(Group::Count)) {
      error = "MPITRACE_GROUPS: unknown group '" + name + "' in '" + text +
              "'. Allowed: all, default, or a comma-separated list of " + group_list() + ".";
      return false;
    }
    result |= 1u << i;
    start = comma + 1;
  }
  mask = result;
  return true;
}

Settings read_settings(const Getenv& getenv) {
  Settings s;
  s.peruse_events = default_events();
  s.group_mask = default_group_mask();

  if (const char* v = getenv("MPITRACE_ENABLED")) {
    const std::string value = lower(v);
    if (value == "1" || value == "yes" || value == "on" || value == "true") {
      s.enabled = true;
    } else if (value == "0" || value == "no" || value == "off" || value == "false") {
      s.enabled = false;
    } else {
      add_error(s, "MPITRACE_ENABLED='" + std::string(v) +
                       "' is not a switch. Allowed: 1, yes, on, true (trace) or 0, no, off, "
                       "false (run untraced).");
    }
  }
  if (const char* v = getenv("MPITRACE_PERUSE_EVENTS")) {
    EventSelection selection = parse_event_list(v);
    if (selection.ok()) {
      s.peruse_events = selection.events;
      s.peruse_events_set = true;
    } else {
      add_error(s, selection.error);
    }
  }
  if (const char* v = getenv("MPITRACE_OUTPUT")) {
    if (*v == '\0') {
      add_error(s,
                "MPITRACE_OUTPUT is set but empty. Unset it for <program>-trace in the "
                "working directory, or give a directory path.");
    } else {
      s.output = v;
    }
  }
  if (const char* v = getenv("MPITRACE_BUFFER_SIZE")) {
    std::size_t bytes = 0;
    if (!parse_size(v, bytes) || bytes < kMinBuffer || bytes > kMaxBuffer) {
      add_error(s, "MPITRACE_BUFFER_SIZE='" + std::string(v) +
                       "' is not a buffer size. Allowed: 64K to 1G per thread, as bytes or with "
                       "K, M, G (e.g. 8M, the default).");
    } else {
      s.buffer_bytes = bytes;
    }
  }
  if (const char* v = getenv("MPITRACE_MAX_SIZE")) {
    const std::string value = lower(v);
    std::size_t bytes = 0;
    if (value == "auto") {
      s.max_size_auto = true;
    } else if (value == "off" || value == "0") {
      s.max_size_auto = false;
      s.max_journal_bytes = 0;
    } else if (parse_size(value, bytes) && bytes >= (1u << 20)) {
      s.max_size_auto = false;
      s.max_journal_bytes = bytes;
    } else {
      add_error(s, "MPITRACE_MAX_SIZE='" + std::string(v) +
                       "' is not a size limit. Allowed: auto (the default: each rank's share of "
                       "40% of the free space), off, or 1M and more per rank with K, M, G, T "
                       "(e.g. 20G).");
    }
  }
  if (const char* v = getenv("MPITRACE_GROUPS")) {
    std::string error;
    std::uint32_t mask = 0;
    if (parse_groups(v, mask, error)) {
      s.group_mask = mask;
    } else {
      add_error(s, error);
    }
  }
  if (const char* v = getenv("MPITRACE_PVARS")) {
    const std::string value = v;
    if (lower(value) == "none" || value.empty()) {
      s.pvars.clear();
    } else {
      s.pvars = split_list(value);
      if (s.pvars.size() == 1 && lower(s.pvars[0]) == "all") s.pvars = {"*"};
    }
  }
  // A period in ns: 0 for one of the words `off`, else a time in one of `units` from `min_ns` to
  // `max_ns`; anything else is an error saying the value is not `what`.
  auto period = [&](const char* variable, std::initializer_list<std::string_view> off,
                    std::initializer_list<std::string_view> units, double min_ns, double max_ns,
                    const char* what, std::uint64_t& out) {
    const char* v = getenv(variable);
    if (v == nullptr) return;
    const std::string value = lower(v);
    const double ns = time_ns(value, units);
    if (std::find(off.begin(), off.end(), value) != off.end())
      out = 0;
    else if (ns >= min_ns && ns <= max_ns)
      out = static_cast<std::uint64_t>(ns);
    else
      add_error(s, std::string(variable) + "='" + v + "' is not " + what);
  };
  period("MPITRACE_PVAR_READ", {"call"}, {"ms"}, 1e3, 3.6e12,
         "a time to read MPI_T variables. Allowed: call (at the start and end of every traced "
         "MPI call) or a period such as 10ms (at the first MPI call after it).",
         s.pvar_period_ns);
  period("MPITRACE_SAMPLING", {"off", "0"}, {"s", "ms", "us"}, 100e3, 1e9,
         "a sampling period. Allowed: off, or 100us to 1s with a unit (us, ms, s), e.g. 1ms "
         "(1 kHz); faster sampling would cost more than the states it measures.",
         s.sampling_period_ns);
  period("MPITRACE_WRITEBACK", {"off", "0"}, {"s", "ms"}, 100e6, 3.6e12,
         "a writeback period. Allowed: off (the kernel writes the journal back when it will), "
         "or 100ms to 3600s with a unit (ms, s), e.g. 5s: the records committed are on the "
         "trace directory's storage at most that long after.",
         s.writeback_period_ns);
  if (const char* v = getenv("MPITRACE_SAMPLING_CLOCK")) {
    const std::string value = lower(v);
    if (value == "wall")
      s.sampling_wall_clock = true;
    else if (value != "cpu")
      add_error(s, "MPITRACE_SAMPLING_CLOCK='" + std::string(v) +
                       "' is not a sampling clock. Allowed: cpu (a sample per period of the "
                       "thread's CPU time, blocked time from timestamps; the default) or wall (a "
                       "signal every period, running or not).");
  }
  if (const char* v = getenv("MPITRACE_BUFFERS")) {
    const std::string value = lower(v);
    if (value == "memory")
      s.buffers_in_memory = true;
    else if (value != "file")
      add_error(s, "MPITRACE_BUFFERS='" + std::string(v) +
                       "' is not a place for the buffers. Allowed: file (mapped from the "
                       "journal: a killed rank keeps every record; the default) or memory (the "
                       "process's own: records not yet written are lost with a SIGKILL).");
  }
  if (const char* v = getenv("MPITRACE_FOLD_POLLS")) {
    const std::string value = lower(v);
    if (value == "off")
      s.fold_polls = false;
    else if (value != "on")
      add_error(s, "MPITRACE_FOLD_POLLS='" + std::string(v) +
                       "' is not a choice. Allowed: on (unsuccessful tests and probes in a row "
                       "are one call with their count; the default) or off (every call its own).");
  }
  if (const char* v = getenv("MPITRACE_MODE")) {
    const std::string value = lower(v);
    if (value == "sample") {
      s.sample_only = true;
    } else if (value != "trace") {
      add_error(s, "MPITRACE_MODE='" + std::string(v) +
                       "' is not a mode. Allowed: trace (every call, message and Peruse event; "
                       "the default) or sample (the sampler's MPI states and call stacks only).");
    }
  }
  if (const char* v = getenv("MPITRACE_RANKS")) {
    bool ok = true;
    const std::vector<std::string> items = split_list(v);
    for (const std::string& item : items) {
      char* end = nullptr;
      const long first = std::strtol(item.c_str(), &end, 10);
      long last = first;
      if (end != item.c_str() && *end == '-') {
        const char* rest = end + 1;
        last = std::strtol(rest, &end, 10);
        ok = ok && end != rest;
      }
      ok = ok && end != item.c_str() && *end == '\0' && first >= 0 && last >= first &&
           last < (1L << 30);
      if (ok) s.ranks.emplace_back(static_cast<int>(first), static_cast<int>(last));
    }
    if (!ok || items.empty()) {
      s.ranks.clear();
      add_error(s, "MPITRACE_RANKS='" + std::string(v) +
                       "' is not a list of ranks. Allowed: ranks and ranges separated by commas, "
                       "e.g. 0,4-7.");
    }
  }
  if (const char* v = getenv("MPITRACE_CVARS")) {
    for (const std::string& item : split_list(v)) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        add_error(s, "MPITRACE_CVARS item '" + item +
                         "' is not NAME=VALUE. Give control variables as "
                         "name=value,name=value (`perusetrace mpit` lists them).");
      } else {
        s.cvars.emplace_back(item.substr(0, eq), item.substr(eq + 1));
      }
    }
  }
  if (const char* v = getenv("MPITRACE_CLOCK")) {
    const std::string value = lower(v);
    if (value == "auto") {
      s.clock = ClockChoice::Auto;
    } else if (value == "tsc") {
      s.clock = ClockChoice::Tsc;
    } else if (value == "monotonic") {
      s.clock = ClockChoice::Monotonic;
    } else {
      add_error(s, "MPITRACE_CLOCK='" + std::string(v) +
                       "' is not a clock. Allowed: auto (the default: the CPU's time-stamp "
                       "counter where it is invariant, else CLOCK_MONOTONIC), tsc, monotonic.");
    }
  }
  if (const char* v = getenv("MPITRACE_OTF2_COMMS")) {
    const std::string value = lower(v);
    if (value == "otf2" || value == "vite") {
      s.vite_comms = value == "vite";
    } else {
      add_error(s, "MPITRACE_OTF2_COMMS='" + std::string(v) +
                       "' is not a communicator layout. Allowed: otf2 (the default, as the OTF2 "
                       "standard says), vite (for ViTE 1.2, which misplaces messages otherwise).");
    }
  }
  if (s.sample_only && s.sampling_period_ns == 0) {
    const char* v = getenv("MPITRACE_SAMPLING");
    if (v != nullptr && (lower(v) == "off" || std::string(v) == "0"))
      add_error(s,
                "MPITRACE_MODE=sample with MPITRACE_SAMPLING=off would record nothing: give a "
                "sampling period (100us to 1s), or leave MPITRACE_SAMPLING unset for 1ms.");
    else
      s.sampling_period_ns = 1'000'000;
  }
  return s;
}

namespace {
std::string period_text(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%gms", static_cast<double>(ns) / 1e6);
  return text;
}
std::string ranks_text(const std::vector<std::pair<int, int>>& ranks) {
  std::string out;
  for (const auto& [first, last] : ranks)
    out += (out.empty() ? "" : ",") + std::to_string(first) +
           (last != first ? "-" + std::to_string(last) : std::string());
  return out;
}
std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}
}  // namespace

bool rank_selected(const Settings& s, int rank) {
  if (s.ranks.empty()) return true;
  for (const auto& [first, last] : s.ranks)
    if (rank >= first && rank <= last) return true;
  return false;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string describe(const Settings& s) {
  std::string groups;
  for (std::size_t i = 0; i < static_cast<std::size_t>(Group::Count); ++i) {
    if (!(s.group_mask >> i & 1u)) continue;
    if (!groups.empty()) groups += ',';
    groups += kGroupNames[i];
  }
  return "MPITRACE_PERUSE_EVENTS=" + format_event_list(s.peruse_events) +
         " MPITRACE_GROUPS=" + groups + " MPITRACE_BUFFER_SIZE=" + std::to_string(s.buffer_bytes) +
         " MPITRACE_OTF2_COMMS=" + (s.vite_comms ? "vite" : "otf2") + " MPITRACE_MAX_SIZE=" +
         (s.max_size_auto            ? std::string("auto")
          : s.max_journal_bytes == 0 ? std::string("off")
                                     : std::to_string(s.max_journal_bytes)) +
         (s.sampling_period_ns == 0
              ? std::string()
              : " MPITRACE_SAMPLING=" + period_text(s.sampling_period_ns) +
                    " MPITRACE_SAMPLING_CLOCK=" + (s.sampling_wall_clock ? "wall" : "cpu")) +
         (s.sample_only ? " MPITRACE_MODE=sample" : "") +
         (s.buffers_in_memory ? " MPITRACE_BUFFERS=memory" : "") +
         (s.fold_polls ? " MPITRACE_FOLD_POLLS=on" : " MPITRACE_FOLD_POLLS=off") +
         (s.writeback_period_ns == 0
              ? std::string()
              : " MPITRACE_WRITEBACK=" + period_text(s.writeback_period_ns)) +
         (s.ranks.empty() ? "" : " MPITRACE_RANKS=" + ranks_text(s.ranks)) +
         (s.pvars.empty()
              ? std::string()
              : " MPITRACE_PVARS=" + joined(s.pvars) + " MPITRACE_PVAR_READ=" +
                    (s.pvar_period_ns == 0 ? std::string("call") : period_text(s.pvar_period_ns)));
}

}  // namespace perusetrace
