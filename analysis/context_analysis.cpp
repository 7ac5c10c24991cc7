#include "analysis/context_analysis.hpp"

#include <algorithm>
#include <set>

#include "events/catalogue.hpp"

namespace perusetrace::report {

std::vector<std::string> attribute_list(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0, end; at <= text.size(); at = end + 1) {
    end = std::min(text.find(',', at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
  }
  return out;
}

std::vector<std::string> annotation_attributes(const archive::Definitions& defs) {
  std::set<std::string> found;
  for (const archive::RegionDef& r : defs.regions)
    if (r.kind == archive::RegionKind::Annotation) found.insert(r.attribute);
  for (const archive::MetricDef& m : defs.metrics)
    if (m.annotation) found.insert(m.name);
  return {found.begin(), found.end()};
}

ContextAnalyses::ContextAnalyses(const archive::Definitions& defs, const std::string& by,
                                 Report& out) {
  if (!by.empty()) {
    all_.push_back(std::make_unique<ContextAnalysis>(defs, attribute_list(by), out.by_context));
    return;
  }
  std::vector<std::string> found = annotation_attributes(defs);
  out.by_context.found = found;
  if (found.size() > kShownAlone) found.resize(kShownAlone);
  out.by_attribute.resize(found.size());  // not resized again: the analyses hold references
  for (std::size_t a = 0; a < found.size(); ++a)
    all_.push_back(std::make_unique<ContextAnalysis>(defs, std::vector<std::string>{found[a]},
                                                     out.by_attribute[a]));
}

ContextAnalysis::ContextAnalysis(const archive::Definitions& defs,
                                 const std::vector<std::string>& attributes, ByContext& out)
    : defs_(defs), out_(out) {
  out_.attributes = attributes;
  out_.found = annotation_attributes(defs);
  locations_.resize(defs.locations.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    locations_[l].rank = defs.locations[l].rank;
  posted_.resize(defs.ranks.size());
  process_annotations_.resize(defs.ranks.size());
  process_set_values_.resize(defs.ranks.size());
  locations_of_rank_.resize(defs.ranks.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l)
    if (defs.locations[l].rank < defs.ranks.size())
      locations_of_rank_[defs.locations[l].rank].push_back(static_cast<std::uint32_t>(l));
  event_of_region_.assign(defs.regions.size(), -1);
  for (std::size_t r = 0; r < defs.regions.size(); ++r) {
    if (defs.regions[r].kind != archive::RegionKind::Peruse) continue;
    const auto e = find_event(defs.peruse_events[defs.regions[r].peruse_index]);
    if (e) event_of_region_[r] = static_cast<int>(*e);
  }
}

bool ContextAnalysis::matches(const std::string& attribute, std::size_t asked) const {
  return attribute == out_.attributes[asked];
}

// Recomputed only after the location's annotations changed, so an MPI call or a send costs a
// lookup of the cached id.
std::uint32_t ContextAnalysis::context_of(Location& l) {
  if (l.context != kNone) return l.context;
  std::vector<std::string> values(out_.attributes.size());
  std::vector<bool> nested(out_.attributes.size(), false);
  for (std::size_t a = 0; a < out_.attributes.size(); ++a) {
    // The innermost open value of the attribute on the thread, or of the rank for a process-
    // scope one; else its latest set value.
    for (const auto* open : {&l.annotations, &process_annotations_[l.rank]}) {
      for (auto it = open->rbegin(); it != open->rend() && !nested[a]; ++it) {
        const archive::RegionDef& r = defs_.regions[*it];
        if (matches(r.attribute, a)) {
          values[a] = r.value;
          nested[a] = true;
        }
      }
    }
    if (nested[a]) continue;
    for (const auto* set : {&process_set_values_[l.rank], &l.set_values})
      for (const auto& [metric, value] : *set)
        if (matches(defs_.metrics[metric].name, a)) values[a] = std::to_string(value);
  }
  auto [it, fresh] = ids_.try_emplace(values, static_cast<std::uint32_t>(out_.contexts.size()));
  if (fresh) {
    ContextStat stat;
    stat.values = values;
    out_.contexts.push_back(std::move(stat));
  }
  l.context = it->second;
  return l.context;
}

void ContextAnalysis::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  Location& l = locations_[loc];
  const archive::RegionDef& r = defs_.regions[region];
  if (r.kind == archive::RegionKind::Annotation && r.process_scope) {
    process_annotations_[l.rank].push_back(region);
    for (const std::uint32_t other : locations_of_rank_[l.rank]) locations_[other].context = kNone;
  } else if (r.kind == archive::RegionKind::Annotation) {
    l.annotations.push_back(region);
    l.context = kNone;
  } else if (r.kind == archive::RegionKind::MpiFunction && l.mpi_depth++ == 0) {
    l.mpi_since = t;
    l.mpi_context = context_of(l);
  }
}

void ContextAnalysis::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size()) return;
  Location& l = locations_[loc];
  const archive::RegionDef& r = defs_.regions[region];
  if (r.kind == archive::RegionKind::Annotation) {
    // The writer keeps them nested; a damaged archive may not: the innermost of that region.
    auto& open = r.process_scope ? process_annotations_[l.rank] : l.annotations;
    const auto it = std::find(open.rbegin(), open.rend(), region);
    if (it != open.rend()) open.erase(std::next(it).base());
    if (r.process_scope)
      for (const std::uint32_t other : locations_of_rank_[l.rank])
        locations_[other].context = kNone;
    l.context = kNone;
  } else if (r.kind == archive::RegionKind::MpiFunction && l.mpi_depth > 0) {
    // Outermost calls only, in the context they began in: inside MPI the program annotates
    // nothing.
    if (--l.mpi_depth > 0) return;
    ContextStat& c = out_.contexts[l.mpi_context];
    FunctionStat& f = c.functions[r.name];
    const archive::CallCount n = archive::counted(l.fold, region, t - std::min(t, l.mpi_since));
    f.calls += n.calls;
    f.ns += n.ns;
    c.mpi_ns += n.ns;
  }
}

void ContextAnalysis::metric(std::uint32_t loc, std::uint64_t, std::uint32_t metric,
                             std::int64_t value) {
  if (metric >= defs_.metrics.size() || !defs_.metrics[metric].annotation) return;
  Location& l = locations_[loc];
  if (defs_.metrics[metric].process_scope) {
    process_set_values_[l.rank][metric] = value;
    for (const std::uint32_t other : locations_of_rank_[l.rank]) locations_[other].context = kNone;
    return;
  }
  l.set_values[metric] = value;
  l.context = kNone;
}

void ContextAnalysis::point_to_point(std::uint32_t loc, std::uint64_t,
                                     const archive::PointToPoint& e) {
  if (e.kind != archive::P2pKind::Send && e.kind != archive::P2pKind::Recv) return;
  ContextStat& c = out_.contexts[context_of(locations_[loc])];
  const bool sent = e.kind == archive::P2pKind::Send;
  ++(sent ? c.sent : c.received);
  (sent ? c.sent_bytes : c.received_bytes) += e.bytes;
}

void ContextAnalysis::sample(std::uint32_t loc, std::uint64_t, const archive::Sample& s) {
  if (s.state >= 3) return;  // a damaged archive's
  out_.contexts[context_of(locations_[loc])].sampled_ns[s.state] +=
      std::uint64_t{s.weight} * defs_.sampling_period_ns;
}

// A receive's wait in the posted queue, as the report's late-sender pattern measures it
// (Analysis::posted_queue), counted in the context the receive was posted in.
void ContextAnalysis::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                             const archive::PeruseFields& f) {
  if (region >= event_of_region_.size() || event_of_region_[region] < 0) return;
  const auto e = static_cast<PeruseEvent>(event_of_region_[region]);
  Location& l = locations_[loc];
  auto& posted = posted_[l.rank];
  if (e == PeruseEvent::REQ_INSERT_IN_POSTED_Q) {
    posted[f.request] = {t, context_of(l)};
  } else if (e == PeruseEvent::REQ_REMOVE_FROM_POSTED_Q) {
    const auto it = posted.find(f.request);
    if (it == posted.end()) return;
    ContextStat& c = out_.contexts[it->second.context];
    ++c.posted_queue_count;
    c.posted_queue_ns += t - std::min(t, it->second.since);
    posted.erase(it);
  }
}

}  // namespace perusetrace::report
