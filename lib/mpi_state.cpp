#include "lib/mpi_state.hpp"

#include <cstring>

#include "include/perusetrace/mpi_state.h"
#include "lib/mpi_handlers.hpp"

namespace perusetrace::state {

namespace detail {
constinit thread_local ThreadState t_state __attribute__((tls_model("initial-exec"))) = {};
Activity g_waits[static_cast<std::size_t>(Fn::Count)] = {};
bool g_clock_only[static_cast<std::size_t>(Fn::Count)] = {};
std::uint64_t g_progress_window_ticks = 0;
bool g_peruse = false;
}  // namespace detail

namespace {

// Peruse events come every few tens of microseconds while MPI moves a message between two
// processes on one host (a 32 KiB fragment each, 41 us apart on average with 2 oversubscribed
// cores); a longer gap means the thread is waiting.
constexpr std::uint64_t kProgressWindowNs = 200'000;

bool starts_with(const char* name, const char* prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

Activity waits_of(const FunctionInfo& f) {
  using trace::RegionRole;
  const char* n = f.name;
  const bool nonblocking =
      starts_with(n, "MPI_I") && !starts_with(n, "MPI_Iprobe") && !starts_with(n, "MPI_Improbe");
  switch (f.role) {
    case RegionRole::Barrier:
    case RegionRole::CollOneToAll:
    case RegionRole::CollAllToOne:
    case RegionRole::CollAllToAll:
    case RegionRole::CollOther:
      return nonblocking ? Activity::None : Activity::Collective;
    case RegionRole::FileIo:
      return starts_with(n, "MPI_File_i") ? Activity::None : Activity::Io;
    case RegionRole::PointToPoint: {
      // Calls that return only when a peer has done its part, and the polls that programs loop
      // on while they wait.
      static constexpr const char* kWaiting[] = {
          "MPI_Send",   "MPI_Ssend",    "MPI_Bsend",  "MPI_Rsend", "MPI_Recv",
          "MPI_Mrecv",  "MPI_Sendrecv", "MPI_Wait",   "MPI_Test",  "MPI_Probe",
          "MPI_Mprobe", "MPI_Iprobe",   "MPI_Improbe"};
      for (const char* w : kWaiting)
        if (starts_with(n, w) && !starts_with(n, "MPI_Send_init") &&
            !starts_with(n, "MPI_Ssend_init") && !starts_with(n, "MPI_Bsend_init") &&
            !starts_with(n, "MPI_Rsend_init") && !starts_with(n, "MPI_Recv_init") &&
            !starts_with(n, "MPI_Test_cancelled"))
          return Activity::Message;
      return Activity::None;
    }
    default:
      return Activity::None;
  }
}

}  // namespace

void configure(const TickScale& scale, bool peruse) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(Fn::Count); ++i) {
    detail::g_waits[i] = waits_of(kMpiFunctions[i]);
    detail::g_clock_only[i] = kMpiFunctions[i].group == Group::timer;
  }
  detail::g_progress_window_ticks = scale.to_ticks(scale.a.ns + kProgressWindowNs) - scale.a.ticks;
  detail::g_peruse = peruse;
}

Classified classify(int mpi_depth) noexcept {
  const ThreadState s = detail::t_state;
  if (mpi_depth <= 0 || detail::g_clock_only[s.fn]) return {State::NotInMpi, Activity::None, 0};
  if (s.waits == Activity::None) return {State::Work, Activity::None, s.fn};
  // Inside a collective its messages' transfers are the collective's.
  const Activity activity =
      s.transfers > 0 && s.waits != Activity::Collective ? Activity::Transfer : s.waits;
  if (!detail::g_peruse) return {State::Stall, activity, s.fn};
  const bool recent = s.progress != 0 && now_ticks() - s.progress < detail::g_progress_window_ticks;
  return {recent ? State::Work : State::Stall, activity, s.fn};
}

static_assert(static_cast<int>(State::NotInMpi) == PERUSETRACE_NOT_IN_MPI &&
              static_cast<int>(State::Work) == PERUSETRACE_MPI_WORK &&
              static_cast<int>(State::Stall) == PERUSETRACE_MPI_STALL);
static_assert(static_cast<int>(Activity::Message) == PERUSETRACE_ACTIVITY_MESSAGE &&
              static_cast<int>(Activity::Transfer) == PERUSETRACE_ACTIVITY_TRANSFER &&
              static_cast<int>(Activity::Collective) == PERUSETRACE_ACTIVITY_COLLECTIVE &&
              static_cast<int>(Activity::Io) == PERUSETRACE_ACTIVITY_IO);

}  // namespace perusetrace::state

// The public API: found by profilers with dlsym, exported by lib/exports.map.
extern "C" __attribute__((visibility("default"))) int perusetrace_mpi_state(void*) {
  return static_cast<int>(perusetrace::state::classify(perusetrace::detail::t_mpi_depth).state);
}

extern "C" __attribute__((visibility("default"))) int perusetrace_mpi_activity(void*) {
  return static_cast<int>(perusetrace::state::classify(perusetrace::detail::t_mpi_depth).activity);
}
