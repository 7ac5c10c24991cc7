// The groups of MPI_Win_post and MPI_Win_start as OTF2 groups: a process-local id per distinct
// member list (world ranks), found without a lock or an allocation by the list's hash; a list
// seen for the first time is recorded (and journaled) under a lock.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace perusetrace::rma_groups {

// Right after MPI_Init: the world group the members are translated into.
void start();
// The local id of `group`'s member list (kNoRmaGroup when it cannot be told).
std::uint32_t id_of(MPI_Group group) noexcept;
// Every member list so far, by local id.
std::vector<std::vector<int>> snapshot();

}  // namespace perusetrace::rma_groups
