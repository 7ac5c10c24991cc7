// The report's "What to try": the changes its findings point to, ranked by the time at stake,
// each with what the trace shows and the one change to make (in the code, or a setting for the
// next run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

struct Advice {
  std::uint64_t ns = 0;  // the time at stake: what the finding cost in this run
  std::string kind;      // "code" or "setting"
  std::string finding;   // what the trace shows
  std::string change;    // what to change
};

std::vector<Advice> what_to_try(const Report& report);

}  // namespace perusetrace::report
