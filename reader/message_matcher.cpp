#include "reader/message_matcher.hpp"

#include <algorithm>

namespace perusetrace::archive {

namespace {

enum PeruseKind : std::uint32_t { kOther, kActivate, kXferBegin, kXferEnd };
constexpr std::uint8_t kSend = 0, kReceive = 1;
constexpr std::size_t kSeenPerCall = 4096;  // Peruse events remembered per MPI call

}  // namespace

MessageMatcher::MessageMatcher(const Definitions& defs, MessageSink& out)
    : defs_(defs), out_(out), threads_(defs.locations.size()) {
  for (const std::string& name : defs.peruse_events) {
    kind_of_peruse_.push_back(name == "REQ_ACTIVATE"     ? kActivate
                              : name == "REQ_XFER_BEGIN" ? kXferBegin
                              : name == "REQ_XFER_END"   ? kXferEnd
                                                         : kOther);
  }
}

std::uint32_t MessageMatcher::world(std::uint32_t loc, std::uint32_t comm,
                                    std::uint32_t peer) const {
  const std::uint32_t me = defs_.locations[loc].rank;
  if (comm >= defs_.comms.size()) return peer;  // no communicator: take it as MPI_COMM_WORLD
  const CommDef& c = defs_.comms[comm];
  if (c.self) return me;
  return peer < c.world_ranks.size() ? c.world_ranks[peer] : peer;
}

void MessageMatcher::call_enter(std::uint32_t loc) {
  Thread& th = threads_[loc];
  th.in_call = true;
  th.seen.clear();
}

void MessageMatcher::call_leave(std::uint32_t loc) {
  Thread& th = threads_[loc];
  th.in_call = false;
  th.seen.clear();
  if (th.blocking_send) {
    const std::uint64_t id = *th.blocking_send;
    th.blocking_send.reset();
    complete(id);
  }
}

void MessageMatcher::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t peruse_index,
                            const PeruseFields& f) {
  const std::uint32_t kind =
      peruse_index < kind_of_peruse_.size() ? kind_of_peruse_[peruse_index] : kOther;
  if (kind == kOther || f.request == 0) return;
  Thread& th = threads_[loc];
  const std::uint32_t rank = defs_.locations[loc].rank;
  if (th.in_call) {
    if (th.seen.size() >= kSeenPerCall) th.seen.erase(th.seen.begin());
    th.seen.push_back({f.request, t, kind, f.tag, f.operation});
  }
  if (f.operation == kSend) {
    if (kind == kActivate && th.blocking_send && th.blocking_send_request == 0)
      th.blocking_send_request = f.request;
    if (kind != kXferBegin) return;
    if (th.blocking_send) {
      auto running = sends_.find(*th.blocking_send);
      const bool same_tag = running != sends_.end() && f.tag >= 0 &&
                            static_cast<std::uint32_t>(f.tag) == running->second.tag;
      if (th.blocking_send_request == f.request || (th.blocking_send_request == 0 && same_tag)) {
        set_physical_send(*th.blocking_send, t);
        return;
      }
    }
    auto it = send_by_request_.find({rank, f.request});
    if (it != send_by_request_.end()) set_physical_send(it->second, t);
  } else if (f.operation == kReceive && kind == kXferEnd) {
    auto it = recv_by_request_.find({rank, f.request});
    if (it != recv_by_request_.end()) it->second = t;
  }
}

void MessageMatcher::point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e,
                                    std::uint64_t began) {
  switch (e.kind) {
    case P2pKind::Send:
      return send(loc, t, e, began == ~std::uint64_t{0} ? t : began);
    case P2pKind::SendComplete:
      return send_complete(loc, e.request);
    case P2pKind::RecvRequest:
      return recv_request(loc, e.request);
    case P2pKind::Recv:
      return recv(loc, t, e);
    case P2pKind::Cancelled:
      return cancelled(loc, e.request);
  }
}

void MessageMatcher::send(std::uint32_t loc, std::uint64_t t, const PointToPoint& e,
                          std::uint64_t began) {
  const std::uint32_t peer = e.peer, comm = e.comm, tag = e.tag;
  const std::uint64_t bytes = e.bytes, request = e.request;
  const bool blocking = e.blocking;
  const std::uint32_t rank = defs_.locations[loc].rank;
  const std::uint32_t to = world(loc, comm, peer);
  if (to == kOtherJobRank) {
    ++with_other_jobs_;
    return;
  }
  const std::uint64_t id = next_id_++;
  Send s{loc, t, std::nullopt, bytes, tag, false, std::nullopt, began};
  Thread& th = threads_[loc];
  if (blocking) {
    if (th.blocking_send) complete(*th.blocking_send);  // a second send in one call
    th.blocking_send = id;
    th.blocking_send_request = 0;
  } else if (request != 0) {
    // Peruse events of this request that came before the record, inside the posting call.
    for (const Seen& e : th.seen)
      if (e.request == request && e.operation == kSend && e.kind == kXferBegin && !s.physical)
        s.physical = e.time;
    send_by_request_[{rank, request}] = id;
  } else {
    s.complete = true;  // no request to follow: nothing more will come
  }
  sends_.emplace(id, std::move(s));
  match(Key{rank, to, comm, tag}, id);
}

void MessageMatcher::send_complete(std::uint32_t loc, std::uint64_t request) {
  auto it = send_by_request_.find({defs_.locations[loc].rank, request});
  if (it == send_by_request_.end()) return;
  const std::uint64_t id = it->second;
  send_by_request_.erase(it);
  complete(id);
}

void MessageMatcher::recv_request(std::uint32_t loc, std::uint64_t request) {
  std::optional<std::uint64_t> physical;
  for (const Seen& e : threads_[loc].seen)
    if (e.request == request && e.operation == kReceive && e.kind == kXferEnd) physical = e.time;
  recv_by_request_[{defs_.locations[loc].rank, request}] = physical;
}

void MessageMatcher::recv(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) {
  const std::uint32_t peer = e.peer, comm = e.comm, tag = e.tag;
  const std::uint64_t request = e.request;
  const bool blocking = e.blocking;
  const std::uint32_t rank = defs_.locations[loc].rank;
  const std::uint32_t from = world(loc, comm, peer);
  if (from == kOtherJobRank) {
    ++with_other_jobs_;
    recv_by_request_.erase({rank, request});
    return;
  }
  Recv r{loc, t, std::nullopt};
  const Thread& th = threads_[loc];
  if (!blocking && request != 0) {
    auto it = recv_by_request_.find({rank, request});
    if (it != recv_by_request_.end()) {
      r.physical = it->second;
      recv_by_request_.erase(it);
    }
    for (const Seen& e : th.seen)  // completed inside this call, after the record was made
      if (e.request == request && e.operation == kReceive && e.kind == kXferEnd)
        r.physical = e.time;
  } else {
    // A blocking receive: the last transfer end of a receive with this tag (or any tag)
    // inside the call.
    for (const Seen& e : th.seen)
      if (e.operation == kReceive && e.kind == kXferEnd &&
          (e.tag == -1 || (e.tag >= 0 && static_cast<std::uint32_t>(e.tag) == tag)))
        r.physical = e.time;
  }
  match(Key{from, rank, comm, tag}, r);
}

void MessageMatcher::cancelled(std::uint32_t loc, std::uint64_t request) {
  const std::uint32_t rank = defs_.locations[loc].rank;
  recv_by_request_.erase({rank, request});
  send_complete(loc, request);
}

void MessageMatcher::set_physical_send(std::uint64_t id, std::uint64_t t) {
  auto it = sends_.find(id);
  if (it == sends_.end() || it->second.physical) return;
  it->second.physical = t;
  if (it->second.remote) return ship(it);
  if (it->second.partner) {
    emit(it->second, *it->second.partner);
    sends_.erase(it);
  }
}

void MessageMatcher::complete(std::uint64_t id) {
  auto it = sends_.find(id);
  if (it == sends_.end()) return;
  it->second.complete = true;
  if (it->second.remote) return ship(it);
  if (it->second.partner) {
    emit(it->second, *it->second.partner);
    sends_.erase(it);
  }
}

// A channel's queue stays when it empties (most channels carry message after message, and a
// deque allocates when made); the empty ones go when the channels have doubled since the last
// sweep, so that programs with ever new tags do not grow the map without bound.
template <class Map>
void MessageMatcher::sweep(Map& waiting, std::size_t& sweep_at) {
  if (waiting.size() <= sweep_at) return;
  std::erase_if(waiting, [](const auto& entry) { return entry.second.empty(); });
  sweep_at = std::max<std::size_t>(kFirstSweep, 2 * waiting.size());
}

void MessageMatcher::match(const Key& key, std::uint64_t send_id) {
  if (!owned(key.to)) {
    auto it = sends_.find(send_id);
    it->second.remote = true;
    it->second.key = key;
    it->second.seq = remote_send_seq_[key]++;
    if (it->second.physical || it->second.complete) ship(it);
    return;
  }
  auto w = waiting_recvs_.find(key);
  if (w == waiting_recvs_.end() || w->second.empty()) {
    waiting_sends_[key].push_back(send_id);
    sweep(waiting_sends_, sends_sweep_at_);
    return;
  }
  const Recv r = w->second.front();
  w->second.pop_front();
  Send& s = sends_.at(send_id);
  if (s.physical || s.complete) {
    emit(s, r);
    sends_.erase(send_id);
  } else {
    s.partner = r;
  }
}

void MessageMatcher::match(const Key& key, const Recv& r) {
  if (!owned(key.from)) {
    RemoteChannel& ch = remote_channels_[key];
    const std::uint64_t seq = ch.next_recv++;
    if (auto half = ch.sends.find(seq); half != ch.sends.end()) {
      emit_half(half->second, r);
      ch.sends.erase(half);
    } else {
      ch.recvs.emplace(seq, r);
    }
    return;
  }
  auto w = waiting_sends_.find(key);
  if (w == waiting_sends_.end() || w->second.empty()) {
    waiting_recvs_[key].push_back(r);
    sweep(waiting_recvs_, recvs_sweep_at_);
    return;
  }
  const std::uint64_t id = w->second.front();
  w->second.pop_front();
  auto it = sends_.find(id);
  if (it == sends_.end()) return;
  if (it->second.physical || it->second.complete) {
    emit(it->second, r);
    sends_.erase(it);
  } else {
    it->second.partner = r;
  }
}

void MessageMatcher::emit(const Send& s, const Recv& r) {
  ++matched_;
  const std::uint64_t physical_recv = r.physical.value_or(r.logical);
  std::uint64_t physical_send = s.physical.value_or(s.logical);
  // ob1 reports an eager send's REQ_XFER_BEGIN when the send completes on the sender, after the
  // data went out; a sender descheduled in between reports it after the receiver has the data.
  // Then it tells when the send finished, not when the data left: the logical send is the
  // better bound.
  if (s.physical && physical_send > physical_recv) {
    physical_send = s.logical;
    ++late_physical_sends_;
  }
  if (r.logical <= s.began) ++clock_breaks_;
  out_.message({s.loc, r.loc, s.logical, physical_send, r.logical, physical_recv, s.bytes, s.tag});
}

void MessageMatcher::finish() {
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (it->second.remote) {
      ship(it++);  // as it is: nothing more will come
      continue;
    }
    if (it->second.partner) emit(it->second, *it->second.partner);
    ++it;
  }
  for (const auto& [key, q] : waiting_sends_) unmatched_sends_ += q.size();
  for (const auto& [key, q] : waiting_recvs_) unmatched_recvs_ += q.size();
  sends_.clear();
  waiting_sends_.clear();
  waiting_recvs_.clear();
}

void MessageMatcher::share(std::vector<bool> owned) {
  owned_ = std::move(owned);
}

void MessageMatcher::ship(std::unordered_map<std::uint64_t, Send>::iterator it) {
  const Send& s = it->second;
  remote_sends_.push_back(SendHalf{s.key, s.seq, s.logical, s.physical.value_or(0), s.bytes,
                                   s.began, s.loc, s.tag, s.physical ? 1u : 0u});
  sends_.erase(it);
}

void MessageMatcher::emit_half(const SendHalf& h, const Recv& r) {
  Send s{h.loc,        h.logical, std::nullopt, h.bytes, h.tag, true,
         std::nullopt, h.began,   true,         h.key,   h.seq};
  if (h.has_physical != 0) s.physical = h.physical;
  emit(s, r);
}

void MessageMatcher::pair_remote(const std::vector<SendHalf>& sends) {
  for (const SendHalf& h : sends) {
    RemoteChannel& ch = remote_channels_[h.key];
    if (auto r = ch.recvs.find(h.seq); r != ch.recvs.end()) {
      emit_half(h, r->second);
      ch.recvs.erase(r);
    } else {
      ch.sends.emplace(h.seq, h);
    }
  }
}

void MessageMatcher::finish_remote() {
  for (const auto& [key, ch] : remote_channels_) {
    unmatched_sends_ += ch.sends.size();
    unmatched_recvs_ += ch.recvs.size();
  }
  remote_channels_.clear();
}

std::uint64_t MessageMatcher::earliest_pending_send() const {
  std::uint64_t earliest = ~std::uint64_t{0};
  for (const auto& [id, send] : sends_) earliest = std::min(earliest, send.logical);
  return earliest;
}

}  // namespace perusetrace::archive
