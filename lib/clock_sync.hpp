// Clock offsets of this rank against rank 0, measured at init and at finalize; OTF2 readers
// interpolate between the two to put every rank on rank 0's clock.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace perusetrace {

struct ClockOffsets {
  std::vector<std::pair<std::uint64_t, std::int64_t>> points;  // (local time, offset to rank 0)
  std::vector<double> errors;                                  // half the round trip, ns
  // Collective over MPI_COMM_WORLD (PMPI): rank 0 answers each rank's pings in turn.
  void measure();
};

}  // namespace perusetrace
