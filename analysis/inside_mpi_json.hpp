// The report's "inside_mpi" and "what_to_try" as JSON (docs/report-schema.md).
#pragma once

#include <string>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

std::string inside_mpi_json(const InsideMpi& in);
std::string what_to_try_json(const Report& report);

}  // namespace perusetrace::report
