#include "analysis/inside_mpi.hpp"

#include <algorithm>

#include "analysis/eager_limits.hpp"

namespace perusetrace::report {

namespace {

std::uint64_t key(std::uint32_t rank, std::uint64_t request) {
  return (static_cast<std::uint64_t>(rank) << 48) ^ request;
}

std::size_t depth_class(std::int64_t depth) {
  std::size_t c = 0;
  while (c + 1 < kDepthFrom.size() && depth >= kDepthFrom[c + 1]) ++c;
  return c;
}

}  // namespace

InsideMpiAnalysis::InsideMpiAnalysis(const archive::Definitions& defs, InsideMpi& out)
    : defs_(defs), out_(out) {
  event_of_region_.assign(defs.regions.size(), -1);
  for (std::size_t r = 0; r < defs.regions.size(); ++r) {
    const archive::RegionDef& d = defs.regions[r];
    if (d.kind != archive::RegionKind::Peruse || d.peruse_index >= defs.peruse_events.size())
      continue;
    if (const auto e = find_event(defs.peruse_events[d.peruse_index]))
      event_of_region_[r] = static_cast<int>(*e);
  }
  locations_.resize(defs.locations.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    locations_[l].rank = defs.locations[l].rank;
  posted_depth_.assign(defs.ranks.size(), 0);
  pull_limit_ = pull_limit(defs.cvars);
  for (ProtocolStat* p : {&out_.intra, &out_.inter}) {
    const EagerLimit limit = eager_limit(defs.cvars, p == &out_.intra);
    p->parameter = limit.parameter;
    p->limit = limit.bytes;
  }
}

std::string InsideMpiAnalysis::path_name(std::uint64_t key) const {
  const auto call = static_cast<std::uint32_t>(key >> 32), region = static_cast<std::uint32_t>(key);
  std::string p = call < defs_.regions.size() ? defs_.regions[call].name : "outside MPI";
  if (region < defs_.regions.size()) p += " in " + defs_.regions[region].name;
  return p;
}

void InsideMpiAnalysis::finish() {
  auto add = [](PathCost& to, const PathCost& c) {
    to.count += c.count;
    to.bytes += c.bytes;
    to.ns += c.ns;
  };
  for (const auto& [key, c] : late_receives_) add(out_.unexpected.receives[path_name(key)], c);
  for (const auto& [key, c] : posted_searches_)
    add(out_.searches.paths["posted queue: " + path_name(key)], c);
  for (const auto& [key, c] : unexpected_searches_)
    add(out_.searches.paths["unexpected queue: " + path_name(key)], c);
}

void InsideMpiAnalysis::enter(std::uint32_t loc, std::uint64_t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  const archive::RegionDef& d = defs_.regions[region];
  Location& l = locations_[loc];
  if (d.kind == archive::RegionKind::MpiFunction) {
    if (l.depth++ == 0) l.call = region;
  } else if ((d.kind == archive::RegionKind::Other || d.kind == archive::RegionKind::Annotation) &&
             !d.sampled && l.depth == 0) {
    l.regions.push_back(region);
  }
}

void InsideMpiAnalysis::leave(std::uint32_t loc, std::uint64_t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  const archive::RegionDef& d = defs_.regions[region];
  Location& l = locations_[loc];
  if (d.kind == archive::RegionKind::MpiFunction) {
    if (l.depth > 0 && --l.depth == 0) l.call = archive::kNoRegion;
    return;
  }
  auto it = std::find(l.regions.rbegin(), l.regions.rend(), region);
  if (it != l.regions.rend()) l.regions.erase(std::next(it).base());
}

ProtocolStat* InsideMpiAnalysis::placement(std::uint32_t rank, std::int32_t peer) {
  if (peer < 0 || static_cast<std::size_t>(peer) >= defs_.ranks.size() ||
      rank >= defs_.ranks.size())
    return nullptr;
  return defs_.ranks[rank].node == defs_.ranks[static_cast<std::size_t>(peer)].node ? &out_.intra
                                                                                    : &out_.inter;
}

void InsideMpiAnalysis::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                               const archive::PeruseFields& f) {
  if (region >= event_of_region_.size() || event_of_region_[region] < 0) return;
  const auto e = static_cast<PeruseEvent>(event_of_region_[region]);
  Location& l = locations_[loc];
  switch (e) {
    case PeruseEvent::REQ_INSERT_IN_POSTED_Q:
      ++posted_depth_[l.rank];
      return;
    case PeruseEvent::REQ_REMOVE_FROM_POSTED_Q:
      posted_depth_[l.rank] = std::max<std::int64_t>(0, posted_depth_[l.rank] - 1);
      return;
    case PeruseEvent::SEARCH_POSTED_Q_BEGIN:
      l.search_posted = t;
      l.depth_at_search = posted_depth_[l.rank];
      return;
    case PeruseEvent::SEARCH_UNEX_Q_BEGIN:
      l.search_unexpected = t;
      return;
    case PeruseEvent::SEARCH_POSTED_Q_END:
    case PeruseEvent::SEARCH_UNEX_Q_END:
      return search_end(l, t, e == PeruseEvent::SEARCH_POSTED_Q_END);
    default:
      break;
  }
  // The program's receives (Open MPI's collectives use tags below MPI_ANY_TAG).
  if (f.operation != 1 || f.tag < -1) return;
  const std::uint64_t k = key(l.rank, f.request);
  if (e == PeruseEvent::REQ_ACTIVATE) {
    Receive& r = receives_[k];
    r = Receive{};
    r.path = path_key(l);
    return;
  }
  auto it = receives_.find(k);
  if (it == receives_.end()) return;
  Receive& r = it->second;
  switch (e) {
    case PeruseEvent::REQ_MATCH_UNEX:
      r.unexpected = true;
      return;
    case PeruseEvent::REQ_XFER_BEGIN:
      out_.transfers = true;
      if (r.begin == kNever) r.begin = t;
      return;
    case PeruseEvent::REQ_XFER_CONTINUE:
      if (r.continues++ == 0) {
        r.first_continue = t;
        r.first_bytes = f.bytes;
      } else if (r.handshake == kNever)
        r.handshake = t - std::min(t, r.first_continue);
      return;
    case PeruseEvent::REQ_XFER_END:
      transfer_end(l, t, f, r);
      receives_.erase(it);
      return;
    case PeruseEvent::REQ_COMPLETE:
      if (r.begin == kNever) receives_.erase(it);  // matched nothing it transferred (a probe)
      return;
    default:
      return;
  }
}

// ob1 moves an eager message as one piece (XFER_BEGIN, XFER_END; out of the unexpected queue,
// one XFER_CONTINUE of all its bytes) and a rendezvous one as its first fragment (an
// XFER_CONTINUE of part of it) and then the rest once the sender has heard back.
void InsideMpiAnalysis::transfer_end(Location& l, std::uint64_t t, const archive::PeruseFields& f,
                                     Receive& r) {
  const std::uint64_t bytes = f.bytes;
  ProtocolStat* p = placement(l.rank, f.peer);
  const bool rendezvous =
      went_rendezvous(r.continues, r.first_bytes, bytes, p == &out_.intra ? pull_limit_ : 0);
  // Pulled whole (Open MPI 5's shared memory: one piece of all its bytes), the pull from the
  // match to the data's arrival is what the protocol costs the receiver.
  const bool pulled = r.continues <= 1 && r.first_bytes >= bytes && r.begin != kNever;
  if (rendezvous && r.handshake == kNever && (pulled || r.first_continue != kNever))
    r.handshake = t - std::min(t, pulled ? r.begin : r.first_continue);
  // A rendezvous message leaves only its first fragment in the queue; an eager one is there
  // whole.
  if (r.unexpected && rendezvous) ++out_.unexpected.rendezvous;
  if (r.unexpected && !rendezvous) {
    ++out_.unexpected.messages;
    out_.unexpected.bytes += bytes;
    const std::uint64_t copy = r.begin != kNever && t > r.begin ? t - r.begin : 0;
    out_.unexpected.copy_ns += copy;
    PathCost& path = late_receives_[r.path];
    ++path.count;
    path.bytes += bytes;
    path.ns += copy;
  }
  if (p == nullptr) return;
  ProtocolClass& c = p->classes[size_class(bytes)];
  if (!rendezvous) {
    ++c.eager;
    c.eager_bytes += bytes;
    p->eager_max = std::max(p->eager_max, bytes);
    return;
  }
  ++c.rendezvous;
  c.rendezvous_bytes += bytes;
  if (p->rendezvous_min == 0 || bytes < p->rendezvous_min) p->rendezvous_min = bytes;
  const bool handshake = r.handshake != kNever && r.handshake <= kHandshakeMaxNs;
  if (handshake) {
    ++c.handshakes;
    c.handshake_ns += r.handshake;
  }
  const std::uint64_t limit = p->limit ? p->limit : p == &out_.intra ? 4096 : 65536;
  if (bytes <= std::min(kNearFactor * limit, kNearMaxBytes)) {
    ++p->near;
    p->near_max_bytes = std::max(p->near_max_bytes, bytes);
    if (handshake) p->near_handshake_ns += r.handshake;
  }
}

void InsideMpiAnalysis::search_end(Location& l, std::uint64_t t, bool posted) {
  std::uint64_t& since = posted ? l.search_posted : l.search_unexpected;
  if (since == kNever) return;
  const std::uint64_t d = t - std::min(t, since);
  since = kNever;
  if (posted) {
    SearchDepth& s = out_.searches.posted[depth_class(l.depth_at_search)];
    ++s.searches;
    s.ns += d;
    s.max_ns = std::max(s.max_ns, d);
  }
  PathCost& p = (posted ? posted_searches_ : unexpected_searches_)[path_key(l)];
  ++p.count;
  p.ns += d;
}

}  // namespace perusetrace::report
