// Timestamps for every record.
#pragma once

#include <time.h>

#include <cstdint>

namespace perusetrace {

// CLOCK_MONOTONIC is served by the vDSO (no system call) and is one clock for all ranks of a
// node; offsets between nodes are measured against rank 0 at init and finalize.
inline std::uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace perusetrace
