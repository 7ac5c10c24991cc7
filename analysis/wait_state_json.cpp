#include "analysis/wait_state_json.hpp"

#include <fmt/core.h>

#include "analysis/json_text.hpp"

namespace perusetrace::report {

namespace {

using archive::json_array;
const auto& quote = archive::json_string;

std::string numbers(const std::vector<std::uint64_t>& v) {
  return json_array(v, [](std::uint64_t x) { return std::to_string(x); });
}

std::string pattern(std::size_t i, const WaitPatternStat& p) {
  const WaitPatternInfo& info = kWaitPatternInfo[i];
  return fmt::format(
      R"({}:{{"title":{},"measures":{},"count":{},"total_ns":{},"ranks_ns":{},"functions":{},"pairs":{},"causes":{},"uncaused_ns":{},"worst":{}}})",
      quote(info.key), quote(info.title), quote(info.measures), p.count, p.total, numbers(p.ranks),
      json_array(p.functions,
                 [](const auto& f) {
                   return fmt::format(R"({{"name":{},"ns":{}}})", quote(f.first), f.second);
                 }),
      json_array(p.pairs,
                 [](const auto& e) {
                   return fmt::format(R"({{"late":{},"rank":{},"ns":{}}})", e.first.first,
                                      e.first.second, e.second);
                 }),
      json_array(p.causes,
                 [](const auto& e) {
                   return fmt::format(R"({{"rank":{},"activity":{},"ns":{}}})", e.first.first,
                                      quote(e.first.second), e.second);
                 }),
      p.uncaused, json_array(p.worst.items(), [](const auto& e) {
        const WaitCase& c = e.second;
        return fmt::format(
            R"({{"lost_ns":{},"time_ns":{},"rank":{},"late":{},"function":{},"tag":{},"bytes":{},"cause":{}}})",
            c.lost, c.time, c.rank, c.late, quote(c.function), c.tag, c.bytes, quote(c.cause));
      }));
}

}  // namespace

std::string wait_states_json(const Report& r) {
  const WaitStates& w = r.wait_states;
  std::string patterns = "{";
  for (std::size_t i = 0; i < kWaitPatterns; ++i)
    patterns += (i ? "," : "") + pattern(i, w.patterns[i]);
  patterns += "}";
  return fmt::format(
      R"({{"total_ns":{},"rank_time_ns":{},"ranks_ns":{},"patterns":{},"causes":{},"critical_path":{{"ns":{},"truncated":{},"from_ns":{},"ranks_ns":{},"activities":{}}}}})",
      w.total_ns, w.rank_time_ns, numbers(w.rank_wait_ns), patterns,
      json_array(
          w.causes,
          [](const auto& e) {
            return fmt::format(
                R"({{"rank":{},"activity":{},"direct_ns":{},"propagated_ns":{},"cases":{}}})",
                e.first.first, quote(e.first.second), e.second.direct, e.second.propagated,
                e.second.cases);
          }),
      w.critical_ns, w.critical_truncated, w.critical_from, numbers(w.critical_ranks),
      json_array(w.critical, [](const auto& e) {
        return fmt::format(R"({{"activity":{},"ns":{},"mean_rank_ns":{}}})", quote(e.first),
                           e.second.ns, e.second.mean_ns);
      }));
}

}  // namespace perusetrace::report
