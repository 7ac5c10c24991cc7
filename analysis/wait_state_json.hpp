// The report's wait states as JSON (docs/report-schema.md, "wait_states").
#pragma once

#include <string>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

std::string wait_states_json(const Report& report);

}  // namespace perusetrace::report
