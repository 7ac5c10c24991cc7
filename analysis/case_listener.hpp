// Told of each case as the analyses find it: the report's HTML timeline keeps the events around
// those that rank among the worst. Pattern cases and messages come from the Peruse analysis
// (peruse_analysis.hpp), waits from the wait-state analysis (wait_states.hpp).
#pragma once

#include "analysis/report_data.hpp"

namespace perusetrace::report {

class CaseListener {
 public:
  virtual ~CaseListener() = default;
  virtual void pattern_case(const Pattern& pattern, const PatternCase& c) = 0;
  virtual void message_case(const MessageCase& m) = 0;
  virtual void wait_case(const WaitPatternStat& pattern, const WaitCase& c) = 0;
};

}  // namespace perusetrace::report
