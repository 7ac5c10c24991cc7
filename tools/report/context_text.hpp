// The report's per-context section as text (`--by`), after the other sections.
#pragma once

#include <cstdio>

#include "tools/report/report_data.hpp"

namespace perusetrace::report {

// Without --by: names the archive's attributes, if any, and how to group by them.
void write_context_text(std::FILE* out, const ByContext& by);

}  // namespace perusetrace::report
