// The timeline (timeline_data.hpp) and the report's occurrence tables as the JSON the HTML page
// embeds and its script (timeline.js) reads. Large arrays are columns of numbers, times as
// differences from the previous item's; the summary's per-bucket arrays are base64.
#pragma once

#include <string>

#include "analysis/report_data.hpp"
#include "tools/report/timeline_data.hpp"

namespace perusetrace::report::timeline {

std::string to_json(const Timeline& timeline, const Report& report);

}  // namespace perusetrace::report::timeline
