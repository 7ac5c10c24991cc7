// A measurement of a rank's clock against rank 0's: the runtime takes it, the writer stores it,
// `perusetrace recover` reads it back from the journal.
#pragma once

#include <cstdint>

namespace perusetrace::trace {

// One measurement of a rank's clock against rank 0's (lib/clock_sync.hpp).
struct ClockOffset {
  std::uint64_t local_time = 0;  // the rank's own clock, ns
  std::int64_t offset = 0;       // add to local_time for rank 0's clock
  double error = 0;              // half the best round trip, ns
  std::uint32_t exchanges = 0;   // round trips measured; 0: the domain shares rank 0's clock
};

}  // namespace perusetrace::trace
