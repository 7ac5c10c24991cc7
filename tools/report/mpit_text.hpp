// The report's MPI_T section as text (after the Peruse sections of text_output).
#pragma once

#include <cstdio>

#include "analysis/report_data.hpp"

namespace perusetrace::report {

// Prints nothing for an archive without MPI_T values or control-variable notes.
void write_mpit_text(std::FILE* out, const Mpit& mpit);

}  // namespace perusetrace::report
