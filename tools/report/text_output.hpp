// The report as text for a terminal (stdout).
#pragma once

#include <cstdio>

#include "tools/report/report_data.hpp"

namespace perusetrace::report {

void write_text(std::FILE* out, const Report& report);

}  // namespace perusetrace::report
