#include "tools/report/wait_state_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tools/report/text_output.hpp"

namespace perusetrace::report {

namespace {

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string cause_text(const std::pair<std::uint32_t, std::string>& cause) {
  return fmt::format("rank {}'s {}", cause.first, cause.second);
}

// The patterns with time, largest first.
std::vector<std::size_t> ranked(const WaitStates& w) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < kWaitPatterns; ++i)
    if (w.patterns[i].total > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return w.patterns[a].total > w.patterns[b].total;
  });
  return order;
}

template <class Map>
auto largest_pair(const Map& m) {
  return std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) {
    return a.second.first < b.second.first;
  });
}

template <class Map>
auto largest(const Map& m) {
  return std::max_element(m.begin(), m.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
}

}  // namespace

void write_wait_summary(std::FILE* out, const Report& report) {
  const WaitStates& w = report.wait_states;
  if (!w.present) return;
  std::uint64_t mpi = 0;
  for (const RankStats& r : report.ranks) mpi += r.mpi_ns;
  fmt::print(out, "\nWhat matters most (share of all rank time, {} ranks x {})\n",
             report.ranks.size(), seconds_text(static_cast<double>(report.trace_ns)));
  fmt::print(out, "  {:.1f} % in MPI calls, {:.1f} % waiting in them for other processes ({})\n",
             percent(mpi, w.rank_time_ns), percent(w.total_ns, w.rank_time_ns),
             seconds_text(static_cast<double>(w.total_ns)));
  const auto order = ranked(w);
  std::size_t shown = 0;
  for (std::size_t i : order) {
    if (shown++ == 5) break;
    const WaitPatternStat& p = w.patterns[i];
    std::string line = fmt::format("  {:.1f} % of all rank time is {}",
                                   percent(p.total, w.rank_time_ns), kWaitPatternInfo[i].title);
    if (!p.functions.empty()) line += " in " + largest(p.functions)->first;
    if (!p.causes.empty()) {
      const auto top = largest(p.causes);
      // The same activity late on several ranks in turn (imbalance that moves) is one cause
      // when no single rank's accounts for half the waiting.
      std::map<std::string, std::pair<std::uint64_t, std::string>> by_activity;
      for (const auto& [who, ns] : p.causes) {
        auto& [sum, ranks] = by_activity[who.second];
        sum += ns;
        ranks += (ranks.empty() ? "" : ", ") + std::to_string(who.first);
      }
      const auto activity = largest_pair(by_activity);
      if (2 * top->second < p.total && activity->second.first > top->second &&
          activity->second.second.find(',') != std::string::npos)
        line += fmt::format(", caused {:.0f} % by {} on ranks {} (most: {}, {:.0f} %)",
                            percent(activity->second.first, p.total), activity->first,
                            activity->second.second, cause_text(top->first),
                            percent(top->second, p.total));
      else
        line += fmt::format(", caused {:.0f} % by {}", percent(top->second, p.total),
                            cause_text(top->first));
    }
    fmt::print(out, "{}\n", line);
  }
  if (order.empty()) fmt::print(out, "  no process waited for another inside MPI\n");
  if (!w.causes.empty()) {
    const auto top =
        std::max_element(w.causes.begin(), w.causes.end(), [](const auto& a, const auto& b) {
          return a.second.direct + a.second.propagated < b.second.direct + b.second.propagated;
        });
    fmt::print(out, "  the costliest delay: {}, {:.1f} % of all waiting\n", cause_text(top->first),
               percent(top->second.direct + top->second.propagated, w.total_ns));
  }
}

void write_wait_states(std::FILE* out, const Report& report) {
  const WaitStates& w = report.wait_states;
  if (!w.present) return;
  const std::size_t n = report.ranks.size();
  fmt::print(out,
             "\nWait states (time inside MPI calls spent waiting for another process; every ns "
             "in one pattern)\n");
  fmt::print(out, "  {:<6}{:>14}{:>14}{:>8}\n", "rank", "in MPI", "waiting", "share");
  for (std::size_t r = 0; r < n; ++r)
    fmt::print(out, "  {:<6}{:>14}{:>14}{:>7.1f}%\n", r,
               seconds_text(static_cast<double>(report.ranks[r].mpi_ns)),
               seconds_text(static_cast<double>(w.rank_wait_ns[r])),
               percent(w.rank_wait_ns[r], report.ranks[r].mpi_ns));
  for (std::size_t i = 0; i < kWaitPatterns; ++i) {
    const WaitPatternStat& p = w.patterns[i];
    fmt::print(out, "\n{}: {}\n", kWaitPatternInfo[i].title, kWaitPatternInfo[i].measures);
    if (p.count == 0) {
      fmt::print(out, "  none found\n");
      continue;
    }
    std::string ranks;
    for (std::size_t r = 0; r < n; ++r)
      if (p.ranks[r] > 0)
        ranks += fmt::format("{}rank {} {}", ranks.empty() ? "" : ", ", r,
                             seconds_text(static_cast<double>(p.ranks[r])));
    fmt::print(out, "  {} cases, {} lost in total: {}\n", p.count,
               seconds_text(static_cast<double>(p.total)), ranks);
    for (const auto& [lost, c] : p.worst.items()) {
      std::string what = fmt::format("  {:>12} on rank {} in {} waiting for rank {}",
                                     seconds_text(lost), c.rank, c.function, c.late);
      if (c.late < 0)
        what = fmt::format("  {:>12} on rank {} in {}", seconds_text(lost), c.rank, c.function);
      if (c.bytes > 0 || c.tag >= 0) what += fmt::format(" (tag {}, {} bytes)", c.tag, c.bytes);
      what += fmt::format(" from t = {}", seconds_text(static_cast<double>(c.time)));
      if (!c.cause.empty()) what += "; cause: " + c.cause;
      fmt::print(out, "{}\n", what);
    }
  }

  fmt::print(out,
             "\nDelays: what the late processes did while others waited (direct cost; "
             "propagated: waits of waiting processes)\n");
  if (w.causes.empty()) fmt::print(out, "  none\n");
  std::vector<std::pair<std::pair<std::uint32_t, std::string>, DelayCost>> causes(w.causes.begin(),
                                                                                  w.causes.end());
  std::stable_sort(causes.begin(), causes.end(), [](const auto& a, const auto& b) {
    return a.second.direct + a.second.propagated > b.second.direct + b.second.propagated;
  });
  for (std::size_t i = 0; i < causes.size() && i < 10; ++i) {
    const auto& [who, d] = causes[i];
    fmt::print(out, "  {:>5.1f} %  {:<48} direct {:>12} propagated {:>12}\n",
               percent(d.direct + d.propagated, w.total_ns), cause_text(who),
               seconds_text(static_cast<double>(d.direct)),
               seconds_text(static_cast<double>(d.propagated)));
  }

  fmt::print(out, "\nCritical path ({}{}): its time per activity against the mean rank's\n",
             seconds_text(static_cast<double>(w.critical_ns)),
             w.critical_truncated
                 ? fmt::format(" from t = {}: the run's earlier part lies before the history "
                               "kept, and the means are over the same span",
                               seconds_text(static_cast<double>(w.critical_from)))
                 : "");
  std::vector<std::pair<std::string, PathShare>> path(w.critical.begin(), w.critical.end());
  std::stable_sort(path.begin(), path.end(),
                   [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  for (std::size_t i = 0; i < path.size() && i < 10; ++i)
    fmt::print(out, "  {:>5.1f} %  {:<40} {:>12} (mean rank {})\n",
               percent(path[i].second.ns, w.critical_ns), path[i].first,
               seconds_text(static_cast<double>(path[i].second.ns)),
               seconds_text(static_cast<double>(path[i].second.mean_ns)));
  std::string ranks;
  for (std::size_t r = 0; r < n; ++r)
    if (w.critical_ranks[r] > 0)
      ranks += fmt::format("{}rank {} {:.0f} %", ranks.empty() ? "" : ", ", r,
                           percent(w.critical_ranks[r], w.critical_ns));
  if (!ranks.empty()) fmt::print(out, "  on {}\n", ranks);
}

}  // namespace perusetrace::report
