#include "tools/report/inside_mpi_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "analysis/advice.hpp"
#include "tools/report/text_output.hpp"

namespace perusetrace::report {

namespace {

std::string time_text(std::uint64_t ns) {
  return seconds_text(static_cast<double>(ns));
}

void protocol(std::FILE* out, const char* where, const ProtocolStat& p) {
  std::uint64_t messages = 0;
  for (const ProtocolClass& c : p.classes) messages += c.eager + c.rendezvous;
  if (messages == 0) return;
  fmt::print(out, "  {}: eager limit {}; largest eager message {} bytes, smallest rendezvous {}\n",
             where,
             p.parameter.empty() ? std::string("unknown")
                                 : fmt::format("{} = {} bytes", p.parameter, p.limit),
             p.eager_max, p.rendezvous_min ? fmt::format("{} bytes", p.rendezvous_min) : "-");
  fmt::print(out, "    {:<18}{:>10}{:>12}{:>14}{:>18}\n", "size", "eager", "rendezvous",
             "handshakes", "handshake time");
  for (std::size_t i = 0; i < p.classes.size(); ++i) {
    const ProtocolClass& c = p.classes[i];
    if (c.eager + c.rendezvous == 0) continue;
    fmt::print(out, "    {:<18}{:>10}{:>12}{:>14}{:>18}\n", size_class_label(i), c.eager,
               c.rendezvous, c.handshakes, time_text(c.handshake_ns));
  }
}

}  // namespace

void write_what_to_try(std::FILE* out, const Report& report) {
  const std::vector<Advice> advice = what_to_try(report);
  if (advice.empty()) return;
  fmt::print(out, "\nWhat to try (ranked by the time at stake in this run)\n");
  int n = 0;
  for (const Advice& a : advice) {
    if (++n > 8) break;
    fmt::print(out, "  {}. [{}, {}] {}\n     try: {}\n", n, a.kind, time_text(a.ns), a.finding,
               a.change);
  }
}

void write_inside_mpi(std::FILE* out, const Report& report) {
  const InsideMpi& in = report.inside;
  const UnexpectedCopies& u = in.unexpected;
  std::uint64_t searches = 0;
  for (const SearchDepth& d : in.searches.posted) searches += d.searches;
  if (!in.transfers && searches == 0) return;
  fmt::print(out,
             "\nInside MPI (Peruse: the program's receives by protocol, copies through the "
             "unexpected queue, queue searches)\n");
  protocol(out, "within hosts", in.intra);
  protocol(out, "between hosts", in.inter);
  if (u.messages > 0) {
    fmt::print(out,
               "  copied twice (matched in the unexpected queue): {} messages, {} bytes, the "
               "copies out of the queue {} (their XFER_BEGIN..END)\n",
               u.messages, u.bytes, time_text(u.copy_ns));
    if (u.rendezvous > 0)
      fmt::print(out,
                 "  rendezvous messages whose first fragment waited in the unexpected queue: {}\n",
                 u.rendezvous);
    for (const auto& [path, c] : u.receives)
      fmt::print(out, "    {:>8} messages {:>12} bytes  {:>14}  posted late by {}\n", c.count,
                 c.bytes, time_text(c.ns), path);
  }
  if (!in.searches.paths.empty()) {
    std::vector<std::pair<std::string, PathCost>> paths(in.searches.paths.begin(),
                                                        in.searches.paths.end());
    std::sort(paths.begin(), paths.end(),
              [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    fmt::print(out, "  queue searches by where they ran (the longest in all):\n");
    for (std::size_t i = 0; i < paths.size() && i < 5; ++i)
      fmt::print(out, "    {:>10} searches  {:>14}  {}\n", paths[i].second.count,
                 time_text(paths[i].second.ns), paths[i].first);
  }
  if (searches > 0) {
    fmt::print(out, "  posted-queue searches by the queue's depth:\n");
    for (std::size_t i = 0; i < in.searches.posted.size(); ++i) {
      const SearchDepth& d = in.searches.posted[i];
      if (d.searches == 0) continue;
      const std::string depth = i + 1 < kDepthFrom.size()
                                    ? fmt::format("{}-{}", kDepthFrom[i], kDepthFrom[i + 1] - 1)
                                    : fmt::format("{} or more", kDepthFrom[i]);
      fmt::print(out, "    depth {:<12}{:>10} searches  mean {:>12}  max {:>12}\n", depth,
                 d.searches, time_text(d.ns / d.searches), time_text(d.max_ns));
    }
  }
}

}  // namespace perusetrace::report
