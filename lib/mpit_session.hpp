// MPI_T in the trace: control variables set before MPI_Init and recorded, performance variables
// read at MPI calls and written as metrics (docs/mpit.md says what is read when, and why).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/settings.hpp"
#include "otf2_writer/writer.hpp"
#include "record/clock.hpp"

namespace perusetrace::mpit {

// The MPI_Init wrapper, before PMPI_Init: starts MPI_T and sets MPITRACE_CVARS, while the MPI
// still takes settings it reads only at init. What was set, or why not, is kept for start().
void before_init();

struct SelectResult {
  std::string errors;  // names or globs that match nothing: the run stops, as for bad settings
  std::string notice;  // said once by rank 0 (what MPITRACE_CVARS did, why no PVARs are read)
};
// After MPI_Init, before anything is traced: sets the CVARs that exist only from MPI_Init on,
// and matches MPITRACE_PVARS against the MPI's PVARs.
SelectResult select(const Settings& settings);
// Tracing has begun: records the CVARs (collective: rank 0's are broadcast), allocates the
// handles of NO_OBJECT PVARs and takes their first values. `scale` converts
// MPITRACE_PVAR_READ's period into the records' ticks.
void start(const Settings& settings, int rank, const TickScale& scale);
// A communicator appeared or goes: its PVAR handles (the Peruse registration's counterpart).
void attach(MPI_Comm comm, std::uint32_t local_id, const std::vector<int>& world_ranks);
void detach(MPI_Comm comm);
// MPI_Finalize: a last read, then the handles and the session are freed and MPI_T finalised.
void stop();

// The values recorded and the control variables, for the archive's definitions.
std::vector<trace::MetricInfo> recorded_metrics();
std::string recorded_cvars();  // "NAME=VALUE\n" lines: all of them (rank 0) or those that differ
std::string cvar_settings();   // what MPITRACE_CVARS did, "NAME=VALUE: set\n" ...

// The hot path's view: whether a traced MPI call reads (0: no PVARs), and when.
inline constinit std::atomic<bool> g_reading{false};
inline constinit std::uint64_t g_period_ticks = 0;  // 0: at every call's enter and exit
inline constinit std::atomic<std::uint64_t> g_next_read{0};
// Reads every handle and records the values that changed, at the calling thread; skipped when
// another thread is reading (MPI_T's values are per process: one read serves all threads).
void read_now() noexcept;

// Called by Call (lib/mpi_handlers.hpp) around a traced MPI call.
inline void at_call_enter(std::uint64_t now) noexcept {
  if (g_period_ticks == 0) {
    read_now();
  } else if (now >= g_next_read.load(std::memory_order_relaxed)) {
    g_next_read.store(now + g_period_ticks, std::memory_order_relaxed);
    read_now();
  }
}
inline void at_call_leave() noexcept {
  if (g_period_ticks == 0) read_now();
}

}  // namespace perusetrace::mpit
