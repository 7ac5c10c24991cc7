// The tracer's settings, all from MPITRACE_* environment variables (documented in
// docs/settings.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "events/selection.hpp"
#include "record/tick_clock.hpp"

namespace perusetrace {

struct Settings {
  bool enabled = true;                  // MPITRACE_ENABLED
  EventSet peruse_events;               // MPITRACE_PERUSE_EVENTS
  bool peruse_events_set = false;       // the user asked for events explicitly
  std::string output;                   // MPITRACE_OUTPUT ("" = <program>-trace)
  std::size_t buffer_bytes = 8u << 20;  // MPITRACE_BUFFER_SIZE, per thread
  // MPITRACE_BUFFERS: "file" (the default) maps each thread's buffer from a file of the journal,
  // so that what it committed outlives a SIGKILL; "memory" keeps it in the process's memory.
  bool buffers_in_memory = false;
  // MPITRACE_WRITEBACK: every period, the committed records are written through to the trace
  // directory's storage (fdatasync), so that a node that loses power keeps them; 0: off, the
  // kernel writes them back when it will (about 30 s).
  std::uint64_t writeback_period_ns = 0;
  // MPITRACE_FOLD_POLLS: consecutive unsuccessful tests and probes of one function on a thread
  // recorded as one call with their count and time inside MPI (lib/mpi_handlers.hpp, Call).
  bool fold_polls = true;
  std::uint32_t group_mask = 0;           // MPITRACE_GROUPS
  ClockChoice clock = ClockChoice::Auto;  // MPITRACE_CLOCK
  // MPITRACE_PVARS: names and shell globs of MPI_T performance variables ("all": every one);
  // matched against the MPI's list at MPI_Init (lib/mpit_session.hpp).
  std::vector<std::string> pvars;
  // MPITRACE_PVAR_READ: "call" (at the enter and exit of every traced call, the default) or
  // "NUMBERms" (at the first call after that period): period 0 means per call.
  std::uint64_t pvar_period_ns = 0;
  // MPITRACE_CVARS=name=value,...: control variables set before MPI_Init.
  std::vector<std::pair<std::string, std::string>> cvars;
  // MPITRACE_MAX_SIZE: the bytes of records a rank's journal may hold before recording stops
  // on that rank (0: no limit); with max_size_auto, set at MPI_Init from the free space.
  std::uint64_t max_journal_bytes = 0;
  bool max_size_auto = true;
  // MPITRACE_SAMPLING: the built-in sampler's period (lib/sampler.hpp); 0: off.
  std::uint64_t sampling_period_ns = 0;
  // MPITRACE_SAMPLING_CLOCK: "cpu" (the default) counts the period in the thread's CPU time,
  // "wall" in CLOCK_MONOTONIC time (a signal every period, running or not).
  bool sampling_wall_clock = false;
  // MPITRACE_MODE=sample: samples only, no call, message or Peruse records (sampling at 1 ms
  // unless MPITRACE_SAMPLING says otherwise).
  bool sample_only = false;
  // MPITRACE_RANKS: the ranks that collect ("0,4-7"); empty: every rank.
  std::vector<std::pair<int, int>> ranks;
  bool vite_comms = false;  // MPITRACE_OTF2_COMMS=vite
  std::string errors;       // one line per bad variable; empty when all parsed
};

using Getenv = std::function<const char*(const char*)>;

// Reads every variable; a bad one adds a line to `errors` naming the variable, the value and
// what is allowed, and leaves that setting at its default.
Settings read_settings(const Getenv& getenv);

// One line per MPITRACE_* variable in `environment` (NAME=VALUE strings, null-terminated like
// environ) that nothing reads, naming the closest known variable: a misspelt setting would
// otherwise be ignored without a word. Empty when there is none.
std::string unknown_variables(const char* const* environment);

// "8M" -> 8388608; accepts a plain number of bytes or K/M/G (powers of 1024).
bool parse_size(const std::string& text, std::size_t& out);

// "all", "default" or a comma-separated list of group names (see kGroupNames).
bool parse_groups(const std::string& text, std::uint32_t& mask, std::string& error);
std::uint32_t default_group_mask();

// "a,b,,c" -> {"a", "b", "c"}: the items of a comma-separated list, empty ones dropped.
std::vector<std::string> split_list(const std::string& text);

// Whether MPITRACE_RANKS includes `rank`.
bool rank_selected(const Settings& s, int rank);

// A line for the archive's properties, so a trace says how it was taken.
std::string describe(const Settings& s);

}  // namespace perusetrace
