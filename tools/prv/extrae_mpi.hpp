// Extrae's encoding of MPI calls in Paraver traces, so that Paraver's stock MPI configurations
// (which filter on these types and name these values) work on perusetrace's traces unchanged.
// An MPI call is an event of its group's type (50000001-50000005) whose value names the function
// while the call runs, and 0 when it returns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tools/prv/prv_archive.hpp"

namespace perusetrace::prv {

// Extrae's groups: the Paraver event type of each, and its label in Extrae's .pcf.
enum ExtraeMpiGroup : std::uint64_t {
  kPointToPoint = 50000001,
  kCollective = 50000002,
  kOther = 50000003,
  kOneSided = 50000004,
  kIo = 50000005,
};
inline constexpr std::uint64_t kExtraeMpiGroupFirst = kPointToPoint;
inline constexpr std::uint64_t kExtraeMpiGroupLast = kIo;

// The .pcf label Extrae gives the group's type ("MPI Point-to-point", ...).
const char* extrae_group_label(ExtraeMpiGroup group);

struct ExtraeMpiCall {
  ExtraeMpiGroup group;
  std::uint32_t value;  // 1..; 0 is "Outside MPI"
};

// Extrae's type and value of the MPI function `name` ("MPI_Send"); nullopt for a function Extrae
// has no value for (MPI-3 additions such as MPI_Comm_split_type, MPI_Info_*, MPI_Win_allocate).
std::optional<ExtraeMpiCall> extrae_mpi_call(std::string_view name);

// The same for an archive region; nullopt for a region that is not an MPI function.
std::optional<ExtraeMpiCall> extrae_mpi_call(const RegionDef& region);

}  // namespace perusetrace::prv
