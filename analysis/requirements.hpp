// Which Peruse events each analysis needs, which the archive has (selected in its settings, or
// seen), and the MPITRACE_PERUSE_EVENTS setting that would enable what is missing.
#pragma once

#include <string>
#include <vector>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// The Peruse events in catalogue order (short names, without PERUSE_COMM_).
const std::vector<std::string>& peruse_event_names();

// The events named by MPITRACE_PERUSE_EVENTS in a PERUSETRACE::SETTINGS value; `found` is
// false when the value does not record them.
std::vector<std::string> selected_events(const std::string& settings, bool& found);

// Fills report.selected and report.missing from report.settings and report.observed.
void find_missing(Report& report);

}  // namespace perusetrace::report
