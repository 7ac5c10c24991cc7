// The report as text for a terminal (stdout).
#pragma once

#include <cstdio>
#include <string>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// ns as text in the unit that suits it: "1.234 s", "5.678 ms", "12.000 us", "850 ns".
std::string seconds_text(double ns);

void write_text(std::FILE* out, const Report& report);

}  // namespace perusetrace::report
