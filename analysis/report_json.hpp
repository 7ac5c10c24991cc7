// The report as JSON (docs/report-schema.md, docs/report.schema.json).
#pragma once

#include <string>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

std::string to_json(const Report& report);

}  // namespace perusetrace::report
