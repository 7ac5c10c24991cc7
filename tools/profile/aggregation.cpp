#include "tools/profile/aggregation.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <map>
#include <set>
#include <tuple>

namespace perusetrace::profile {

using archive::kNoContext;

void Aggregation::sample(std::uint32_t loc, std::uint64_t, const archive::Sample& s) {
  const std::uint32_t rank = defs_.locations[loc].rank;
  // A sample stands for every period its thread's timer expired in (Sample::weight).
  counts_[std::uint64_t{rank} << 32 | s.context].n[category_of(s.state, s.activity)] += s.weight;
  if (location_samples_.size() <= loc) location_samples_.resize(defs_.locations.size(), 0);
  location_samples_[loc] += s.weight;
  samples_ += s.weight;
}

// As 64-bit words in the machine's order (the processes of one analysis share it): the samples,
// the locations' samples (count, then each), the (rank, context) entries (count, then each key
// and its categories' counts), keys in order.
std::string Aggregation::partial() const {
  std::vector<std::uint64_t> words = {samples_, location_samples_.size()};
  words.insert(words.end(), location_samples_.begin(), location_samples_.end());
  std::vector<std::uint64_t> keys;
  keys.reserve(counts_.size());
  for (const auto& entry : counts_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  words.push_back(keys.size());
  for (const std::uint64_t key : keys) {
    words.push_back(key);
    const Counts& c = counts_.at(key);
    words.insert(words.end(), c.n.begin(), c.n.end());
  }
  return {reinterpret_cast<const char*>(words.data()), words.size() * sizeof(std::uint64_t)};
}

void Aggregation::add_partial(const std::string& bytes) {
  std::vector<std::uint64_t> words(bytes.size() / sizeof(std::uint64_t));
  if (bytes.size() % sizeof(std::uint64_t) != 0 || words.size() < 3)
    throw std::runtime_error("a partial profile of " + std::to_string(bytes.size()) + " bytes");
  std::memcpy(words.data(), bytes.data(), bytes.size());
  std::size_t at = 0;
  auto next = [&] {
    if (at >= words.size()) throw std::runtime_error("a partial profile cut short");
    return words[at++];
  };
  const std::uint64_t samples = next();
  const std::uint64_t locations = next();
  if (locations > defs_.locations.size())
    throw std::runtime_error("a partial profile of another archive (more locations)");
  if (location_samples_.size() < locations) location_samples_.resize(defs_.locations.size(), 0);
  for (std::uint64_t l = 0; l < locations; ++l) location_samples_[l] += next();
  const std::uint64_t entries = next();
  for (std::uint64_t e = 0; e < entries; ++e) {
    const std::uint64_t key = next();
    if ((key >> 32) >= defs_.ranks.size() || (key & 0xffffffffu) >= defs_.contexts.size())
      throw std::runtime_error("a partial profile of another archive (a rank or context it lacks)");
    Counts& c = counts_[key];
    for (std::uint64_t& n : c.n) n += next();
  }
  if (at != words.size()) throw std::runtime_error("a partial profile with bytes left over");
  samples_ += samples;
}

namespace {

// The tree under construction: each calling context maps to the frame of its name path.
class TreeBuilder {
 public:
  TreeBuilder(const archive::Definitions& defs, Profile& p)
      : defs_(defs), p_(p), node_of_(defs.contexts.size(), kNoNode) {
    p_.nodes.push_back(Node{"all", kNoNode, 0, false, {}, {}, {}, {}});
  }

  std::uint32_t node(std::uint32_t context) {
    // Walked iteratively: a deep recursion in the program is a deep context chain.
    std::vector<std::uint32_t> pending;
    for (std::uint32_t c = context; c != kNoContext && node_of_[c] == kNoNode;
         c = defs_.contexts[c].parent)
      pending.push_back(c);
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      const archive::ContextDef& c = defs_.contexts[*it];
      const std::uint32_t parent = c.parent == kNoContext ? 0 : node_of_[c.parent];
      const archive::RegionDef& region = defs_.regions[c.region];
      auto [child, fresh] =
          children_.try_emplace({parent, region.name}, static_cast<std::uint32_t>(p_.nodes.size()));
      if (fresh) {
        Node n;
        n.name = region.name;
        n.parent = parent;
        n.depth = p_.nodes[parent].depth + 1;
        n.mpi = region.kind == archive::RegionKind::MpiFunction;
        p_.nodes.push_back(std::move(n));
        p_.nodes[parent].children.push_back(child->second);
      }
      node_of_[*it] = child->second;
    }
    return node_of_[context];
  }

 private:
  const archive::Definitions& defs_;
  Profile& p_;
  std::vector<std::uint32_t> node_of_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> children_;
};

}  // namespace

Profile Aggregation::finish() const {
  Profile p;
  p.period_ns = defs_.sampling_period_ns;
  p.samples = samples_;
  p.trace_ns = defs_.trace_length;
  for (std::uint32_t r = 0; r < defs_.ranks.size(); ++r)
    p.ranks.push_back(RankStat{r, defs_.ranks[r].name, 0, {}});
  for (std::size_t l = 0; l < location_samples_.size(); ++l)
    if (location_samples_[l] > 0) ++p.ranks[defs_.locations[l].rank].threads;

  // In (rank, context) order, so that the tree's frames are numbered the same on every run.
  std::vector<std::pair<std::uint64_t, const Counts*>> entries;
  entries.reserve(counts_.size());
  for (const auto& [key, counts] : counts_) entries.emplace_back(key, &counts);
  std::sort(entries.begin(), entries.end());

  TreeBuilder tree(defs_, p);
  std::map<std::string, FunctionStat> functions;
  using SiteKey = std::tuple<std::string, std::string, std::string, std::uint32_t>;
  std::map<SiteKey, Site> sites;
  std::map<SiteKey, std::map<std::uint32_t, std::uint64_t>> site_nodes;  // node -> samples
  for (const auto& [key, counts_ptr] : entries) {
    const Counts& c = *counts_ptr;
    const auto rank = static_cast<std::uint32_t>(key >> 32);
    const auto context = static_cast<std::uint32_t>(key & 0xffffffffu);
    p.counts += c;
    p.ranks[rank].counts += c;
    const std::uint32_t leaf = tree.node(context);
    p.nodes[leaf].self += c;
    std::set<std::string> seen;  // a recursive function counts once per sample
    for (std::uint32_t n = leaf; n != kNoNode; n = p.nodes[n].parent) {
      Node& node = p.nodes[n];
      node.total += c;
      node.ranks[rank] += c;
      if (n == 0 || !seen.insert(node.name).second) continue;
      FunctionStat& f = functions[node.name];
      f.name = node.name;
      f.mpi = node.mpi;
      f.total += c;
      if (n == leaf) f.self += c;
    }
    // A call site: an MPI function's frame and the frame that called it.
    const archive::ContextDef& ctx = defs_.contexts[context];
    if (!p.nodes[leaf].mpi) continue;
    SiteKey site_key{p.nodes[leaf].name, "(no caller)", "", 0};
    if (ctx.parent != kNoContext) {
      const archive::ContextDef& caller = defs_.contexts[ctx.parent];
      site_key = {p.nodes[leaf].name, defs_.regions[caller.region].name, caller.file, caller.line};
    }
    Site& site = sites[site_key];
    std::tie(site.mpi_function, site.caller, site.file, site.line) = site_key;
    site.counts += c;
    site.ranks[rank] += c;
    site_nodes[site_key][leaf] += c.total();
  }
  for (auto& [key, f] : functions) p.functions.push_back(std::move(f));
  std::stable_sort(
      p.functions.begin(), p.functions.end(),
      [](const FunctionStat& a, const FunctionStat& b) { return a.self.total() > b.self.total(); });
  for (auto& [key, site] : sites) {
    const auto& nodes = site_nodes[key];
    site.node = std::max_element(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->first;
    p.sites.push_back(std::move(site));
  }
  std::stable_sort(p.sites.begin(), p.sites.end(), [](const Site& a, const Site& b) {
    return std::make_pair(a.counts.stall(), a.counts.total()) >
           std::make_pair(b.counts.stall(), b.counts.total());
  });
  return p;
}

}  // namespace perusetrace::profile
