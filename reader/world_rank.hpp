// A peer named by its rank in a communicator, as the world rank the archive's ranks are: its
// rank in MPI_COMM_WORLD, the caller itself on MPI_COMM_SELF, the peer unchanged when the
// archive defines no such communicator. -1 for a rank outside the communicator; a process of
// another MPI job (CommDef::world_ranks' kOtherJobRank) comes out negative too.
#pragma once

#include <cstdint>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

inline std::int32_t world_rank(const Definitions& defs, std::uint32_t comm, std::uint32_t peer,
                               std::uint32_t self) {
  if (comm >= defs.comms.size()) return static_cast<std::int32_t>(peer);
  const CommDef& c = defs.comms[comm];
  if (c.self) return static_cast<std::int32_t>(self);
  return peer < c.world_ranks.size() ? static_cast<std::int32_t>(c.world_ranks[peer]) : -1;
}

// Whether member `peer` of communicator `comm` is a process of another MPI job
// (CommDef::job names it).
inline bool other_job_member(const Definitions& defs, std::uint32_t comm, std::uint32_t peer) {
  return comm < defs.comms.size() && peer < defs.comms[comm].world_ranks.size() &&
         defs.comms[comm].world_ranks[peer] == kOtherJobRank;
}

}  // namespace perusetrace::archive
