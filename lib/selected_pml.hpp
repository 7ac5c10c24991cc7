// Which point-to-point messaging layer (PML) Open MPI selected at MPI_Init: Peruse fires only in
// ob1, so under ucx or cm a Peruse-enabled Open MPI reports no event at all.
#pragma once

#include <string>

namespace perusetrace::peruse {

// "ob1", "ucx", "cm", ...; "" when the MPI is not an Open MPI whose selection can be read.
std::string selected_pml();

}  // namespace perusetrace::peruse
