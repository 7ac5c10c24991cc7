// The report as one self-contained HTML page: the interactive timeline with the occurrence
// tables (timeline.js, drawn from timeline_json.hpp's data), then inline SVG plots: transfer
// bandwidth over time, fragment-interval histogram, queue depth over time, message-matrix heat
// map, and the largest MPI_T counters over time when the archive has them.
#pragma once

#include <string>

#include "analysis/report_data.hpp"
#include "tools/report/timeline_data.hpp"

namespace perusetrace::report {

std::string to_html(const Report& report, const timeline::Timeline& timeline);

}  // namespace perusetrace::report
