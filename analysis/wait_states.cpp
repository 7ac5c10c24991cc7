#include "analysis/wait_states.hpp"

#include <algorithm>
#include <cctype>

#include "analysis/requirements.hpp"
#include "reader/call_kind.hpp"
#include "reader/world_rank.hpp"

namespace perusetrace::report {

namespace {

enum class CollectiveKind { None, Barrier, NxN, OneToN, NToOne, Scan, Fence };

// The blocking form of a collective's name: MPI_Iallreduce -> MPI_Allreduce.
std::string blocking_name(const std::string& name) {
  if (name.size() > 6 && name.compare(0, 5, "MPI_I") == 0 && std::islower(name[5]))
    return "MPI_" + std::string(1, static_cast<char>(std::toupper(name[5]))) + name.substr(6);
  return name;
}

CollectiveKind collective_kind(const std::string& blocking) {
  static const std::pair<const char*, CollectiveKind> kinds[] = {
      {"MPI_Barrier", CollectiveKind::Barrier},
      {"MPI_Allreduce", CollectiveKind::NxN},
      {"MPI_Allgather", CollectiveKind::NxN},
      {"MPI_Allgatherv", CollectiveKind::NxN},
      {"MPI_Alltoall", CollectiveKind::NxN},
      {"MPI_Alltoallv", CollectiveKind::NxN},
      {"MPI_Alltoallw", CollectiveKind::NxN},
      {"MPI_Reduce_scatter", CollectiveKind::NxN},
      {"MPI_Reduce_scatter_block", CollectiveKind::NxN},
      {"MPI_Bcast", CollectiveKind::OneToN},
      {"MPI_Scatter", CollectiveKind::OneToN},
      {"MPI_Scatterv", CollectiveKind::OneToN},
      {"MPI_Reduce", CollectiveKind::NToOne},
      {"MPI_Gather", CollectiveKind::NToOne},
      {"MPI_Gatherv", CollectiveKind::NToOne},
      {"MPI_Scan", CollectiveKind::Scan},
      {"MPI_Exscan", CollectiveKind::Scan},
      {"MPI_Win_fence", CollectiveKind::Fence},
  };
  for (const auto& [name, kind] : kinds)
    if (blocking == name) return kind;
  return CollectiveKind::None;
}

// A call that completes requests or looks for a message, which a program calls in a loop while
// it waits.
bool is_poll(const std::string& name) {
  return name.rfind("MPI_Test", 0) == 0 || name.rfind("MPI_Wait", 0) == 0 || name == "MPI_Iprobe" ||
         name == "MPI_Improbe" || name == "MPI_Probe" || name == "MPI_Mprobe";
}

std::uint64_t overlap(std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1) {
  const std::uint64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? hi - lo : 0;
}

// The causes a segment keeps for propagation: the largest few.
constexpr std::size_t kCausesKept = 8;

void add_cause(std::vector<std::pair<std::uint32_t, std::uint64_t>>& causes, std::uint32_t id,
               std::uint64_t ns) {
  if (ns == 0) return;
  for (auto& [c, n] : causes)
    if (c == id) {
      n += ns;
      return;
    }
  if (causes.size() < kCausesKept) {
    causes.emplace_back(id, ns);
    return;
  }
  auto smallest = std::min_element(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
    return a.second < b.second;
  });
  if (smallest->second < ns) *smallest = {id, ns};
}

}  // namespace

WaitStateAnalysis::WaitStateAnalysis(const archive::Definitions& defs, WaitStates& out,
                                     std::size_t history)
    : defs_(defs), out_(out) {
  const std::size_t locations = std::max<std::size_t>(1, defs.locations.size());
  // A budget of segments for the whole run, spread over the locations.
  history_ = std::clamp<std::size_t>((std::size_t{1} << 21) / locations, 1024, history);
  locations_.resize(defs.locations.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    locations_[l].rank = defs.locations[l].rank;
  outside_label_ = intern("compute outside any region");
  poll_.assign(defs.regions.size(), 0);
  region_label_.assign(defs.regions.size(), 0);
  for (std::size_t r = 0; r < defs.regions.size(); ++r) {
    const archive::RegionDef& d = defs.regions[r];
    region_label_[r] =
        intern(d.kind == archive::RegionKind::MpiFunction ? d.name : "compute in " + d.name);
    poll_[r] =
        defs.regions[r].kind == archive::RegionKind::MpiFunction && is_poll(defs.regions[r].name);
  }
  queue_event_.assign(defs.regions.size(), QueueEvent::None);
  transfer_.assign(defs.regions.size(), Transfer::None);
  progresses_.assign(defs.regions.size(), 0);
  for (std::size_t r = 0; r < defs.regions.size(); ++r)
    progresses_[r] = archive::makes_progress(defs.regions[r]);
  rank_locations_.resize(defs.ranks.size());
  receives_open_.resize(defs.ranks.size());
  receives_done_.resize(defs.ranks.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    if (defs.locations[l].rank < rank_locations_.size())
      rank_locations_[defs.locations[l].rank].push_back(static_cast<std::uint32_t>(l));
  bool inserts = false, removals = false;
  for (std::size_t r = 0; r < defs.regions.size(); ++r) {
    const archive::RegionDef& d = defs.regions[r];
    if (d.kind != archive::RegionKind::Peruse || d.peruse_index >= defs.peruse_events.size())
      continue;
    const std::string& e = defs.peruse_events[d.peruse_index];
    if (e == "MSG_INSERT_IN_UNEX_Q") queue_event_[r] = QueueEvent::Insert, inserts = true;
    if (e == "MSG_REMOVE_FROM_UNEX_Q") queue_event_[r] = QueueEvent::Remove, removals = true;
    if (e == "REQ_XFER_BEGIN") transfer_[r] = Transfer::Begin;
    if (e == "REQ_XFER_CONTINUE") transfer_[r] = Transfer::Continue;
    if (e == "REQ_XFER_END") transfer_[r] = Transfer::End;
    if (e == "REQ_ACTIVATE") transfer_[r] = Transfer::Activate;
    if (e == "REQ_COMPLETE") transfer_[r] = Transfer::Complete;
  }
  // Defined is not traced: the selection the archive records says which events it holds.
  bool recorded = false;
  const std::vector<std::string> selected = selected_events(defs.settings, recorded);
  auto has = [&](const char* e) {
    return !recorded || std::find(selected.begin(), selected.end(), e) != selected.end();
  };
  unexpected_known_ =
      inserts && removals && has("MSG_INSERT_IN_UNEX_Q") && has("MSG_REMOVE_FROM_UNEX_Q");
  const std::size_t n = defs.ranks.size();
  unexpected_.assign(n, 0);
  out_.rank_wait_ns.assign(n, 0);
  for (auto& p : out_.patterns) p.ranks.assign(n, 0);
  out_.critical_ranks.assign(n, 0);
  in_flight_.resize(n);
  next_instance_.resize(defs.comms.size());
  next_nb_instance_.resize(defs.comms.size());
  next_fence_.resize(defs.comms.size());
  for (std::size_t c = 0; c < defs.comms.size(); ++c) {
    next_instance_[c].assign(defs.comms[c].world_ranks.size(), 0);
    next_nb_instance_[c].assign(defs.comms[c].world_ranks.size(), 0);
    next_fence_[c].assign(defs.comms[c].world_ranks.size(), 0);
  }
}

std::uint32_t WaitStateAnalysis::intern(const std::string& s) {
  auto [it, fresh] = label_ids_.try_emplace(s, static_cast<std::uint32_t>(labels_.size()));
  if (fresh) labels_.push_back(s);
  return it->second;
}

std::uint32_t WaitStateAnalysis::cause_id(std::uint32_t rank, std::uint32_t label) {
  auto [it, fresh] =
      cause_ids_.try_emplace({rank, label}, static_cast<std::uint32_t>(causes_.size()));
  if (fresh) causes_.emplace_back(rank, label);
  return it->second;
}

WaitStateAnalysis::Segment* WaitStateAnalysis::segment(std::uint32_t loc, std::uint64_t seq) {
  Location& l = locations_[loc];
  if (seq < l.base || seq - l.base >= l.history.size()) return nullptr;
  return &l.history[seq - l.base];
}

std::uint64_t WaitStateAnalysis::current(std::uint32_t loc) const {
  const Location& l = locations_[loc];
  return l.history.empty() ? kNever : l.base + l.history.size() - 1;
}

std::uint32_t WaitStateAnalysis::label_of(const Location& l) {
  return l.regions.empty() ? outside_label_ : region_label_[l.regions.back()];
}

// Ends the open segment at `t` and begins one: in MPI call `function`, or outside MPI.
void WaitStateAnalysis::open_segment(Location& l, std::uint64_t t, std::uint32_t function) {
  if (!l.history.empty()) {
    Segment& last = l.history.back();
    if (last.end == kNever) {
      last.end = std::max(t, last.start);
      add_activity(l, last);
    }
    if (last.function == kNone && last.end == last.start && l.history.size() > 1)
      l.history.pop_back();  // an empty stretch outside MPI: nothing refers to it
  }
  Segment s;
  s.start = t;
  s.label = label_of(l);
  s.function = function;
  l.history.push_back(std::move(s));
  trim(l);
}

void WaitStateAnalysis::add_activity(const Location& l, const Segment& s) {
  const std::uint32_t activity = s.function == kNone ? s.label : region_label_[s.function];
  auto& by_rank = activity_ns_[activity];
  if (by_rank.empty()) by_rank.assign(defs_.ranks.size(), 0);
  // Folded polls (polls_folded): the time between them was the program's.
  const std::uint64_t gaps = std::min(s.gaps, s.end - s.start);
  by_rank[l.rank] += s.end - s.start - gaps;
  if (gaps == 0) return;
  auto& outside = activity_ns_[s.label];
  if (outside.empty()) outside.assign(defs_.ranks.size(), 0);
  outside[l.rank] += gaps;
}

void WaitStateAnalysis::polls_folded(std::uint32_t loc, std::uint64_t t,
                                     const archive::PollFold& f) {
  Location& l = locations_[loc];
  if (l.depth != 1 || l.history.empty()) return;
  Segment& s = l.history.back();
  if (s.function != f.region || t < s.start) return;
  s.gaps += t - s.start - std::min(f.inside_ns, t - s.start);
}

// Programs wait for a request with millions of MPI_Test calls: a call of the loop that
// completed nothing joins the previous one of the same function when only a short stretch
// outside MPI lies between them, so that the history holds the whole wait.
void WaitStateAnalysis::merge_poll(Location& l) {
  constexpr std::uint64_t kMergeGap = 50'000;  // ns
  auto& h = l.history;
  if (h.size() < 3) return;
  Segment& q = h[h.size() - 1];
  Segment& g = h[h.size() - 2];
  Segment& p = h[h.size() - 3];
  if (q.claimed > 0 || q.function != p.function || p.claimed > 0 || p.completion > 0 ||
      !q.tracer.empty() || !p.tracer.empty() || g.function != kNone || g.end == kNever ||
      g.end - g.start > kMergeGap || g.label != p.label)
    return;
  p.gaps += g.end - g.start;
  p.end = q.end;
  h.pop_back();
  h.pop_back();
}

void WaitStateAnalysis::trim(Location& l) {
  while (l.history.size() > history_) {
    l.history.pop_front();
    ++l.base;
  }
}

// ---- calls and regions ---------------------------------------------------------------------

void WaitStateAnalysis::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  const archive::RegionDef& def = defs_.regions[region];
  Location& l = locations_[loc];
  if (def.kind == archive::RegionKind::MpiFunction) {
    out_.present = true;
    if (l.depth++ == 0) {
      l.pending = Pending{};
      l.busy = false;
      l.unexpected_at_entry = unexpected_[l.rank];
      l.instances.clear();
      open_segment(l, t, region);
    }
    return;
  }
  if (def.kind == archive::RegionKind::Tracer && l.depth > 0) {
    l.tracer_since = t;
    return;
  }
  if (def.kind != archive::RegionKind::Other && def.kind != archive::RegionKind::Annotation) return;
  if (def.sampled) return;
  l.regions.push_back(region);
  if (l.depth == 0) open_segment(l, t, kNone);
}

void WaitStateAnalysis::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  const archive::RegionDef& def = defs_.regions[region];
  Location& l = locations_[loc];
  if (def.kind == archive::RegionKind::MpiFunction) {
    if (l.depth == 0 || --l.depth > 0) return;
    Segment& s = l.history.back();
    s.end = std::max(t, s.start);
    add_activity(l, s);
    settle_pending(loc);
    settle_stalls(loc);
    const auto instances = std::move(l.instances);
    l.instances.clear();
    for (const auto& key : instances) member_left(key, loc, s.end);
    if (!l.busy && poll_[s.function]) merge_poll(l);
    open_segment(l, t, kNone);
    return;
  }
  if (def.kind == archive::RegionKind::Tracer && l.depth > 0 && !l.history.empty()) {
    if (t > l.tracer_since) l.history.back().tracer.emplace_back(l.tracer_since, t);
    return;
  }
  if (def.kind != archive::RegionKind::Other && def.kind != archive::RegionKind::Annotation) return;
  if (def.sampled) return;
  auto it = std::find(l.regions.rbegin(), l.regions.rend(), region);
  if (it == l.regions.rend()) return;
  l.regions.erase(std::next(it).base());
  if (l.depth == 0) open_segment(l, t, kNone);
}

// ---- point-to-point --------------------------------------------------------------------------

void WaitStateAnalysis::send(std::uint32_t loc, std::uint64_t, const archive::PointToPoint& p2p) {
  Location& l = locations_[loc];
  if (l.depth == 0 || l.history.empty()) return;
  const std::int32_t to = archive::world_rank(defs_, p2p.comm, p2p.peer, l.rank);
  if (to < 0 || static_cast<std::size_t>(to) >= in_flight_.size()) return;
  l.busy = true;
  Message m;
  m.send_loc = loc;
  m.send_enter = l.history.back().start;
  m.send_seq = current(loc);
  m.blocking = p2p.blocking || p2p.request == 0;
  m.to = static_cast<std::uint32_t>(to);
  m.bytes = p2p.bytes;
  m.tag = static_cast<std::int32_t>(p2p.tag);
  const std::uint64_t id = next_message_++;
  messages_.emplace(id, m);
  unmatched_[{l.rank, m.to, p2p.comm, p2p.tag}].push_back(id);
  in_flight_[m.to].insert(m.send_enter);
  if (!m.blocking) send_requests_[rank_key(l.rank, p2p.request)] = id;
}

void WaitStateAnalysis::recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  Location& l = locations_[loc];
  l.busy = true;
  const std::uint64_t posted = l.depth > 0 && !l.history.empty() ? l.history.back().start : t;
  recv_posts_[rank_key(l.rank, request)] = posted;
}

void WaitStateAnalysis::request_cancelled(std::uint32_t loc, std::uint64_t, std::uint64_t request) {
  const std::uint64_t key = rank_key(locations_[loc].rank, request);
  recv_posts_.erase(key);
  send_requests_.erase(key);
}

void WaitStateAnalysis::recv(std::uint32_t loc, std::uint64_t, const archive::PointToPoint& p2p) {
  Location& l = locations_[loc];
  l.busy = true;
  std::uint64_t posted = kNever;
  if (!p2p.blocking && p2p.request != 0) {
    auto p = recv_posts_.find(rank_key(l.rank, p2p.request));
    if (p != recv_posts_.end()) {
      posted = p->second;
      recv_posts_.erase(p);
    }
  }
  if (l.depth == 0 || l.history.empty()) return;
  const std::int32_t from = archive::world_rank(defs_, p2p.comm, p2p.peer, l.rank);
  if (from < 0) return;
  auto q = unmatched_.find({static_cast<std::uint32_t>(from), l.rank, p2p.comm, p2p.tag});
  if (q == unmatched_.end() || q->second.empty()) return;  // its sender is not in this trace
  const std::uint64_t id = q->second.front();
  q->second.pop_front();
  if (q->second.empty()) unmatched_.erase(q);
  auto mit = messages_.find(id);
  if (mit == messages_.end()) return;
  Message& m = mit->second;
  auto& flying = in_flight_[l.rank];
  if (auto f = flying.find(m.send_enter); f != flying.end()) flying.erase(f);

  const Segment& call = l.history.back();
  if (posted == kNever) posted = call.start;
  m.recv_post = posted;
  m.recv_loc = loc;
  WaitCase c;
  c.pattern = WaitPattern::LateSender;
  c.rank = l.rank;
  c.late = static_cast<std::int32_t>(locations_[m.send_loc].rank);
  c.function = defs_.regions[call.function].name;
  c.tag = m.tag;
  c.bytes = m.bytes;
  if (m.send_enter > call.start && (!l.pending.any || m.send_enter > l.pending.until)) {
    l.pending.any = true;
    l.pending.until = m.send_enter;
    l.pending.late_loc = m.send_loc;
    l.pending.c = c;
  }
  // A nonblocking receive collected by a loop of Test/Wait calls: those made while the send
  // had not begun waited for it too. A blocking one may follow a loop of probes, which waited
  // for it since the location's previous receive.
  const std::uint64_t polled_from = p2p.blocking ? l.last_received : posted;
  if (polled_from < call.start)
    charge_polls(loc, polled_from, std::min(m.send_enter, call.start), m.send_loc, c);
  l.last_received = call.start;
  late_receiver(m);
  if (m.blocking || m.complete_seq != kNever) messages_.erase(mit);
}

void WaitStateAnalysis::send_complete(std::uint32_t loc, std::uint64_t, std::uint64_t request) {
  locations_[loc].busy = true;
  auto r = send_requests_.find(rank_key(locations_[loc].rank, request));
  if (r == send_requests_.end()) return;
  const std::uint64_t id = r->second;
  send_requests_.erase(r);
  auto mit = messages_.find(id);
  if (mit == messages_.end()) return;
  Message& m = mit->second;
  m.complete_seq = locations_[loc].depth > 0 ? current(loc) : kNever;
  if (m.recv_post == kNever) {
    if (m.complete_seq == kNever) messages_.erase(mit);
    return;  // matched later, when its receive completes
  }
  late_receiver(m);
  messages_.erase(mit);
}

// The sender's call that had to wait for the receive (the blocking send, or the Wait of a
// nonblocking one) was entered before the receive was posted and still running when it was.
void WaitStateAnalysis::late_receiver(Message& m) {
  if (m.recv_post == kNever) return;
  const std::uint64_t seq = m.blocking ? m.send_seq : m.complete_seq;
  // A nonblocking send that completed in the call that made it (an eager message Open MPI sent
  // at once) waited for nobody.
  if (seq == kNever || (!m.blocking && seq == m.send_seq)) return;
  Segment* s = segment(m.send_loc, seq);
  if (s == nullptr || m.recv_post <= s->start || (s->end != kNever && m.recv_post >= s->end))
    return;
  WaitCase c;
  c.pattern = WaitPattern::LateReceiver;
  c.rank = locations_[m.send_loc].rank;
  c.late = static_cast<std::int32_t>(locations_[m.recv_loc].rank);
  c.function = defs_.regions[s->function].name;
  c.tag = m.tag;
  c.bytes = m.bytes;
  charge(m.send_loc, *s, m.recv_post, m.recv_loc, c);
}

void WaitStateAnalysis::charge_polls(std::uint32_t loc, std::uint64_t from, std::uint64_t until,
                                     std::uint32_t late_loc, const WaitCase& c) {
  Location& l = locations_[loc];
  if (l.history.size() < 2) return;
  for (std::size_t i = l.history.size() - 1; i-- > 0;) {
    Segment& s = l.history[i];
    if (s.start < from) break;
    if (s.function == kNone || !poll_[s.function] || s.start >= until) continue;
    WaitCase p = c;
    p.function = defs_.regions[s.function].name;
    charge(loc, s, until, late_loc, p);
  }
}

void WaitStateAnalysis::settle_pending(std::uint32_t loc) {
  Location& l = locations_[loc];
  if (!l.pending.any) return;
  Segment& s = l.history.back();
  WaitCase c = l.pending.c;
  // Another message to this rank had arrived (Peruse: it waited in the unexpected queue when
  // this call began) or, without those events, had been sent before this call began, and was
  // still waiting to be received.
  const auto& flying = in_flight_[l.rank];
  const bool other =
      unexpected_known_ ? l.unexpected_at_entry > 0 : !flying.empty() && *flying.begin() < s.start;
  if (other) c.pattern = WaitPattern::LateSenderWrongOrder;
  charge(loc, s, l.pending.until, l.pending.late_loc, c);
  l.pending = Pending{};
}

// ---- charging and causes ---------------------------------------------------------------------

void WaitStateAnalysis::charge(std::uint32_t loc, Segment& seg, std::uint64_t until,
                               std::uint32_t late_loc, WaitCase c) {
  const std::uint64_t cap = seg.end == kNever ? until : std::min(until, seg.end);
  if (cap <= seg.start) return;
  const std::uint64_t w = cap - seg.start;
  if (w <= seg.claimed) return;
  const std::uint64_t from = seg.start + seg.claimed;
  seg.claimed = w;
  seg.late_loc = late_loc;
  seg.late_time = cap;
  account(loc, seg, from, cap, late_loc, std::move(c));
}

void WaitStateAnalysis::account(std::uint32_t loc, Segment& seg, std::uint64_t from,
                                std::uint64_t to, std::uint32_t late_loc, WaitCase c) {
  // A merged run of loop calls waited only while inside them.
  const double scale =
      seg.gaps == 0 || seg.end == kNever
          ? 1.0
          : 1.0 - static_cast<double>(seg.gaps) / static_cast<double>(seg.end - seg.start);
  std::uint64_t flushing = 0;
  for (const auto& [a, b] : seg.tracer) flushing += overlap(from, to, a, b);
  const auto ns = static_cast<std::uint64_t>(static_cast<double>(to - from - flushing) * scale);
  if (ns == 0) return;
  const std::uint32_t rank = locations_[loc].rank;
  c.lost = ns;
  c.time = seg.start;
  WaitPatternStat& p = out_.patterns[static_cast<std::size_t>(c.pattern)];
  ++p.count;
  p.total += ns;
  p.ranks[rank] += ns;
  p.functions[c.function] += ns;
  p.pairs[{c.late, rank}] += ns;
  out_.rank_wait_ns[rank] += ns;
  out_.total_ns += ns;
  if (late_loc != kNone)
    blame(late_loc, from, to, static_cast<double>(ns) / static_cast<double>(to - from), seg, c);
  else
    p.uncaused += ns;
  p.worst.add(c, static_cast<double>(ns));
  if (listener_ != nullptr) listener_->wait_case(p, c);
}

// What the late location did while `waiter` waited, from `from` to `to`: its own time outside
// MPI or in MPI work is a delay and costs directly; its own waiting passes the cost on to what
// that waiting was caused by.
void WaitStateAnalysis::blame(std::uint32_t late_loc, std::uint64_t from, std::uint64_t to,
                              double scale, Segment& waiter, WaitCase& c) {
  Location& l = locations_[late_loc];
  auto& h = l.history;
  auto it = std::upper_bound(h.begin(), h.end(), from,
                             [](std::uint64_t t, const Segment& s) { return t < s.start; });
  if (it != h.begin()) --it;
  std::uint32_t top = kNone;
  std::uint64_t top_ns = 0, attributed = 0;
  std::uint32_t top_through = kNone;  // propagated: the late rank's waiting call
  WaitPatternStat& pattern = out_.patterns[static_cast<std::size_t>(c.pattern)];
  auto scaled = [scale](std::uint64_t ns) {
    return static_cast<std::uint64_t>(static_cast<double>(ns) * scale);
  };
  auto direct = [&](std::uint32_t label, std::uint64_t unscaled) {
    const std::uint64_t ns = scaled(unscaled);
    if (ns == 0) return;
    const std::uint32_t id = cause_id(l.rank, label);
    DelayCost& d = out_.causes[{l.rank, labels_[label]}];
    d.direct += ns;
    pattern.causes[{l.rank, labels_[label]}] += ns;
    attributed += ns;
    ++d.cases;
    add_cause(waiter.causes, id, ns);
    if (ns > top_ns) top = id, top_ns = ns, top_through = kNone;
  };
  for (; it != h.end() && it->start < to; ++it) {
    const Segment& s = *it;
    const std::uint64_t end = s.end == kNever ? to : s.end;
    const std::uint64_t o = overlap(from, to, s.start, end);
    if (o == 0) continue;
    if (s.function == kNone) {
      direct(s.label, o);
      continue;
    }
    // Its waiting is [start, start + claimed]; a completion's is the call's end.
    const std::uint64_t waited = overlap(from, to, s.start, s.start + s.claimed);
    std::uint64_t sum = 0;
    for (const auto& [id, ns] : s.causes) sum += ns;
    // "MPI_Recv in phase=solve": the call, and the region it was made in.
    // A request loop's call not (yet) charged as waiting: the late rank was polling for
    // messages of its own.
    const std::string& fn = defs_.regions[s.function].name;
    const bool polls = fn.rfind("MPI_Test", 0) == 0 || fn.find("probe") != std::string::npos;
    const std::string polling = polls ? " (polling)" : "";
    const std::uint32_t mpi_label =
        s.label == outside_label_
            ? intern(defs_.regions[s.function].name + polling)
            : intern(defs_.regions[s.function].name + polling + labels_[s.label].substr(7));
    if (waited == 0 || sum == 0) {
      direct(mpi_label, o);
      continue;
    }
    direct(mpi_label, o - waited);
    const auto causes = s.causes;  // `waiter` may grow while this is read
    for (const auto& [id, ns] : causes) {
      const auto share =
          scaled(static_cast<std::uint64_t>(static_cast<long double>(waited) * ns / sum));
      if (share == 0) continue;
      const auto& [rank, label] = causes_[id];
      out_.causes[{rank, labels_[label]}].propagated += share;
      pattern.causes[{rank, labels_[label]}] += share;
      attributed += share;
      add_cause(waiter.causes, id, share);
      if (share > top_ns) top = id, top_ns = share, top_through = mpi_label;
    }
  }
  pattern.uncaused += scaled(to - from) - std::min(scaled(to - from), attributed);
  if (top != kNone) {
    const auto& [rank, label] = causes_[top];
    c.cause = "rank " + std::to_string(rank) + ": " + labels_[label];
    if (top_through != kNone)
      c.cause += " (through rank " + std::to_string(l.rank) + "'s waiting in " +
                 labels_[top_through] + ")";
  }
}

// ---- collectives -----------------------------------------------------------------------------

void WaitStateAnalysis::collective_request(std::uint32_t loc, std::uint64_t t,
                                           std::uint64_t request) {
  Location& l = locations_[loc];
  l.busy = true;
  if (l.depth == 0 || l.history.empty()) return;
  nb_starts_[rank_key(l.rank, request)] = {l.history.back().start, l.history.back().function};
  (void)t;
}

void WaitStateAnalysis::collective(std::uint32_t loc, std::uint64_t, const archive::Collective& c) {
  Location& l = locations_[loc];
  l.busy = true;
  if (l.depth == 0 || l.history.empty()) return;
  std::uint64_t start = l.history.back().start;
  std::uint32_t function = l.history.back().function;
  if (c.request == 0) {
    join(loc, c.comm, start, function, c.root, next_instance_, 0, false);
    return;
  }
  auto s = nb_starts_.find(rank_key(l.rank, c.request));
  if (s == nb_starts_.end()) return;
  start = s->second.first;
  function = s->second.second;
  nb_starts_.erase(s);
  // Nonblocking collectives are numbered apart: they may complete in another order than the
  // blocking ones around them were called.
  join(loc, c.comm, start, function, c.root, next_nb_instance_, std::uint64_t{1} << 63, true);
}

void WaitStateAnalysis::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                               const archive::PeruseFields& f) {
  if (region < transfer_.size() && transfer_[region] != Transfer::None)
    transfer_event(loc, t, transfer_[region], f);
  if (!unexpected_known_ || region >= queue_event_.size() || f.tag < 0) return;
  std::int64_t& depth = unexpected_[locations_[loc].rank];
  if (queue_event_[region] == QueueEvent::Insert) ++depth;
  if (queue_event_[region] == QueueEvent::Remove && depth > 0) --depth;
}

// A fence synchronises the window's communicator as a barrier does; post, start, complete and
// wait pair an origin with each target of its group.
void WaitStateAnalysis::rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) {
  Location& l = locations_[loc];
  if (l.depth == 0 || l.history.empty() || e.window >= defs_.windows.size()) return;
  const Segment& call = l.history.back();
  if (call.function >= defs_.regions.size()) return;
  const std::string& name = defs_.regions[call.function].name;
  if (e.kind == archive::RmaEventKind::RequestLock ||
      e.kind == archive::RmaEventKind::ReleaseLock) {
    lock_event(loc, t, e);
    return;
  }
  if (e.kind == archive::RmaEventKind::GroupSync) {
    if (name == "MPI_Win_post") epoch_event(loc, e, EpochField::Post);
    if (name == "MPI_Win_start") epoch_event(loc, e, EpochField::Start);
    if (name == "MPI_Win_complete") epoch_event(loc, e, EpochField::Complete);
    // An MPI_Win_test that found the epoch still open synchronised nothing (level 0).
    if ((name == "MPI_Win_wait" || name == "MPI_Win_test") && e.sync_level != 0)
      epoch_event(loc, e, EpochField::Wait);
    return;
  }
  if (e.kind != archive::RmaEventKind::CollectiveEnd || name != "MPI_Win_fence") return;
  l.busy = true;
  join(loc, defs_.windows[e.window].comm, call.start, call.function, archive::kNoRoot, next_fence_,
       std::uint64_t{1} << 62, false);
}

// Origins get an exclusive lock of a target in the order they asked for it. Open MPI may grant a
// lock lazily, in MPI_Win_unlock rather than in MPI_Win_lock: both calls may wait.
void WaitStateAnalysis::lock_event(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) {
  if (e.target == archive::kAllTargets) return;
  Location& l = locations_[loc];
  l.busy = true;
  auto& holds = locks_[{e.window, e.target}];
  if (e.kind == archive::RmaEventKind::RequestLock) {
    Hold h;
    h.loc = loc;
    h.lock_seq = current(loc);
    h.requested = l.history.back().start;
    h.exclusive = e.exclusive;
    holds.push_back(h);
    return;
  }
  auto mine = std::find_if(holds.begin(), holds.end(),
                           [&](const Hold& h) { return h.loc == loc && h.release == kNever; });
  if (mine == holds.end()) return;
  mine->release = t;  // the MPI_Win_unlock's end
  const Hold me = *mine;
  for (const Hold& h : holds) {
    if (&h == &*mine || h.loc == loc || h.requested >= me.requested || h.release == kNever ||
        !(h.exclusive || me.exclusive))
      continue;
    for (const std::uint64_t seq : {me.lock_seq, current(loc)}) {
      Segment* s = segment(loc, seq);
      if (s == nullptr || h.release <= s->start) continue;
      WaitCase c;
      c.pattern = WaitPattern::LockContention;
      c.rank = l.rank;
      c.late = static_cast<std::int32_t>(locations_[h.loc].rank);
      c.function = defs_.regions[s->function].name;
      charge(loc, *s, h.release, h.loc, c);
    }
  }
  // Released locks are kept for the origins that asked while they were held; a few suffice.
  constexpr std::size_t kHolds = 64;
  while (holds.size() > kHolds && holds.front().release != kNever) holds.pop_front();
}

void WaitStateAnalysis::epoch_event(std::uint32_t loc, const archive::RmaEvent& e,
                                    EpochField field) {
  Location& l = locations_[loc];
  auto group = defs_.groups.find(e.group);
  if (group == defs_.groups.end()) return;
  l.busy = true;
  const Segment& call = l.history.back();
  const bool origin_side = field == EpochField::Start || field == EpochField::Complete;
  for (const std::uint32_t peer : group->second) {
    if (peer == l.rank) continue;
    const auto key = origin_side ? std::make_tuple(e.window, l.rank, peer)
                                 : std::make_tuple(e.window, peer, l.rank);
    Epochs& all = epochs_[key];
    const std::uint64_t index = all.next[static_cast<std::size_t>(field)]++;
    if (index < all.base) continue;  // settled and forgotten already (a damaged order)
    while (all.open.size() <= index - all.base) all.open.emplace_back();
    Epoch& ep = all.open[index - all.base];
    switch (field) {
      case EpochField::Start:
        ep.origin_loc = loc, ep.start_seq = current(loc);
        break;
      case EpochField::Post:
        ep.target_loc = loc, ep.post_enter = call.start;
        break;
      case EpochField::Complete:
        ep.origin_loc = loc, ep.complete_seq = current(loc), ep.complete_enter = call.start;
        break;
      case EpochField::Wait:
        ep.target_loc = loc, ep.wait_seq = current(loc);
        break;
    }
    settle_epoch(ep);
    // Epochs one side never closes (MPI_MODE_NOCHECK starts no post) are let go after a while.
    constexpr std::size_t kOpenEpochs = 1024;
    while (!all.open.empty() &&
           ((all.open.front().late_post_done && all.open.front().early_wait_done) ||
            all.open.size() > kOpenEpochs)) {
      all.open.pop_front();
      ++all.base;
    }
  }
}

// The origin waits in MPI_Win_start, or else in MPI_Win_complete, for a late post; the target
// waits in MPI_Win_wait for the origin's MPI_Win_complete.
void WaitStateAnalysis::settle_epoch(Epoch& ep) {
  auto wait_case = [&](WaitPattern p, std::uint32_t loc, std::uint32_t late_loc, const Segment& s) {
    WaitCase c;
    c.pattern = p;
    c.rank = locations_[loc].rank;
    c.late = static_cast<std::int32_t>(locations_[late_loc].rank);
    c.function = defs_.regions[s.function].name;
    return c;
  };
  if (!ep.late_post_done && ep.start_seq != kNever && ep.post_enter != kNever &&
      ep.complete_seq != kNever) {
    ep.late_post_done = true;
    Segment* start = segment(ep.origin_loc, ep.start_seq);
    Segment* complete = segment(ep.origin_loc, ep.complete_seq);
    Segment* waited =
        start != nullptr && start->end != kNever && start->end > ep.post_enter ? start : complete;
    if (waited != nullptr && ep.post_enter > waited->start)
      charge(ep.origin_loc, *waited, ep.post_enter, ep.target_loc,
             wait_case(WaitPattern::LatePost, ep.origin_loc, ep.target_loc, *waited));
  }
  if (!ep.early_wait_done && ep.complete_enter != kNever && ep.wait_seq != kNever) {
    ep.early_wait_done = true;
    Segment* wait = segment(ep.target_loc, ep.wait_seq);
    if (wait != nullptr && ep.complete_enter > wait->start)
      charge(ep.target_loc, *wait, ep.complete_enter, ep.origin_loc,
             wait_case(WaitPattern::EarlyWait, ep.target_loc, ep.origin_loc, *wait));
  }
}

void WaitStateAnalysis::join(std::uint32_t loc, std::uint32_t comm_id, std::uint64_t start,
                             std::uint32_t function, std::uint32_t root,
                             std::vector<std::vector<std::uint64_t>>& next, std::uint64_t space,
                             bool nonblocking) {
  Location& l = locations_[loc];
  if (comm_id >= defs_.comms.size() || comm_id >= next.size()) return;
  const archive::CommDef& comm = defs_.comms[comm_id];
  if (comm.self || comm.job != archive::kNoJob || comm.world_ranks.size() < 2) return;
  const auto at = std::find(comm.world_ranks.begin(), comm.world_ranks.end(), l.rank);
  if (at == comm.world_ranks.end()) return;
  const auto index = static_cast<std::uint32_t>(at - comm.world_ranks.begin());
  const std::pair<std::uint32_t, std::uint64_t> key{comm_id, next[comm_id][index]++ | space};
  auto [it, fresh] = instances_.try_emplace(key);
  Instance& in = it->second;
  if (fresh) {
    in.function =
        blocking_name(function < defs_.regions.size() ? defs_.regions[function].name : "");
    in.nonblocking = nonblocking;
    in.size = static_cast<std::uint32_t>(comm.world_ranks.size());
    if (root != archive::kNoRoot && root < comm.world_ranks.size())
      in.root = static_cast<std::int32_t>(comm.world_ranks[root]);
  }
  Member m;
  m.loc = loc;
  m.rank = l.rank;
  m.index = index;
  m.start = start;
  m.seq = current(loc);
  in.members.push_back(m);
  l.instances.push_back(key);
}

void WaitStateAnalysis::member_left(const std::pair<std::uint32_t, std::uint64_t>& key,
                                    std::uint32_t loc, std::uint64_t t) {
  auto it = instances_.find(key);
  if (it == instances_.end()) return;
  Instance& in = it->second;
  for (Member& m : in.members)
    if (m.loc == loc && !m.left) {
      m.left = true;
      m.leave = t;
      ++in.left;
      break;
    }
  if (in.left < in.size) return;
  evaluate(in);
  instances_.erase(it);
}

void WaitStateAnalysis::evaluate(Instance& in) {
  const CollectiveKind kind = collective_kind(in.function);
  if (kind == CollectiveKind::None || in.members.empty()) return;
  auto wait_case = [&](WaitPattern p, const Member& m, const Member* late) {
    WaitCase c;
    c.pattern = p;
    c.rank = m.rank;
    c.late = late != nullptr ? static_cast<std::int32_t>(late->rank) : -1;
    const Segment* s = segment(m.loc, m.seq);
    c.function = s != nullptr && s->function < defs_.regions.size()
                     ? defs_.regions[s->function].name
                     : in.function;
    return c;
  };
  auto wait_for = [&](WaitPattern p, const Member& m, const Member& late) {
    if (Segment* s = segment(m.loc, m.seq))
      charge(m.loc, *s, late.start, late.loc, wait_case(p, m, &late));
  };
  if (kind == CollectiveKind::Barrier || kind == CollectiveKind::NxN ||
      kind == CollectiveKind::Fence) {
    const Member& last =
        *std::max_element(in.members.begin(), in.members.end(),
                          [](const Member& a, const Member& b) { return a.start < b.start; });
    const WaitPattern wait = kind == CollectiveKind::Barrier ? WaitPattern::WaitAtBarrier
                             : kind == CollectiveKind::NxN   ? WaitPattern::WaitAtNxN
                                                             : WaitPattern::WaitAtFence;
    for (const Member& m : in.members) wait_for(wait, m, last);
    // A nonblocking collective's completion call is no synchronisation of its own; a fence's
    // completion is not told apart from the flushes it makes.
    if (in.nonblocking || kind == CollectiveKind::Fence) return;
    std::uint64_t first_leave = kNever;
    for (const Member& m : in.members) first_leave = std::min(first_leave, m.leave);
    const WaitPattern completion = kind == CollectiveKind::Barrier ? WaitPattern::BarrierCompletion
                                                                   : WaitPattern::NxNCompletion;
    for (const Member& m : in.members) {
      Segment* s = segment(m.loc, m.seq);
      if (s == nullptr || s->end == kNever) continue;
      const std::uint64_t from = std::max(first_leave, s->start + s->claimed);
      if (s->end <= from) continue;
      s->completion = s->end - from;
      account(m.loc, *s, from, s->end, kNone, wait_case(completion, m, nullptr));
    }
    return;
  }
  const Member* root = nullptr;
  for (const Member& m : in.members)
    if (static_cast<std::int32_t>(m.rank) == in.root) root = &m;
  if (kind == CollectiveKind::OneToN) {
    if (root == nullptr) return;
    for (const Member& m : in.members)
      if (&m != root) wait_for(WaitPattern::LateBroadcast, m, *root);
    return;
  }
  if (kind == CollectiveKind::NToOne) {
    if (root == nullptr) return;
    const Member* first = nullptr;
    for (const Member& m : in.members)
      if (&m != root && (first == nullptr || m.start < first->start)) first = &m;
    if (first != nullptr) wait_for(WaitPattern::EarlyReduce, *root, *first);
    return;
  }
  if (kind != CollectiveKind::Scan) return;
  // Scan: each member needs every lower rank's contribution.
  for (const Member& m : in.members) {
    const Member* latest = nullptr;
    for (const Member& o : in.members)
      if (o.index < m.index && (latest == nullptr || o.start > latest->start)) latest = &o;
    if (latest != nullptr) wait_for(WaitPattern::EarlyScan, m, *latest);
  }
}

// ---- the end ---------------------------------------------------------------------------------

void WaitStateAnalysis::finish(std::uint64_t end) {
  for (std::uint32_t loc = 0; loc < locations_.size(); ++loc) {
    Location& l = locations_[loc];
    if (l.history.empty()) continue;
    Segment& s = l.history.back();
    if (s.end == kNever) {
      if (l.depth > 0) settle_pending(loc);
      open_segment(l, std::max(s.start, end), kNone);
      l.history.pop_back();
    }
  }
  critical_path(end);
  out_.rank_time_ns = end * defs_.ranks.size();
}

// Backwards from the location that ends last: through its own activities, and from a call that
// waited to the process it waited for, at the time that process came.
void WaitStateAnalysis::critical_path(std::uint64_t) {
  std::uint32_t loc = kNone;
  std::uint64_t t = 0;
  for (std::uint32_t i = 0; i < locations_.size(); ++i) {
    const auto& h = locations_[i].history;
    if (!h.empty() && h.back().end != kNever && (loc == kNone || h.back().end > t))
      loc = i, t = h.back().end;
  }
  if (loc == kNone) return;
  const std::uint64_t last = t;
  std::map<std::uint32_t, std::uint64_t> on_path;  // activity label -> ns
  std::size_t steps = 0, limit = 0;
  for (const Location& l : locations_) limit += 2 * l.history.size() + 2;
  while (steps++ < limit) {
    Location& l = locations_[loc];
    auto& h = l.history;
    auto it = std::lower_bound(h.begin(), h.end(), t,
                               [](const Segment& s, std::uint64_t x) { return s.start < x; });
    if (it == h.begin()) {
      if (l.base > 0 && t > 0) out_.critical_truncated = true;
      break;
    }
    --it;  // the segment with start < t
    const Segment& s = *it;
    const std::uint64_t until = std::min(t, s.end);
    const std::uint32_t activity = s.function == kNone ? s.label : region_label_[s.function];
    if (s.function != kNone && s.late_loc != kNone && s.claimed > 0 && s.late_time < t) {
      const std::uint64_t waited_to = s.start + s.claimed;
      if (until > waited_to) {
        on_path[activity] += until - waited_to;
        out_.critical_ranks[l.rank] += until - waited_to;
      }
      loc = s.late_loc;
      t = s.late_time;
      continue;
    }
    on_path[activity] += until - s.start;
    out_.critical_ranks[l.rank] += until - s.start;
    t = s.start;
  }
  // The mean rank's time in each activity over the same span as the path (all of the run, or
  // the part the history kept).
  out_.critical_from = out_.critical_truncated ? t : 0;
  std::map<std::uint32_t, std::uint64_t> all;
  if (!out_.critical_truncated) {
    for (const auto& [label, by_rank] : activity_ns_)
      for (std::uint64_t v : by_rank) all[label] += v;
  } else {
    for (const Location& l : locations_)
      for (const Segment& s : l.history) {
        if (s.end == kNever) continue;
        const std::uint32_t activity = s.function == kNone ? s.label : region_label_[s.function];
        all[activity] += overlap(t, last, s.start, s.end);
      }
  }
  const double ranks = static_cast<double>(std::max<std::size_t>(1, defs_.ranks.size()));
  for (const auto& [label, ns] : on_path) {
    PathShare& p = out_.critical[labels_[label]];
    p.ns += ns;
    out_.critical_ns += ns;
    p.mean_ns = static_cast<std::uint64_t>(static_cast<double>(all[label]) / ranks);
  }
}

}  // namespace perusetrace::report
