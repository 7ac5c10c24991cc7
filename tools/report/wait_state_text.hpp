// The report's wait states as text: a ranked summary that opens the report, and the section with
// every pattern, the delays that caused the waiting and the critical path.
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// "What matters most": the largest wait states as a share of all rank time, with their main
// cause. Prints nothing for an archive without MPI calls.
void write_wait_summary(std::FILE* out, const Report& report);

void write_wait_states(std::FILE* out, const Report& report);

}  // namespace perusetrace::report
