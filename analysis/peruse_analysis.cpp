#include "analysis/peruse_analysis.hpp"

#include <algorithm>

#include "analysis/eager_limits.hpp"
#include "analysis/requirements.hpp"
#include "events/catalogue.hpp"
#include "reader/other_jobs.hpp"
#include "reader/world_rank.hpp"

namespace perusetrace::report {

namespace {

// The catalogue's number of a Peruse event named in the archive, or -1.
int event_index(const std::string& name) {
  const auto e = find_event(name);
  return e ? static_cast<int>(*e) : -1;
}

}  // namespace

Analysis::Analysis(const archive::Definitions& defs, Report& out) : defs_(defs), out_(out) {
  out_.events = defs.total_events;
  out_.creator = defs.creator;
  out_.settings = defs.settings;
  out_.trace_ns = defs.trace_length;
  out_.bin_ns = std::max<std::uint64_t>(1, (defs.trace_length + kTimeBins - 1) / kTimeBins);
  const std::size_t n = defs.ranks.size();
  out_.ranks.resize(n);
  for (std::size_t r = 0; r < n; ++r) out_.ranks[r].name = defs.ranks[r].name;
  out_.matrix_count.assign(n * n, 0);
  out_.matrix_bytes.assign(n * n, 0);
  out_.placement.hosts.resize(defs.nodes.size());
  for (std::size_t h = 0; h < defs.nodes.size(); ++h)
    out_.placement.hosts[h].name = defs.nodes[h].name;
  for (std::size_t r = 0; r < n; ++r)
    if (defs.ranks[r].node < defs.nodes.size())
      out_.placement.hosts[defs.ranks[r].node].ranks.push_back(static_cast<std::uint32_t>(r));
  for (const archive::JobDef& job : defs.jobs) {
    JobStat& j = out_.jobs.emplace_back();
    j.name = job.name;
    j.relation = job.relation;
    j.archive = archive::job_archive(out_.archive, job);
    j.archive_found = archive::job_archive_exists(j.archive);
    j.processes = static_cast<std::uint32_t>(job.ranks.size());
  }
  ranks_.resize(n);
  locations_.resize(defs.locations.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    locations_[l].rank = defs.locations[l].rank;
  event_of_region_.assign(defs.regions.size(), -1);
  for (std::size_t r = 0; r < defs.regions.size(); ++r)
    if (defs.regions[r].kind == archive::RegionKind::Peruse)
      event_of_region_[r] = event_index(defs.peruse_events[defs.regions[r].peruse_index]);

  // What the archive can have: the selection it records, or else the regions it defines.
  bool found = false;
  std::vector<std::string> have = selected_events(defs.settings, found);
  if (!found) have = defs.peruse_events;
  auto has = [&](const char* e) { return std::find(have.begin(), have.end(), e) != have.end(); };
  remove_unexpected_selected_ = has("MSG_REMOVE_FROM_UNEX_Q");
  pull_limit_ = pull_limit(defs.cvars);
  track_requests_ = has("REQ_COMPLETE");
}

std::size_t Analysis::bin(std::uint64_t t) const {
  return std::min<std::size_t>(kTimeBins - 1, t / out_.bin_ns);
}

JobStat* Analysis::other_job(std::uint32_t comm, std::uint32_t peer) {
  if (!archive::other_job_member(defs_, comm, peer)) return nullptr;
  const std::uint32_t job = defs_.comms[comm].job;
  return job < out_.jobs.size() ? &out_.jobs[job] : nullptr;
}

// Where the traffic between world ranks a and b goes; nullptr when either is unknown (a wildcard
// receive never matched, a peer outside the communicator definitions).
PlacementStat* Analysis::placement(std::int64_t a, std::int64_t b) {
  const auto n = static_cast<std::int64_t>(defs_.ranks.size());
  if (a < 0 || b < 0 || a >= n || b >= n) return nullptr;
  const bool same = defs_.ranks[static_cast<std::size_t>(a)].node ==
                    defs_.ranks[static_cast<std::size_t>(b)].node;
  return same ? &out_.placement.intra : &out_.placement.inter;
}

// ---- MPI calls ---------------------------------------------------------------------------

void Analysis::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size() ||
      defs_.regions[region].kind != archive::RegionKind::MpiFunction)
    return;
  Location& l = locations_[loc];
  const auto role = defs_.regions[region].role;
  if (l.stack.empty() &&
      (role == archive::RegionRole::Collective || role == archive::RegionRole::Barrier)) {
    l.collective = defs_.regions[region].name;
    ++out_.collectives[l.collective].calls;
  }
  l.stack.push_back({region, t});
}

void Analysis::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size() ||
      defs_.regions[region].kind != archive::RegionKind::MpiFunction)
    return;
  Location& l = locations_[loc];
  if (l.stack.empty()) return;
  const Frame f = l.stack.back();
  l.stack.pop_back();
  RankStats& rs = out_.ranks[l.rank];
  FunctionStat& fs = rs.functions[defs_.regions[f.region].name];
  const archive::CallCount c = archive::counted(l.fold, f.region, t - std::min(t, f.since));
  fs.calls += c.calls;
  fs.ns += c.ns;
  if (!l.stack.empty()) return;
  rs.mpi_ns += c.ns;
  l.collective.clear();
  // Requests that completed in this call: blocking ones are done with now.
  for (const std::uint64_t id : l.completed) {
    auto& reqs = ranks_[l.rank].requests;
    auto it = reqs.find(id);
    if (it == reqs.end()) continue;
    it->second.settled = true;
    maybe_forget(l.rank, id);
  }
  l.completed.clear();
}

// ---- point-to-point records --------------------------------------------------------------

void Analysis::send(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p) {
  const std::uint32_t rank = locations_[loc].rank;
  RankStats& rs = out_.ranks[rank];
  ++rs.sent;
  rs.sent_bytes += p2p.bytes;
  if (JobStat* job = other_job(p2p.comm, p2p.peer)) {
    ++job->sent;
    job->sent_bytes += p2p.bytes;
  }
  const std::int32_t to = archive::world_rank(defs_, p2p.comm, p2p.peer, rank);
  if (to >= 0 && static_cast<std::size_t>(to) < out_.ranks.size()) {
    const std::size_t cell = rank * out_.ranks.size() + static_cast<std::size_t>(to);
    ++out_.matrix_count[cell];
    out_.matrix_bytes[cell] += p2p.bytes;
  }
  if (PlacementStat* p = placement(rank, to)) {
    ++p->messages;
    p->bytes += p2p.bytes;
  }
  if (!p2p.blocking && p2p.request != 0 && track_requests_)
    request_nonblocking(loc, t, p2p.request);
}

void Analysis::recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  if (request != 0 && track_requests_) request_nonblocking(loc, t, request);
}

void Analysis::request_nonblocking(std::uint32_t loc, std::uint64_t t, std::uint64_t id) {
  Request& r = request(locations_[loc].rank, id, t, nullptr);
  r.nonblocking = true;
}

void Analysis::recv(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p) {
  RankStats& rs = out_.ranks[locations_[loc].rank];
  ++rs.received;
  rs.received_bytes += p2p.bytes;
  if (JobStat* job = other_job(p2p.comm, p2p.peer)) {
    ++job->received;
    job->received_bytes += p2p.bytes;
  }
  if (!p2p.blocking && p2p.request != 0) collected(loc, t, p2p.request);
}

void Analysis::send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  if (request != 0) collected(loc, t, request);
}

void Analysis::request_cancelled(std::uint32_t loc, std::uint64_t, std::uint64_t request) {
  const std::uint32_t rank = locations_[loc].rank;
  if (ranks_[rank].requests.erase(request) > 0) --in_flight_;
  ranks_[rank].posted.erase(request);
}

// The program collected a nonblocking request in the MPI call running on `loc`: if MPI had
// completed it before that call began, the difference is how long it lay complete (no wait).
void Analysis::collected(std::uint32_t loc, std::uint64_t, std::uint64_t id) {
  const Location& l = locations_[loc];
  auto& reqs = ranks_[l.rank].requests;
  auto it = reqs.find(id);
  if (it == reqs.end()) return;
  Request& r = it->second;
  const std::uint64_t entered = l.stack.empty() ? kNever : l.stack.front().since;
  if (r.complete != kNever && entered != kNever && r.complete < entered) {
    PatternCase c;
    c.lost = entered - r.complete;
    c.time = r.complete;
    c.rank = l.rank;
    c.tag = r.tag;
    const auto self = static_cast<std::int32_t>(l.rank);
    c.sender = r.operation == 0 ? self : r.peer;
    c.receiver = r.operation == 0 ? r.peer : self;
    add_case(out_.complete_before_wait, c);
    out_.ranks[l.rank].complete_before_wait_ns += c.lost;
  }
  if (r.complete != kNever) count_message(l.rank, r);
  reqs.erase(it);
  --in_flight_;
}

// ---- Peruse ------------------------------------------------------------------------------

Analysis::Request& Analysis::request(std::uint32_t rank, std::uint64_t id, std::uint64_t t,
                                     const archive::PeruseFields* f) {
  auto [it, fresh] = ranks_[rank].requests.try_emplace(id);
  Request& r = it->second;
  if (fresh) {
    ++in_flight_;
    out_.requests_in_flight_max = std::max(out_.requests_in_flight_max, in_flight_);
  }
  if (r.first == kNever) r.first = t;
  if (f != nullptr) {
    if (r.peer < 0) r.peer = f->peer;
    if (r.bytes == 0) r.bytes = f->bytes;
    if (fresh || r.activate == kNever) {
      r.tag = f->tag;
      r.operation = f->operation;
    }
  }
  return r;
}

void Analysis::depth(QueueStat& q, std::uint64_t t, int change) {
  if (t > q.last_change) {
    q.depth_area += static_cast<long double>(q.depth) * static_cast<long double>(t - q.last_change);
    q.last_change = t;
  }
  q.depth = std::max<std::int64_t>(0, q.depth + change);
  q.max_depth = std::max(q.max_depth, q.depth);
  auto& b = q.max_in_bin[bin(t)];
  b = std::max(b, q.depth);
}

void Analysis::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                      const archive::PeruseFields& f) {
  if (region >= event_of_region_.size() || event_of_region_[region] < 0) return;
  const auto e = static_cast<PeruseEvent>(event_of_region_[region]);
  ++observed_[static_cast<std::size_t>(e)];
  Location& l = locations_[loc];
  switch (e) {
    case PeruseEvent::REQ_ACTIVATE:
      return activated(l, t, f);
    case PeruseEvent::REQ_INSERT_IN_POSTED_Q:
    case PeruseEvent::REQ_REMOVE_FROM_POSTED_Q:
      return posted_queue(e, l, t, f);
    case PeruseEvent::MSG_INSERT_IN_UNEX_Q:
    case PeruseEvent::MSG_REMOVE_FROM_UNEX_Q:
    case PeruseEvent::REQ_MATCH_UNEX:
      return unexpected_queue(e, l.rank, t, f);
    case PeruseEvent::SEARCH_POSTED_Q_BEGIN:
    case PeruseEvent::SEARCH_UNEX_Q_BEGIN:
    case PeruseEvent::SEARCH_POSTED_Q_END:
    case PeruseEvent::SEARCH_UNEX_Q_END:
      return queue_search(e, l, t);
    case PeruseEvent::REQ_XFER_BEGIN:
    case PeruseEvent::REQ_XFER_CONTINUE:
    case PeruseEvent::REQ_XFER_END:
    case PeruseEvent::REQ_COMPLETE:
      return transfer(e, l, t, f);
    default:
      return;
  }
}

// A request starts: collective traffic is counted under the call it belongs to.
void Analysis::activated(Location& l, std::uint64_t t, const archive::PeruseFields& f) {
  if (internal(l, f.tag)) {
    // A nonblocking collective's messages move in the Wait or Test that progresses it.
    std::string owner = l.collective;
    if (owner.empty() && !l.stack.empty()) {
      const std::string& call = defs_.regions[l.stack.front().region].name;
      if (call.rfind("MPI_Wait", 0) == 0 || call.rfind("MPI_Test", 0) == 0)
        owner = "nonblocking collectives (progressed in " + call + ")";
    }
    CollectiveStat& c =
        out_.collectives[owner.empty() ? std::string("(outside a collective call)") : owner];
    if (f.operation == 0) {
      ++c.sends;
      c.send_bytes += f.bytes;
    } else {
      ++c.receives;
      c.receive_bytes += f.bytes;
    }
  }
  if (!track_requests_) return;
  Request& r = request(l.rank, f.request, t, &f);
  r.activate = t;
  r.tag = f.tag;
  r.operation = f.operation;
  r.peer = f.peer;
  r.bytes = f.bytes;
}

namespace {

// A message's wait on `rank` from `since` to `t`, for a pattern.
PatternCase waited(std::uint32_t rank, std::uint64_t since, std::uint64_t t, std::int32_t sender,
                   std::int32_t tag) {
  PatternCase c;
  c.lost = t - std::min(t, since);
  c.time = since;
  c.sender = sender;
  c.receiver = static_cast<std::int32_t>(rank);
  c.tag = tag;
  c.rank = rank;
  return c;
}

}  // namespace

// A receive waits in the posted queue until its message comes: a measure of the receive (whether
// its process waited is the wait states' question).
void Analysis::posted_queue(PeruseEvent e, const Location& l, std::uint64_t t,
                            const archive::PeruseFields& f) {
  const std::uint32_t rank = l.rank;
  RankStats& rs = out_.ranks[rank];
  RankState& st = ranks_[rank];
  if (e == PeruseEvent::REQ_INSERT_IN_POSTED_Q) {
    depth(rs.posted, t, +1);
    st.posted[f.request] = {t, f.peer, f.tag, internal(l, f.tag)};
    return;
  }
  depth(rs.posted, t, -1);
  auto it = st.posted.find(f.request);
  if (it == st.posted.end()) return;
  PatternCase c =
      waited(rank, it->second.since, t, f.peer >= 0 ? f.peer : it->second.peer, it->second.tag);
  c.bytes = f.bytes;
  const bool in_collective = it->second.internal;
  st.posted.erase(it);
  if (in_collective) {
    add_case(out_.posted_queue_in_collectives, c);
    rs.posted_queue_in_collectives_ns += c.lost;
    return;
  }
  add_case(out_.posted_queue, c);
  rs.posted_queue_ns += c.lost;
  if (PlacementStat* p = placement(c.sender, c.receiver)) {
    ++p->posted_queue_count;
    p->posted_queue_ns += c.lost;
  }
}

// A message waits in the unexpected queue until its receive is posted.
void Analysis::unexpected_queue(PeruseEvent e, std::uint32_t rank, std::uint64_t t,
                                const archive::PeruseFields& f) {
  RankStats& rs = out_.ranks[rank];
  RankState& st = ranks_[rank];
  if (e == PeruseEvent::MSG_INSERT_IN_UNEX_Q) {
    depth(rs.unexpected, t, +1);
    st.unexpected.push_back({t, f.peer, f.tag, f.comm, f.bytes});
    return;
  }
  if (e == PeruseEvent::MSG_REMOVE_FROM_UNEX_Q) depth(rs.unexpected, t, -1);
  if ((e == PeruseEvent::MSG_REMOVE_FROM_UNEX_Q) != remove_unexpected_selected_) return;
  // The oldest waiting message this removal (or wildcard match) fits.
  auto it = std::find_if(st.unexpected.begin(), st.unexpected.end(), [&](const Unexpected& u) {
    return (f.peer < 0 || u.peer == f.peer) && (f.tag < 0 || u.tag == f.tag) &&
           (f.comm == archive::kNoComm || u.comm == f.comm);
  });
  if (it == st.unexpected.end()) it = st.unexpected.begin();
  if (it == st.unexpected.end()) return;
  PatternCase c = waited(rank, it->since, t, it->peer, it->tag);
  // Open MPI's MSG_* events carry no size; the receive that matched it does (REQ_MATCH_UNEX).
  c.bytes = it->bytes ? it->bytes : f.bytes;
  add_case(out_.unexpected_queue, c);
  rs.unexpected_queue_ns += c.lost;
  st.unexpected.erase(it);
}

void Analysis::queue_search(PeruseEvent e, Location& l, std::uint64_t t) {
  if (e == PeruseEvent::SEARCH_POSTED_Q_BEGIN) {
    l.search_posted = t;
    return;
  }
  if (e == PeruseEvent::SEARCH_UNEX_Q_BEGIN) {
    l.search_unexpected = t;
    return;
  }
  const bool posted = e == PeruseEvent::SEARCH_POSTED_Q_END;
  std::uint64_t& since = posted ? l.search_posted : l.search_unexpected;
  if (since == kNever) return;
  RankStats& rs = out_.ranks[l.rank];
  QueueStat& q = posted ? rs.posted : rs.unexpected;
  const std::uint64_t d = t - std::min(t, since);
  ++q.searches;
  q.search_ns += d;
  q.search_max_ns = std::max(q.search_max_ns, d);
  since = kNever;
}

// A request's data moves (begin, fragments, end) and it completes.
void Analysis::transfer(PeruseEvent e, Location& l, std::uint64_t t,
                        const archive::PeruseFields& f) {
  if (!track_requests_) return;
  const std::uint32_t rank = l.rank;
  Request& r = request(rank, f.request, t, &f);
  if (e == PeruseEvent::REQ_XFER_BEGIN) {
    if (r.xfer_begin == kNever) r.xfer_begin = t;
  } else if (e == PeruseEvent::REQ_XFER_CONTINUE) {
    ++r.fragments;
    if (r.last_fragment != kNever)
      out_.messages.fragment_interval_ns.add(static_cast<double>(t - r.last_fragment));
    if (r.first_fragment == kNever) {
      r.first_fragment = t;
      r.first_fragment_bytes = f.bytes;
    }
    r.last_fragment = t;
  } else if (e == PeruseEvent::REQ_XFER_END) {
    r.xfer_end = t;
    if (r.complete != kNever) {
      count_message(rank, r);
      maybe_forget(rank, f.request);
    }
  } else {
    r.complete = t;
    if (r.xfer_end != kNever || r.xfer_begin == kNever) count_message(rank, r);
    l.completed.push_back(f.request);
    if (l.stack.empty()) {  // completed outside any MPI call (another thread's progress)
      r.settled = true;
      maybe_forget(rank, f.request);
    }
  }
}

void Analysis::count_message(std::uint32_t rank, Request& r) {
  if (r.counted) return;
  r.counted = true;
  const bool same_host =
      r.peer >= 0 && static_cast<std::size_t>(r.peer) < defs_.ranks.size() &&
      rank < defs_.ranks.size() &&
      defs_.ranks[rank].node == defs_.ranks[static_cast<std::size_t>(r.peer)].node;
  const bool fragmented =
      went_rendezvous(r.fragments, r.first_fragment_bytes, r.bytes, same_host ? pull_limit_ : 0);
  MessageGroup& g = out_.messages.groups[r.operation ? 1 : 0][fragmented ? 1 : 0];
  ++g.count;
  g.bytes += r.bytes;
  const std::uint64_t start = r.activate != kNever ? r.activate : r.first;
  MessageCase m;
  m.rank = rank;
  m.peer = r.peer;
  m.tag = r.tag;
  m.operation = r.operation;
  m.bytes = r.bytes;
  m.time = start;
  m.fragments = r.fragments;
  SizeClassStat* size = r.operation ? &out_.messages.size_classes[size_class(r.bytes)] : nullptr;
  if (size != nullptr) {
    ++size->count;
    size->bytes += r.bytes;
  }
  if (r.complete != kNever && r.complete >= start) {
    m.logical = r.complete - start;
    g.logical_ns.add(static_cast<double>(m.logical));
  }
  const std::uint64_t phys_start = std::min(r.xfer_begin, r.first_fragment);
  if (phys_start != kNever && r.xfer_end != kNever && r.xfer_end >= phys_start) {
    m.physical = r.xfer_end - phys_start;
    g.physical_ns.add(static_cast<double>(m.physical));
    if (m.physical > 0 && r.bytes > 0) {
      const double bandwidth = static_cast<double>(r.bytes) * 1e9 / static_cast<double>(m.physical);
      g.bandwidth.add(bandwidth);
      if (size != nullptr) {
        size->bandwidth.add(bandwidth);
        size->transfer_bytes += r.bytes;
        size->transfer_ns += m.physical;
      }
      if (PlacementStat* p = placement(rank, r.peer)) p->bandwidth.add(bandwidth);
      const std::size_t b = bin(r.xfer_end);
      out_.messages.bin_bytes[b] += static_cast<double>(r.bytes);
      out_.messages.bin_ns[b] += static_cast<double>(m.physical);
    }
    if (fragmented) out_.messages.fragmented_ns += m.physical;
  }
  if (fragmented) {
    g.fragments.add(r.fragments);
    out_.messages.fragments += r.fragments;
  }
  out_.messages.slowest.add(m, static_cast<double>(m.logical));
  if (listener_ != nullptr) listener_->message_case(m);
}

void Analysis::add_case(Pattern& p, const PatternCase& c) {
  p.add(c);
  if (listener_ != nullptr) listener_->pattern_case(p, c);
}

// A request is forgotten once MPI completed it, its statistics are taken and, when nonblocking,
// the program collected it (see collected()).
void Analysis::maybe_forget(std::uint32_t rank, std::uint64_t id) {
  auto& reqs = ranks_[rank].requests;
  auto it = reqs.find(id);
  if (it == reqs.end()) return;
  const Request& r = it->second;
  if (r.settled && r.counted && !r.nonblocking) {
    reqs.erase(it);
    --in_flight_;
  }
}

void Analysis::finish() {
  for (std::size_t e = 0; e < kPeruseEventCount; ++e)
    if (observed_[e] > 0)
      out_.observed[std::string(info(static_cast<PeruseEvent>(e)).short_name)] += observed_[e];
  for (RankStats& rs : out_.ranks)
    for (QueueStat* q : {&rs.posted, &rs.unexpected}) {
      const std::uint64_t end = std::max(out_.trace_ns, q->last_change);
      q->depth_area +=
          static_cast<long double>(q->depth) * static_cast<long double>(end - q->last_change);
      q->last_change = end;
    }
  find_missing(out_);
}

}  // namespace perusetrace::report
