// Progress stalls: Open MPI moves a message's fragments only inside MPI calls of the processes
// at both ends (ob1 has no progress thread), so a transfer that has begun halts while one end
// computes. Peruse shows the halt on the waiting side as a gap between two transfer events of
// the request; the peer's history shows that it made no MPI call during the gap and entered one
// just before the transfer went on. A PMPI-only analyzer sees a send posted before the receive
// and no wait at all.
#include <algorithm>

#include "analysis/wait_states.hpp"

namespace perusetrace::report {

namespace {

// Shorter halts are the ordinary gaps between fragments and the scheduler's noise.
constexpr std::uint64_t kMinStall = 100'000;  // ns

// The transfer table forgets requests whose end was not traced beyond this many.
constexpr std::size_t kMaxTransfers = std::size_t{1} << 20;

// Finished receives kept per rank for the sends still in flight to them.
constexpr std::size_t kFinishedKept = 64;

}  // namespace

void WaitStateAnalysis::transfer_event(std::uint32_t loc, std::uint64_t t, Transfer e,
                                       const archive::PeruseFields& f) {
  Location& l = locations_[loc];
  const std::uint64_t key = rank_key(l.rank, f.request);
  if (f.operation == 1 && l.rank < receives_open_.size()) {
    auto& open = receives_open_[l.rank];
    if (e == Transfer::Activate && f.tag >= -1) {  // the program's receives, wildcards too
      if (open.size() >= kMaxTransfers) open.clear();
      open[f.request] = {f.peer, f.tag, f.comm, t};
    } else if (e == Transfer::End || e == Transfer::Complete) {
      if (auto p = open.find(f.request); p != open.end()) {
        auto& done = receives_done_[l.rank];
        if (done.size() >= kFinishedKept) done.pop_front();
        done.push_back(p->second);
        done.back().until = t;
        open.erase(p);
      }
    }
  }
  // A send's transfer starts when it is posted (ob1 sends its first fragment then, or queues
  // it for the progress engine); a receive's with its first fragment (before it, its sender may
  // just be late).
  if (e == Transfer::Complete || (e == Transfer::Activate && f.operation != 0)) return;
  auto it = transfer_at_.find(key);
  if (it == transfer_at_.end() || e == Transfer::Activate) {
    // ob1 reports a send's first fragment (XFER_CONTINUE) before its XFER_BEGIN: whichever
    // comes first starts the transfer.
    if (e != Transfer::End && it == transfer_at_.end()) {
      if (transfer_at_.size() >= kMaxTransfers) transfer_at_.clear();
      transfer_at_.emplace(key, t);
    } else if (e == Transfer::Activate) {
      it->second = t;
    }
    return;
  }
  const std::uint64_t since = it->second;
  if (e == Transfer::End)
    transfer_at_.erase(it);
  else
    it->second = t;
  // Collectives' own messages (negative tags) wait as collectives.
  if (e == Transfer::Begin || f.peer < 0 || f.tag < 0 || l.depth == 0 || l.history.empty()) return;
  Segment& call = l.history.back();
  if (call.function == kNone ||
      defs_.regions[call.function].role == archive::RegionRole::Collective ||
      defs_.regions[call.function].role == archive::RegionRole::Barrier)
    return;
  std::uint64_t start = 0, end = 0;
  std::uint32_t entered = kNone;
  if (!without_progress(static_cast<std::uint32_t>(f.peer), since, t, start, end, entered)) return;
  // A receive's transfer has begun, so its send was posted. A send's also halts while its
  // receive is not posted, which is a late receiver: the stall begins when it was posted (by a
  // call that moved nothing, such as MPI_Irecv).
  if (f.operation == 0) {
    const std::uint64_t posted =
        receive_posted(static_cast<std::uint32_t>(f.peer), l.rank, f.tag, f.comm, start);
    if (posted >= end) return;
    start = std::max(start, posted);
  }
  const std::uint64_t from = std::max(start, call.start);
  if (end <= from || end - from < kMinStall) return;
  Stall s;
  s.from = from;
  s.to = end;
  s.late_loc = entered;
  s.c.pattern = WaitPattern::ProgressStall;
  s.c.rank = l.rank;
  s.c.late = f.peer;
  s.c.function = defs_.regions[call.function].name;
  s.c.tag = f.tag;
  s.c.bytes = f.bytes;
  l.stalls.push_back(std::move(s));
}

std::uint64_t WaitStateAnalysis::receive_posted(std::uint32_t rank, std::uint32_t sender,
                                                std::int32_t tag, std::uint32_t comm,
                                                std::uint64_t after) const {
  std::uint64_t first = kNever;
  if (rank >= receives_open_.size()) return first;
  auto consider = [&](const Posting& p) {
    if (p.comm == comm && (p.peer < 0 || p.peer == static_cast<std::int32_t>(sender)) &&
        (p.tag < 0 || p.tag == tag) && (p.until == kNever || p.until > after))
      first = std::min(first, p.since);
  };
  for (const auto& [request, p] : receives_open_[rank]) consider(p);
  for (const Posting& p : receives_done_[rank]) consider(p);
  return first;
}

bool WaitStateAnalysis::without_progress(std::uint32_t peer, std::uint64_t from,
                                         std::uint64_t until, std::uint64_t& start,
                                         std::uint64_t& end, std::uint32_t& entered) const {
  if (peer >= rank_locations_.size()) return false;
  start = from;
  end = until;
  entered = kNone;
  // The rank progressed while any of its threads was in such a call: the stretch is where
  // none was, from the last such call's end to the first entry after it.
  for (const std::uint32_t loc : rank_locations_[peer]) {
    const auto& h = locations_[loc].history;
    if (h.empty()) continue;
    if (h.front().start > from) return false;  // before the kept history: unknown
    auto it = std::upper_bound(h.begin(), h.end(), from,
                               [](std::uint64_t t, const Segment& s) { return t < s.start; });
    --it;
    for (; it != h.end() && it->start <= until; ++it) {
      if (it->function == kNone || !progresses_[it->function]) continue;
      if (it->start <= from) {  // in such a call at `from`: the stretch begins when it ends
        if (it->end == kNever || it->end >= until) return false;
        start = std::max(start, it->end);
        continue;
      }
      if (it->start < end) end = it->start, entered = loc;
      break;
    }
  }
  return entered != kNone && end > start;
}

void WaitStateAnalysis::settle_stalls(std::uint32_t loc) {
  Location& l = locations_[loc];
  if (l.stalls.empty()) return;
  Segment& call = l.history.back();
  std::sort(l.stalls.begin(), l.stalls.end(),
            [](const Stall& a, const Stall& b) { return a.from < b.from; });
  for (Stall& s : l.stalls) {
    // After what the call's other waits charged (they run from its entry); the time between
    // that and the stall was the transfer itself, which nobody is charged with.
    const std::uint64_t from = std::max(s.from, call.start + call.claimed);
    const std::uint64_t to = std::min(s.to, call.end);
    if (to <= from) continue;
    call.claimed = to - call.start;
    call.late_loc = s.late_loc;
    call.late_time = to;
    account(loc, call, from, to, s.late_loc, std::move(s.c));
  }
  l.stalls.clear();
}

}  // namespace perusetrace::report
