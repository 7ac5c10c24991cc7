// The report as one self-contained HTML page with inline SVG plots: transfer bandwidth over
// time, fragment-interval histogram, queue depth over time, message-matrix heat map.
#pragma once

#include <string>

#include "tools/report/report_data.hpp"

namespace perusetrace::report {

std::string to_html(const Report& report);

}  // namespace perusetrace::report
