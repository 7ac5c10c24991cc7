// The wait states of a run (../docs/report.md, "Wait states"): time processes spent inside MPI
// calls that they would not have spent had another process reached its matching call in time,
// each nanosecond charged to one leaf pattern, and the delays that caused them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/stats.hpp"

namespace perusetrace::report {

// The leaf patterns. A call's waiting time goes to exactly one of them.
enum class WaitPattern : std::uint8_t {
  LateSender,
  LateSenderWrongOrder,
  LateReceiver,
  WaitAtBarrier,
  BarrierCompletion,
  WaitAtNxN,
  NxNCompletion,
  LateBroadcast,
  EarlyReduce,
  EarlyScan,
  WaitAtFence,
  LatePost,
  EarlyWait,
  LockContention,
  ProgressStall,
};
inline constexpr std::size_t kWaitPatterns = 15;

struct WaitPatternInfo {
  const char* key;       // JSON and --check name
  const char* title;     // text heading
  const char* measures;  // one sentence: what it measures and on which rank the time is lost
};

// In WaitPattern's order.
inline constexpr std::array<WaitPatternInfo, kWaitPatterns> kWaitPatternInfo = {{
    {"late_sender", "Late sender",
     "a receive (or the Wait/Test completing it) entered before the matching send was entered: "
     "the receiver's time from its entry to the send's entry"},
    {"late_sender_wrong_order", "Late sender, wrong order",
     "a late sender while another message to the same receiver had arrived first and waited to "
     "be received (Peruse: it was in the unexpected queue when the receive was entered; without "
     "those events: it was sent before): the receiver's time, as for late sender"},
    {"late_receiver", "Late receiver",
     "a send that had to wait for its receive (synchronous, rendezvous, or its Wait) entered "
     "before the receive was posted and still running when it was: the sender's time from its "
     "entry to the receive's posting"},
    {"wait_at_barrier", "Wait at barrier",
     "a barrier entered before the last member entered it: each member's time from its entry to "
     "the last entry"},
    {"barrier_completion", "Barrier completion",
     "time in a barrier after the first member had left it"},
    {"wait_at_nxn", "Wait at N x N",
     "an all-to-all collective (Allreduce, Allgather, Alltoall, Reduce_scatter...) entered before "
     "the last member entered it: each member's time from its entry to the last entry"},
    {"nxn_completion", "N x N completion",
     "time in an all-to-all collective after the first member had left it"},
    {"late_broadcast", "Late broadcast",
     "a one-to-all collective (Bcast, Scatter) entered by a non-root before its root: the "
     "non-root's time from its entry to the root's entry"},
    {"early_reduce", "Early reduce",
     "an all-to-one collective (Reduce, Gather) entered by its root before any other member: the "
     "root's time from its entry to the first other member's entry"},
    {"early_scan", "Early scan",
     "a prefix collective (Scan, Exscan) entered before a lower rank entered it: the time from "
     "its entry to the latest lower rank's entry"},
    {"wait_at_fence", "Wait at fence",
     "an MPI_Win_fence entered before the last member of the window's communicator entered it: "
     "each member's time from its entry to the last entry"},
    {"late_post", "Late post",
     "an access epoch (MPI_Win_start, or the MPI_Win_complete it blocked in) begun before the "
     "target posted its exposure epoch (MPI_Win_post): the origin's time from its entry to the "
     "post's entry"},
    {"early_wait", "Early wait",
     "an MPI_Win_wait entered before an origin of the exposure epoch entered its MPI_Win_complete: "
     "the target's time from its entry to the last such entry"},
    {"lock_contention", "Lock contention",
     "an MPI_Win_lock asked for while another origin that had asked first held a conflicting "
     "lock on the same target: the origin's time in its MPI_Win_lock and MPI_Win_unlock (where "
     "a lazy lock is acquired) until that lock was released"},
    {"progress_stall", "Progress stall",
     "a message whose transfer had begun (a receive: its first fragment; a send: posted while "
     "its receive was posted) stopped between two of its transfer events while the process at "
     "the other end computed outside MPI, and went on only after that process entered MPI again "
     "(no asynchronous progress): the waiting process's time in its call from the stop to that "
     "entry"},
}};

inline const WaitPatternInfo& info(WaitPattern p) {
  return kWaitPatternInfo[static_cast<std::size_t>(p)];
}

// One wait: `lost` ns on `rank` in `function`, because `late` (a world rank) came late.
struct WaitCase {
  WaitPattern pattern = WaitPattern::LateSender;
  std::uint64_t lost = 0;
  std::uint64_t time = 0;  // the waiting call's entry, ns since the trace start
  std::uint32_t rank = 0;  // where the time was lost
  std::int32_t late = -1;  // the rank that came late
  std::string function;    // the MPI call that waited
  std::int32_t tag = -1;   // point-to-point: the message's tag (its real one for wildcards)
  std::uint64_t bytes = 0;
  std::string cause;  // what the late rank was doing meanwhile (its region, or its MPI call)
};

struct WaitPatternStat {
  std::uint64_t count = 0;                         // calls that waited
  std::uint64_t total = 0;                         // ns
  std::vector<std::uint64_t> ranks;                // ns lost, by world rank
  std::map<std::string, std::uint64_t> functions;  // ns lost, by MPI function
  std::map<std::pair<std::int32_t, std::uint32_t>, std::uint64_t> pairs;  // (late, waiter) -> ns
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> causes;  // as WaitStates::causes
  std::uint64_t uncaused = 0;  // ns whose cause is unknown (completion; before the history)
  Worst<WaitCase> worst{5};
};

// A delay: what one rank did while others waited for it, and the waiting it caused.
struct DelayCost {
  std::uint64_t direct = 0;      // waiting it caused itself
  std::uint64_t propagated = 0;  // waiting of ranks that waited for ranks that waited for it...
  std::uint64_t cases = 0;
};

// One stretch of the critical path, summed: a rank's time outside MPI in a region, or in an MPI
// function.
struct PathShare {
  std::uint64_t ns = 0;
  std::uint64_t mean_ns = 0;  // the same activity's time averaged over all ranks
};

struct WaitStates {
  bool present = false;  // the archive has MPI calls
  std::array<WaitPatternStat, kWaitPatterns> patterns{};
  std::vector<std::uint64_t> rank_wait_ns;  // the leaves summed, by world rank
  std::uint64_t total_ns = 0;
  std::uint64_t rank_time_ns = 0;  // trace length times ranks: what shares are of
  // Causes: (late world rank, what it was doing) -> the waiting it caused. "What it was doing"
  // is a region outside MPI (an annotation's value, a user region; "(no region)") or
  // "in MPI_X" for an MPI call that was not itself waiting.
  std::map<std::pair<std::uint32_t, std::string>, DelayCost> causes;
  // The critical path: its length and its time per activity ("rank-independent": the region
  // or "MPI_X"), and the ranks it ran on.
  std::uint64_t critical_ns = 0;
  std::map<std::string, PathShare> critical;
  std::vector<std::uint64_t> critical_ranks;  // ns of the path on each world rank
  bool critical_truncated = false;            // the path left the kept history
  std::uint64_t critical_from = 0;  // where the path (and the means it is held against) begin
};

}  // namespace perusetrace::report
