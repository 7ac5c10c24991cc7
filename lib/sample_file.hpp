// A thread's samples on disk (lib/sampler.hpp writes them from its signal handler, the archive
// writer and `perusetrace recover` read them): one SampleHeader per sample, then its frames.
#pragma once

#include <cstdint>

namespace perusetrace::sampling {

struct SampleHeader {
  std::uint64_t time;     // the records' clock (ticks)
  std::uint8_t state;     // state::State
  std::uint8_t activity;  // state::Activity
  std::uint16_t fn;       // the MPI function (state not NotInMpi)
  std::uint16_t frames;   // return addresses that follow, innermost first
  // The periods this sample stands for: 1, plus the timer's expirations that found the previous
  // signal still pending (the thread was not running: an oversubscribed core).
  std::uint16_t weight;
};
static_assert(sizeof(SampleHeader) == 16);

inline constexpr unsigned kMaxFrames = 64;
// The first frames of every stack are the sampler's own: its handler, the signal trampoline.
inline constexpr unsigned kSamplerFrames = 2;

}  // namespace perusetrace::sampling
