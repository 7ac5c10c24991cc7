// The report's MPI-IO section as text (after one-sided communication).
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// Prints nothing for an archive without MPI-IO files.
void write_io_text(std::FILE* out, const Io& io);

}  // namespace perusetrace::report
