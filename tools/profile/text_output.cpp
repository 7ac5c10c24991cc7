#include "tools/profile/text_output.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace perusetrace::profile {

namespace {

constexpr std::size_t kTop = 10;
constexpr std::size_t kTopRanks = 5;

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// "message 0.600 s, collective 0.300 s": the stall reasons with time, most first.
std::string stall_reasons(const Profile& p, const Counts& c) {
  std::vector<std::pair<std::uint64_t, int>> reasons;
  for (int k = kStall; k <= kStallIo; ++k)
    if (c.n[k] > 0) reasons.emplace_back(c.n[k], k);
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (const auto& [n, k] : reasons) {
    if (!text.empty()) text += ", ";
    const std::string key = kCategoryKeys[k];
    text += fmt::format("{} {:.3f} s", key == "stall" ? "other" : key.substr(6), p.seconds(n));
  }
  return text;
}

// "1 (0.600 s), 0 (0.010 s)": the ranks with stall time, most first.
std::string stall_ranks(const Profile& p, const std::map<std::uint32_t, Counts>& ranks) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order;
  for (const auto& [rank, c] : ranks)
    if (c.stall() > 0) order.emplace_back(c.stall(), rank);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (std::size_t i = 0; i < order.size() && i < 3; ++i)
    text +=
        fmt::format("{}{} ({:.3f} s)", i ? ", " : "", order[i].second, p.seconds(order[i].first));
  if (order.size() > 3) text += fmt::format(" and {} more", order.size() - 3);
  return text;
}

std::string site_place(const Site& s) {
  if (s.file.empty()) return s.caller;
  const std::size_t slash = s.file.rfind('/');
  return fmt::format("{} ({}:{})", s.caller,
                     slash == std::string::npos ? s.file : s.file.substr(slash + 1), s.line);
}

void states(std::FILE* out, const Profile& p) {
  const std::uint64_t all = p.counts.total();
  fmt::print(out, "Time per state, all ranks{:>20}{:>8}\n", "s", "%");
  auto row = [&](const std::string& label, std::uint64_t n) {
    fmt::print(out, "  {:<38}{:>9.3f}{:>8.1f}\n", label, p.seconds(n), percent(n, all));
  };
  row("not in MPI", p.counts.n[kNotInMpi]);
  row("MPI work", p.counts.work());
  for (int k = kWork; k <= kWorkIo; ++k)
    if (p.counts.n[k] > 0 && p.counts.n[k] != p.counts.work())
      row(std::string("  ") + (k == kWork ? "other" : kCategoryKeys[k] + 5), p.counts.n[k]);
  row("MPI stall", p.counts.stall());
  for (int k = kStall; k <= kStallIo; ++k)
    if (p.counts.n[k] > 0)
      row(std::string("  ") + (k == kStall ? "other" : kCategoryKeys[k] + 6), p.counts.n[k]);
  if (p.counts.n[kUnknown] > 0) row("unknown state (damaged samples)", p.counts.n[kUnknown]);
}

}  // namespace

std::string path_text(const Profile& p, std::uint32_t node, std::size_t frames) {
  const std::vector<std::uint32_t> path = p.path(node);
  std::string text = path.size() > frames ? "... > " : "";
  for (std::size_t i = path.size() > frames ? path.size() - frames : 0; i < path.size(); ++i)
    text += p.nodes[path[i]].name + (i + 1 < path.size() ? " > " : "");
  return text;
}

void write_text(std::FILE* out, const Profile& p) {
  std::uint32_t threads = 0;
  for (const RankStat& r : p.ranks) threads += r.threads;
  fmt::print(out, "perusetrace profile: {}", p.archive);
  if (p.parallel)
    fmt::print(out, " (computed by {} analysis rank{})", p.analysis_ranks,
               p.analysis_ranks == 1 ? "" : "s");
  fmt::print(out, "\n");
  fmt::print(out,
             "{} samples, one every {:.3f} ms per thread, on {} ranks ({} threads): {:.3f} s of "
             "thread time\n\n",
             p.samples, static_cast<double>(p.period_ns) * 1e-6, p.ranks.size(), threads,
             p.seconds(p.samples));
  states(out, p);

  // Call paths: the MPI frames of the tree.
  std::vector<std::uint32_t> paths;
  for (std::uint32_t n = 0; n < p.nodes.size(); ++n)
    if (p.nodes[n].mpi && p.nodes[n].total.stall() > 0) paths.push_back(n);
  std::stable_sort(paths.begin(), paths.end(), [&](std::uint32_t a, std::uint32_t b) {
    return p.nodes[a].total.stall() > p.nodes[b].total.stall();
  });
  fmt::print(out, "\nTop call paths by MPI stall time (all ranks)\n");
  if (paths.empty()) fmt::print(out, "  none: no sample found a thread stalled in MPI\n");
  for (std::size_t i = 0; i < paths.size() && i < kTop; ++i) {
    const Node& n = p.nodes[paths[i]];
    fmt::print(out, "  {:>9.3f} s  {}\n", p.seconds(n.total.stall()), path_text(p, paths[i]));
    fmt::print(out, "               {}; ranks {}\n", stall_reasons(p, n.total),
               stall_ranks(p, n.ranks));
  }

  fmt::print(out, "\nTop MPI call sites by stall time (all ranks)\n");
  std::size_t shown = 0;
  for (const Site& s : p.sites) {
    if (s.counts.stall() == 0 || shown++ == kTop) break;
    fmt::print(out, "  {:>9.3f} s  {} in {}; ranks {}\n", p.seconds(s.counts.stall()),
               s.mpi_function, site_place(s), stall_ranks(p, s.ranks));
  }
  if (shown == 0) fmt::print(out, "  none\n");

  fmt::print(out, "\nTop functions by self time (all ranks; total: with their callees)\n");
  fmt::print(out, "  {:>9}  {:>9}  {:>9}  {}\n", "self s", "total s", "stall s", "function");
  for (std::size_t i = 0; i < p.functions.size() && i < kTop; ++i) {
    const FunctionStat& f = p.functions[i];
    if (f.self.total() == 0) break;
    fmt::print(out, "  {:>9.3f}  {:>9.3f}  {:>9.3f}  {}\n", p.seconds(f.self.total()),
               p.seconds(f.total.total()), p.seconds(f.total.stall()), f.name);
  }

  // The ranks that stall most, with the call path that stalls most on each.
  std::vector<const RankStat*> ranks;
  for (const RankStat& r : p.ranks) ranks.push_back(&r);
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankStat* a, const RankStat* b) {
    return a->counts.stall() > b->counts.stall();
  });
  fmt::print(out, "\nRanks by MPI stall time\n");
  for (std::size_t i = 0; i < ranks.size() && i < kTopRanks; ++i) {
    const RankStat& r = *ranks[i];
    std::uint32_t top = kNoNode;
    std::uint64_t most = 0;
    for (const std::uint32_t n : paths) {
      const auto it = p.nodes[n].ranks.find(r.rank);
      if (it != p.nodes[n].ranks.end() && it->second.stall() > most)
        most = it->second.stall(), top = n;
    }
    fmt::print(out, "  rank {}: stall {:.3f} s ({:.1f}% of its {:.3f} s)", r.rank,
               p.seconds(r.counts.stall()), percent(r.counts.stall(), r.counts.total()),
               p.seconds(r.counts.total()));
    if (top != kNoNode)
      fmt::print(out, ", most in {} ({:.3f} s)", path_text(p, top), p.seconds(most));
    fmt::print(out, "\n");
  }
  if (ranks.size() > kTopRanks)
    fmt::print(out, "  ({} more ranks in --json)\n", ranks.size() - kTopRanks);
}

}  // namespace perusetrace::profile
