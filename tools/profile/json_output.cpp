#include "tools/profile/json_output.hpp"

#include <fmt/core.h>

#include "analysis/json_text.hpp"

namespace perusetrace::profile {

std::string json_string(const std::string& s) {
  return archive::json_string(s);
}

std::string json_counts(const Counts& c) {
  std::string out = "{";
  for (int k = 0; k < kCategories; ++k)
    if (c.n[k] > 0)
      out +=
          fmt::format("{}{}:{}", out.size() > 1 ? "," : "", json_string(kCategoryKeys[k]), c.n[k]);
  return out + "}";
}

namespace {

std::string rank_counts(const std::map<std::uint32_t, Counts>& ranks) {
  std::string out = "{";
  for (const auto& [rank, c] : ranks)
    out += fmt::format("{}\"{}\":{}", out.size() > 1 ? "," : "", rank, json_counts(c));
  return out + "}";
}

// The tree as nested objects, written without recursion (call paths can be deep).
std::string tree(const Profile& p) {
  std::string out;
  // (node, next child to write)
  std::vector<std::pair<std::uint32_t, std::size_t>> stack = {{0, 0}};
  auto open = [&](std::uint32_t n) {
    const Node& node = p.nodes[n];
    out += fmt::format(R"({{"name":{},"mpi":{},"self":{},"total":{},"ranks":{},"children":[)",
                       json_string(node.name), node.mpi ? "true" : "false", json_counts(node.self),
                       json_counts(node.total), rank_counts(node.ranks));
  };
  open(0);
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    const Node& node = p.nodes[n];
    if (next == node.children.size()) {
      out += "]}";
      stack.pop_back();
      continue;
    }
    if (next > 0) out += ',';
    const std::uint32_t child = node.children[next++];
    open(child);
    stack.emplace_back(child, 0);
  }
  return out;
}

std::string path_names(const Profile& p, std::uint32_t node) {
  std::string out = "[";
  for (const std::uint32_t n : p.path(node))
    out += (out.size() > 1 ? "," : "") + json_string(p.nodes[n].name);
  return out + "]";
}

}  // namespace

std::string to_json(const Profile& p) {
  std::string out = "{\"schema_version\":1";
  out += fmt::format(R"(,"archive":{},"creator":{},"settings":{})", json_string(p.archive),
                     json_string(p.creator), json_string(p.settings));
  out += fmt::format(R"(,"period_ns":{},"samples":{},"trace_ns":{},"analysis_ranks":{})",
                     p.period_ns, p.samples, p.trace_ns, p.analysis_ranks);
  out += ",\"categories\":[";
  for (int k = 0; k < kCategories; ++k)
    out += fmt::format("{}{}", k ? "," : "", json_string(kCategoryKeys[k]));
  out += fmt::format(R"(],"totals":{{"samples":{},"ns":{},"stall_ns":{},"work_ns":{}}})",
                     json_counts(p.counts), p.ns(p.counts.total()), p.ns(p.counts.stall()),
                     p.ns(p.counts.work()));
  out += ",\"ranks\":[";
  for (std::size_t i = 0; i < p.ranks.size(); ++i) {
    const RankStat& r = p.ranks[i];
    std::string ns = "{";
    for (int k = 0; k < kCategories; ++k)
      if (r.counts.n[k] > 0)
        ns += fmt::format("{}{}:{}", ns.size() > 1 ? "," : "", json_string(kCategoryKeys[k]),
                          p.ns(r.counts.n[k]));
    out +=
        fmt::format(R"({}{{"rank":{},"name":{},"threads":{},"samples":{},"ns":{}}},"total_ns":{},)"
                    R"("stall_ns":{},"work_ns":{}}})",
                    i ? "," : "", r.rank, json_string(r.name), r.threads, json_counts(r.counts), ns,
                    p.ns(r.counts.total()), p.ns(r.counts.stall()), p.ns(r.counts.work()));
  }
  out += "],\"sites\":[";
  for (std::size_t i = 0; i < p.sites.size(); ++i) {
    const Site& s = p.sites[i];
    out += fmt::format(
        R"({}{{"mpi_function":{},"caller":{},"file":{},"line":{},"path":{},"samples":{},)"
        R"("stall_ns":{},"ranks":{}}})",
        i ? "," : "", json_string(s.mpi_function), json_string(s.caller), json_string(s.file),
        s.line, path_names(p, s.node), json_counts(s.counts), p.ns(s.counts.stall()),
        rank_counts(s.ranks));
  }
  out += "],\"functions\":[";
  for (std::size_t i = 0; i < p.functions.size(); ++i) {
    const FunctionStat& f = p.functions[i];
    out += fmt::format(R"({}{{"name":{},"mpi":{},"self":{},"total":{}}})", i ? "," : "",
                       json_string(f.name), f.mpi ? "true" : "false", json_counts(f.self),
                       json_counts(f.total));
  }
  out += "],\"tree\":" + tree(p) + "}\n";
  return out;
}

}  // namespace perusetrace::profile
