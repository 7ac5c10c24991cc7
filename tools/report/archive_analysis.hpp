// Every analysis of `perusetrace report` over one archive, as one call: what `report` prints and
// what `diff` compares come from the same place.
#pragma once

#include <string>

#include "tools/archive/tool_run.hpp"
#include "tools/report/report_data.hpp"
#include "tools/report/timeline_data.hpp"

namespace perusetrace::report {

// Reads the archive at `path` (a trace directory or its traces.otf2) and returns the report;
// `by` is report --by's attribute list ("" for none). With `timeline`, the HTML page's timeline
// is built in the same pass into it. Throws archive::ArchiveError for an archive it cannot read.
Report analyse_archive(const std::string& path, const std::string& by, archive::ProgressBar& bar,
                       timeline::Timeline* timeline = nullptr);

}  // namespace perusetrace::report
