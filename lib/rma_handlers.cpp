// One-sided communication as OTF2 RMA events: windows (RmaWinCreate/Destroy inside an
// RmaCollectiveBegin/End), operations (RmaPut, RmaGet, RmaAtomic) with matching ids, their
// completions where MPI completes them, and the synchronisation calls (fences as RMA
// collectives, PSCW as RmaGroupSync, locks, flushes as RmaSync). What Score-P records for the
// same calls, and where this differs: docs/otf2-mapping.md, "One-sided communication".
//
// Per operation: a lock-free window lookup, at most one atomic counter increment and one
// compare-and-swap; nothing is allocated and no lock is taken.
#include <atomic>

#include "lib/comm_registry.hpp"
#include "lib/handle_key.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/rma_group_registry.hpp"
#include "lib/window_registry.hpp"

namespace perusetrace {

namespace {

std::atomic<std::uint64_t> g_next_matching{1};

std::uint64_t next_matching() noexcept {
  return g_next_matching.fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t bytes_of(int count, MPI_Datatype type) noexcept {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(type, &size);
  return size > 0 ? static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size) : 0;
}

Record rma(RecordKind kind, std::uint32_t window, std::int32_t peer = 0, std::int32_t tag = 0,
           std::uint64_t bytes = 0, std::uint64_t matching = 0, std::uint64_t aux = 0) noexcept {
  return Record{0, kind, 0, 0, window, peer, tag, bytes, matching, aux};
}

std::uint64_t request_state(std::uint64_t matching, bool combined) noexcept {
  return matching << 3 | (combined ? 4u : 0u);
}

// A free request slot of `w` for an operation to `target` in `state`; -1 when all are taken.
int claim_request_slot(WindowEntry& w, std::int32_t target, std::uint64_t state) noexcept {
  constexpr int n = WindowEntry::kRequestSlots;
  const int start = static_cast<int>((state >> 3) % n);
  for (int k = 0; k < n; ++k) {
    RmaRequestSlot& s = w.requests[(start + k) % n];
    std::uint64_t expected = 0;
    if (!s.state.compare_exchange_strong(expected, kRmaSlotBusy, std::memory_order_acquire))
      continue;
    s.target.store(target, std::memory_order_relaxed);
    s.state.store(state, std::memory_order_release);
    w.requests_held.fetch_add(1, std::memory_order_relaxed);
    return (start + k) % n;
  }
  return -1;
}

// The matching id the next operation of `cls` to `target` shares with the others since the last
// synchronisation that completed them.
std::uint64_t shared_matching(WindowEntry& w, std::int32_t target, unsigned cls) noexcept {
  std::atomic<std::uint64_t>& slot = w.targets[target].pending[cls];
  std::uint64_t held = slot.load(std::memory_order_acquire);
  for (;;) {
    if (held != 0 && (held & 1u) == 0) return held >> 1;
    const std::uint64_t id = next_matching();
    if (slot.compare_exchange_weak(held, id << 1, std::memory_order_acq_rel)) {
      if (held == 0) {
        w.pending.fetch_add(1, std::memory_order_relaxed);
      } else {
        // Completed locally (MPI_Win_flush_local) but not yet at the target: it keeps its id
        // until a synchronisation completes it there.
        claim_request_slot(w, target, request_state(held >> 1, false) | 2u);
      }
      return id;
    }
  }
}

// How a synchronisation completes the operations it covers.
enum class Completing {
  Full,   // at the origin and at the target: fence, unlock, flush
  Local,  // at the origin: flush_local (the fetching operations are then complete everywhere)
  Epoch,  // MPI_Win_complete: at the origin, and the fetching ones at the target; the others
          // complete at their target in its MPI_Win_wait, which the origin cannot see
};

class Completions {
 public:
  Completions(Call& call, std::uint32_t window) noexcept : call_(call), window_(window) {}
  void local(std::uint64_t id) noexcept {
    call_.at_leave(rma(RecordKind::RmaOpCompleteNonBlocking, window_, 0, 0, 0, id));
  }
  void remote(std::uint64_t id) noexcept {
    call_.at_leave(rma(RecordKind::RmaOpCompleteRemote, window_, 0, 0, 0, id));
  }

 private:
  Call& call_;
  std::uint32_t window_;
};

// Completes, as `how` says, the operations of `w` to `target` (kRmaAllTargets: to any).
void complete(Call& call, WindowEntry& w, std::int32_t target, Completing how) noexcept {
  if (target >= w.size) return;  // not a rank of the window: MPI says so itself
  Completions done(call, w.local_id);
  if (w.pending.load(std::memory_order_acquire) > 0) {
    const int first = target < 0 ? 0 : target;
    const int last = target < 0 ? w.size : target + 1;
    for (int t = first; t < last; ++t) {
      for (unsigned cls = 0; cls < kRmaClasses; ++cls) {
        std::atomic<std::uint64_t>& slot = w.targets[t].pending[cls];
        std::uint64_t held = slot.load(std::memory_order_acquire);
        if (held == 0) continue;
        if (how == Completing::Local && cls == kRmaSeparate) {
          if ((held & 1u) == 0 && slot.compare_exchange_strong(held, held | 1u))
            done.local(held >> 1);
          continue;
        }
        held = slot.exchange(0, std::memory_order_acq_rel);
        if (held == 0) continue;
        w.pending.fetch_sub(1, std::memory_order_relaxed);
        if ((held & 1u) == 0) done.local(held >> 1);
        if (how == Completing::Full || cls == kRmaCombined) done.remote(held >> 1);
      }
    }
  }
  if (w.requests_held.load(std::memory_order_acquire) == 0) return;
  for (RmaRequestSlot& s : w.requests) {
    std::uint64_t state = s.state.load(std::memory_order_acquire);
    if (state <= kRmaSlotBusy) continue;
    if (target >= 0 && s.target.load(std::memory_order_relaxed) != target) continue;
    const bool combined = (state & 4u) != 0, was_local = (state & 2u) != 0;
    if (how == Completing::Local && !combined) {
      if (!was_local && s.state.compare_exchange_strong(state, state | 2u)) done.local(state >> 3);
      continue;
    }
    if (!s.state.compare_exchange_strong(state, 0)) continue;  // its Wait was first
    w.requests_held.fetch_sub(1, std::memory_order_relaxed);
    if (!was_local) done.local(state >> 3);
    if (how == Completing::Full || combined) done.remote(state >> 3);
  }
}

}  // namespace

void on_win_create_begin(Call& call) noexcept {
  if (call.traced()) call.at_enter(rma(RecordKind::RmaCollectiveBegin, 0));
}

void on_win_created(Call& call, int rc, MPI_Comm comm, MPI_Win win, bool allocates) noexcept {
  if (rc != MPI_SUCCESS || win == MPI_WIN_NULL || g_state.load() != TraceState::On) return;
  const WindowEntry* w =
      g_windows.add(win, comm, g_comms.id_of(comm),
                    kMpiFunctions[static_cast<std::size_t>(call.fn())].name, allocates);
  if (w == nullptr || !call.traced()) return;
  call.at_leave(rma(RecordKind::RmaWinCreate, w->local_id));
  const RmaCollective what = allocates ? RmaCollective::CreateAllocate : RmaCollective::Create;
  call.at_leave(rma(RecordKind::RmaCollectiveEnd, w->local_id, kRmaSyncProcess,
                    static_cast<std::int32_t>(what)));
}

WindowEntry* on_win_free_begin(Call& call, MPI_Win win) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return nullptr;
  g_windows.remove(win);  // before the MPI can hand the handle to a new window
  if (call.traced()) call.at_enter(rma(RecordKind::RmaCollectiveBegin, w->local_id));
  return w;
}

void on_win_freed(Call& call, int, WindowEntry* w) noexcept {
  if (w == nullptr || !call.traced()) return;
  call.at_leave(rma(RecordKind::RmaWinDestroy, w->local_id));
  const RmaCollective what =
      w->allocated ? RmaCollective::DestroyDeallocate : RmaCollective::Destroy;
  call.at_leave(rma(RecordKind::RmaCollectiveEnd, w->local_id, kRmaSyncProcess,
                    static_cast<std::int32_t>(what)));
}

void on_win_set_name(const Call&, int rc, MPI_Win win, const char* name) noexcept {
  if (rc == MPI_SUCCESS) g_windows.set_name(win, name);
}

RmaIssue on_rma_op(Call& call, RmaOp op, MPI_Win win, int target, int sent_count,
                   MPI_Datatype sent_type, int received_count, MPI_Datatype received_type,
                   bool request_based) noexcept {
  RmaIssue issue;
  if (target == MPI_PROC_NULL) return issue;  // moves nothing
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr || target < 0 || target >= w->size) return issue;
  issue.combined = op == RmaOp::Get || op == RmaOp::GetAccumulate || op == RmaOp::FetchAndOp ||
                   op == RmaOp::CompareAndSwap;
  if (request_based) {
    issue.matching = next_matching();
    issue.slot = claim_request_slot(*w, target, request_state(issue.matching, issue.combined));
  } else {
    issue.matching = shared_matching(*w, target, issue.combined ? kRmaCombined : kRmaSeparate);
  }
  issue.window = w;
  issue.target = target;
  const std::uint64_t sent = bytes_of(sent_count, sent_type);
  const std::uint64_t received = bytes_of(received_count, received_type);
  switch (op) {
    case RmaOp::Put:
      call.at_enter(rma(RecordKind::RmaPut, w->local_id, target, 0, sent, issue.matching));
      break;
    case RmaOp::Get:
      call.at_enter(rma(RecordKind::RmaGet, w->local_id, target, 0, received, issue.matching));
      break;
    default: {
      const RmaAtomicKind kind = op == RmaOp::Accumulate       ? RmaAtomicKind::Accumulate
                                 : op == RmaOp::CompareAndSwap ? RmaAtomicKind::CompareAndSwap
                                                               : RmaAtomicKind::FetchAndAccumulate;
      call.at_enter(rma(RecordKind::RmaAtomic, w->local_id, target, static_cast<std::int32_t>(kind),
                        sent, issue.matching, received));
      break;
    }
  }
  return issue;
}

namespace {
// The operation's local completion, and its remote one if it fetches, now (in `call`).
void complete_now(Call& call, const RmaIssue& issue) noexcept {
  Completions done(call, issue.window->local_id);
  if (issue.slot >= 0) {
    std::uint64_t state = request_state(issue.matching, issue.combined);
    RmaRequestSlot& s = issue.window->requests[issue.slot];
    if (!s.state.compare_exchange_strong(state, issue.combined ? 0 : state | 2u)) return;
    if (issue.combined) issue.window->requests_held.fetch_sub(1, std::memory_order_relaxed);
  }
  done.local(issue.matching);
  if (issue.combined) done.remote(issue.matching);
}
}  // namespace

void on_rma_request(Call& call, int rc, const RmaIssue& issue,
                    const MPI_Request* request) noexcept {
  if (issue.window == nullptr) return;
  if (rc != MPI_SUCCESS || request == nullptr || *request == MPI_REQUEST_NULL) {
    if (issue.slot >= 0 && issue.window->requests[issue.slot].state.exchange(0) > kRmaSlotBusy)
      issue.window->requests_held.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  const std::uintptr_t key = handle_key(*request);
  RequestSlot* slot = g_requests.find_or_claim(key);
  if (slot == nullptr) return;
  if (slot->shared.load(std::memory_order_relaxed) || !slot->claim()) {
    // Another pending request has the same handle: the MPI hands out one shared, already
    // complete request (Open MPI's osc/sm does, for every request-based operation), so this
    // operation is complete at the origin now.
    slot->shared.store(true, std::memory_order_relaxed);
    complete_now(call, issue);
    return;
  }
  // A one-sided request's slot: its window's local id in `comm`, target in `peer`, matching id
  // in `bytes`, the window's entry in `received`, its request slot in `tag` and whether it is a
  // fetching operation in `peer_offset`.
  RequestInfo info;
  info.kind = RequestKind::Rma;
  info.comm = issue.window->local_id;
  info.peer = issue.target;
  info.tag = issue.slot;
  info.bytes = issue.matching;
  info.received = reinterpret_cast<std::uintptr_t>(issue.window);
  info.peer_offset = issue.combined ? 1 : 0;
  g_requests.activate(key);
  slot->publish(info);
}

void rma_request_done(Call& call, const RequestInfo& info, bool tested) noexcept {
  Completions done(call, info.comm);
  if (tested) {
    call.at_leave(rma(RecordKind::RmaOpTest, info.comm, 0, 0, 0, info.bytes));
    return;
  }
  auto* w = reinterpret_cast<WindowEntry*>(static_cast<std::uintptr_t>(info.received));
  const bool combined = info.peer_offset != 0;
  if (w != nullptr && info.tag >= 0 && info.tag < WindowEntry::kRequestSlots) {
    std::uint64_t state = request_state(info.bytes, combined);
    // A synchronisation may have completed it before this Wait: then it is done already.
    if (!w->requests[info.tag].state.compare_exchange_strong(state, combined ? 0 : state | 2u))
      return;
    if (combined) w->requests_held.fetch_sub(1, std::memory_order_relaxed);
  }
  done.local(info.bytes);
  if (combined) done.remote(info.bytes);
}

void on_win_fence_begin(Call& call, MPI_Win win) noexcept {
  if (const WindowEntry* w = g_windows.find(win))
    call.at_enter(rma(RecordKind::RmaCollectiveBegin, w->local_id));
}

void on_win_fence(Call& call, int, MPI_Win win) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return;
  complete(call, *w, kRmaAllTargets, Completing::Full);
  call.at_leave(rma(RecordKind::RmaCollectiveEnd, w->local_id, kRmaSyncProcess | kRmaSyncMemory,
                    static_cast<std::int32_t>(RmaCollective::Fence)));
}

namespace {
RmaLock lock_of(int lock_type) noexcept {
  return lock_type == MPI_LOCK_EXCLUSIVE ? RmaLock::Exclusive : RmaLock::Shared;
}
}  // namespace

void on_win_lock(Call& call, MPI_Win win, int target, int lock_type) noexcept {
  const WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return;
  call.at_enter(rma(RecordKind::RmaRequestLock, w->local_id, target,
                    static_cast<std::int32_t>(lock_of(lock_type))));
}

void on_win_locked(Call& call, int rc, MPI_Win win, int target, int lock_type) noexcept {
  const WindowEntry* w = g_windows.find(win);
  // MPI_Win_lock need not block until the lock is granted, except on the caller's own window:
  // only there is the lock known to be held when it returns.
  if (w == nullptr || rc != MPI_SUCCESS || target != w->rank) return;
  call.at_leave(rma(RecordKind::RmaAcquireLock, w->local_id, target,
                    static_cast<std::int32_t>(lock_of(lock_type))));
}

void on_win_unlock(Call& call, int, MPI_Win win, int target) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return;
  complete(call, *w, target, Completing::Full);
  call.at_leave(rma(RecordKind::RmaReleaseLock, w->local_id, target));
}

void on_win_flush(Call& call, int, MPI_Win win, int target, bool local) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return;
  complete(call, *w, target, local ? Completing::Local : Completing::Full);
  call.at_leave(rma(RecordKind::RmaSync, w->local_id, target));
}

void on_win_sync(Call& call, int, MPI_Win win) noexcept {
  if (const WindowEntry* w = g_windows.find(win))
    call.at_leave(rma(RecordKind::RmaSync, w->local_id, w->rank));
}

void on_win_epoch_start(Call& call, int rc, MPI_Win win, MPI_Group group, bool exposure) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr || rc != MPI_SUCCESS) return;
  const std::uint32_t id = rma_groups::id_of(group);
  (exposure ? w->exposure_group : w->access_group).store(id, std::memory_order_relaxed);
  if (id != kNoRmaGroup)
    call.at_leave(
        rma(RecordKind::RmaGroupSync, w->local_id, kRmaSyncProcess, static_cast<std::int32_t>(id)));
}

void on_win_complete(Call& call, int, MPI_Win win) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr) return;
  complete(call, *w, kRmaAllTargets, Completing::Epoch);
  const std::uint32_t id = w->access_group.exchange(kNoRmaGroup, std::memory_order_relaxed);
  if (id != kNoRmaGroup)
    call.at_leave(rma(RecordKind::RmaGroupSync, w->local_id, kRmaSyncProcess | kRmaSyncMemory,
                      static_cast<std::int32_t>(id)));
}

void on_win_wait(Call& call, int rc, MPI_Win win, bool done) noexcept {
  WindowEntry* w = g_windows.find(win);
  if (w == nullptr || rc != MPI_SUCCESS) return;
  // MPI_Win_test that finds the epoch open synchronises nothing yet (level NONE), as Score-P.
  const std::uint32_t id = done ? w->exposure_group.exchange(kNoRmaGroup)
                                : w->exposure_group.load(std::memory_order_relaxed);
  if (id != kNoRmaGroup)
    call.at_leave(rma(RecordKind::RmaGroupSync, w->local_id,
                      done ? kRmaSyncProcess | kRmaSyncMemory : 0, static_cast<std::int32_t>(id)));
}

}  // namespace perusetrace
