// The report's one-sided communication section as text (after the collectives).
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// Prints nothing for an archive without RMA windows.
void write_rma_text(std::FILE* out, const Rma& rma);

}  // namespace perusetrace::report
