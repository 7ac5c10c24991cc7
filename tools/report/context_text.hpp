// The report's per-context sections as text (`--by`, or each attribute alone), after the others.
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// With --by, every context of those attributes; without, each of the archive's attributes alone,
// its values with the most MPI time first.
void write_context_text(std::FILE* out, const Report& report);

}  // namespace perusetrace::report
