// The report's "What to try" list and "Inside MPI" section as text (docs/report.md).
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

void write_what_to_try(std::FILE* out, const Report& report);
// Prints nothing for an archive without Peruse transfer or queue events.
void write_inside_mpi(std::FILE* out, const Report& report);

}  // namespace perusetrace::report
