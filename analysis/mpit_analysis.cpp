#include "analysis/mpit_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

#include "record/archive_schema.hpp"

namespace perusetrace::report {

namespace {

constexpr std::string_view kMoves = " moves", kChange = " change";

bool ends_with(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

// "A; B; C" as the items A, B, C (a value's own ';' is written as ',').
std::vector<std::string> items(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find("; ", at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 2;
  }
  return out;
}

// "NAME=VALUE" split at its first '='.
std::pair<std::string, std::string> name_value(const std::string& item) {
  const std::size_t eq = item.find('=');
  if (eq == std::string::npos) return {item, ""};
  return {item.substr(0, eq), item.substr(eq + 1)};
}

}  // namespace

void read_cvars(const archive::Definitions& defs, Mpit& out) {
  std::map<std::string, std::string> rank0;
  for (const std::string& item : items(defs.cvars)) rank0.insert(name_value(item));
  out.cvars = rank0.size();
  for (const std::string& item : items(defs.cvars_differ)) {
    // "RANK NAME=VALUE"
    const std::size_t space = item.find(' ');
    if (space == std::string::npos) continue;
    CvarItem c;
    c.rank = std::atoi(item.substr(0, space).c_str());
    std::tie(c.name, c.value) = name_value(item.substr(space + 1));
    if (auto it = rank0.find(c.name); it != rank0.end()) c.rank0_value = it->second;
    out.differ.push_back(std::move(c));
  }
  for (const std::string& item : items(defs.cvars_set)) {
    // "NAME=VALUE: set" or "NAME=VALUE: not set, WHY"; the value may hold ": " itself.
    CvarItem c;
    std::size_t colon = item.rfind(": set");
    c.set = colon != std::string::npos && colon + 5 == item.size();
    if (!c.set) colon = item.rfind(": not set");
    if (colon == std::string::npos) colon = item.size();
    std::tie(c.name, c.value) = name_value(item.substr(0, colon));
    if (!c.set && colon < item.size()) c.note = item.substr(colon + 2);
    out.set.push_back(std::move(c));
  }
}

MpitAnalysis::MpitAnalysis(const archive::Definitions& defs, Report& out)
    : defs_(defs), out_(out.mpit) {
  bin_ns_ = std::max<std::uint64_t>(1, (defs.trace_length + kTimeBins - 1) / kTimeBins);
  stacks_.resize(defs.locations.size());
  members_.resize(defs.metrics.size());
  const std::string_view prefix = trace::kPvarMetricPrefix;
  std::map<std::string_view, std::uint32_t> by_name;
  for (std::uint32_t m = 0; m < defs.metrics.size(); ++m)
    if (defs.metrics[m].name.rfind(prefix, 0) == 0) by_name[defs.metrics[m].name] = m;
  // A watermark is the member whose " moves" and " change" members exist; those two fold in.
  auto watermark = [&](const std::string& name) {
    return by_name.count(name + std::string(kMoves)) > 0 &&
           by_name.count(name + std::string(kChange)) > 0;
  };
  for (const auto& [name, m] : by_name) {
    const archive::MetricDef& def = defs.metrics[m];
    if (watermark(def.name) || def.mode == archive::MetricMode::Delta) continue;
    const std::pair<std::string_view, Part> parts[] = {{kMoves, Part::Moves},
                                                       {kChange, Part::Change}};
    for (const auto& [suffix, part] : parts) {
      if (!ends_with(name, suffix)) continue;
      const std::string owner(name.substr(0, name.size() - suffix.size()));
      if (watermark(owner)) members_[m].part = part;
    }
  }
  for (std::uint32_t m = 0; m < defs.metrics.size(); ++m) {
    const archive::MetricDef& def = defs.metrics[m];
    if (def.name.rfind(prefix, 0) != 0 || members_[m].part != Part::Main) continue;
    members_[m].stat = static_cast<std::int32_t>(out_.pvars.size());
    PvarStat s;
    s.name = def.name.substr(prefix.size());
    s.description = def.description;
    s.unit = def.unit;
    s.real = def.type == archive::MetricType::Double;
    s.kind = def.mode == archive::MetricMode::Delta ? PvarKind::Delta
             : watermark(def.name)                  ? PvarKind::Watermark
                                                    : PvarKind::Value;
    s.ranks.resize(defs.ranks.size());
    out_.pvars.push_back(std::move(s));
  }
  // The folded members point at their watermark.
  for (std::uint32_t m = 0; m < defs.metrics.size(); ++m) {
    if (members_[m].part == Part::Main) continue;
    const std::string& name = defs.metrics[m].name;
    const std::size_t cut = members_[m].part == Part::Moves ? kMoves.size() : kChange.size();
    members_[m].stat = members_[by_name[std::string_view(name).substr(0, name.size() - cut)]].stat;
  }
  read_cvars(defs, out_);
  // Every archive records the control variables, and some always differ (a rank's own id):
  // only MPI_T values or a control variable the user set make the section worth showing.
  out_.present = !out_.pvars.empty() || !out_.set.empty();
}

void MpitAnalysis::enter(std::uint32_t loc, std::uint64_t, std::uint32_t region) {
  if (region < defs_.regions.size() &&
      defs_.regions[region].kind == archive::RegionKind::MpiFunction)
    stacks_[loc].push_back(region);
}

void MpitAnalysis::leave(std::uint32_t loc, std::uint64_t, std::uint32_t region) {
  // Unwind to the call left: a missing Leave must not keep its call open.
  std::vector<std::uint32_t>& stack = stacks_[loc];
  auto it = std::find(stack.rbegin(), stack.rend(), region);
  if (it != stack.rend()) stack.resize(static_cast<std::size_t>(stack.rend() - it) - 1);
}

const std::string& MpitAnalysis::place(std::uint32_t loc) const {
  static const std::string outside = kOutsideMpi;
  const std::vector<std::uint32_t>& stack = stacks_[loc];
  return stack.empty() ? outside : defs_.regions[stack.back()].name;
}

void MpitAnalysis::add(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value) {
  if (metric >= members_.size() || members_[metric].stat < 0) return;
  PvarStat& s = out_.pvars[static_cast<std::size_t>(members_[metric].stat)];
  const std::uint32_t rank = defs_.locations[loc].rank;
  PvarRank& r = s.ranks[rank];
  if (members_[metric].part == Part::Moves) {
    r.moves = value;
    return;
  }
  if (members_[metric].part == Part::Change) {
    r.change = value;
    return;
  }
  PvarPlace& p = s.places[place(loc)];
  ++s.values;
  ++p.values;
  if (s.kind == PvarKind::Delta) {
    r.total += value;
    p.change += value;
    s.bins[std::min<std::size_t>(kTimeBins - 1, t / bin_ns_)] += value;
  } else {
    r.min = r.values == 0 ? value : std::min(r.min, value);
    r.max = r.values == 0 ? value : std::max(r.max, value);
    r.last = value;
    p.highest = p.values == 1 ? value : std::max(p.highest, value);
    if (s.kind == PvarKind::Watermark) {
      // How much it rose here, from its previous value on this location (0 before the first).
      double& before = previous_[(static_cast<std::uint64_t>(metric) << 32) | loc];
      if (value > before) p.change += value - before;
      before = value;
    }
  }
  ++r.values;
}

std::vector<const PvarStat*> ranked(const Mpit& m, PvarKind kind) {
  std::vector<const PvarStat*> out;
  for (const PvarStat& s : m.pvars)
    if (s.kind == kind && s.varied()) out.push_back(&s);
  auto size = [&](const PvarStat* s) {
    return kind == PvarKind::Delta ? std::abs(s->total()) : s->highest();
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const PvarStat* a, const PvarStat* b) { return size(a) > size(b); });
  return out;
}

std::vector<std::pair<std::string, PvarPlace>> places_by_change(const PvarStat& s) {
  std::vector<std::pair<std::string, PvarPlace>> out(s.places.begin(), s.places.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second.change) > std::abs(b.second.change);
  });
  return out;
}

}  // namespace perusetrace::report
