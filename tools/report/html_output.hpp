// The report as one self-contained HTML page with inline SVG plots: transfer bandwidth over
// time, fragment-interval histogram, queue depth over time, message-matrix heat map, and the
// largest MPI_T counters over time when the archive has them.
#pragma once

#include <string>

#include "tools/report/report_data.hpp"

namespace perusetrace::report {

std::string to_html(const Report& report);

}  // namespace perusetrace::report
