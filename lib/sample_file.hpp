// A thread's samples on disk (lib/sampler.hpp writes them from its signal handler, the archive
// writer and `perusetrace recover` read them): one SampleHeader per sample, then its frames.
#pragma once

#include <cstdint>

namespace perusetrace::sampling {

struct SampleHeader {
  std::uint64_t time;  // the records' clock (ticks)
  // The sampling periods of the thread's wall time this sample stands for: the time since the
  // thread's previous sample, less its time in blocking calls, which their own samples carry
  // (lib/sampler.cpp). 0 never: such a sample is not written.
  std::uint32_t weight;
  std::uint16_t fn;       // the MPI function (state not NotInMpi)
  std::uint16_t frames;   // return addresses that follow, innermost first
  std::uint8_t state;     // state::State
  std::uint8_t activity;  // state::Activity
  // The first frames that are the sampler's own: its signal handler and the kernel's signal
  // trampoline, or the functions that took the sample at a blocking call (lib/sampler.cpp).
  std::uint8_t own_frames;
  // 1 when the first frame after those is the interrupted instruction (a signal's sample), 0
  // when it is a return address like the others.
  std::uint8_t interrupted;
  std::uint8_t unused[4];
};
static_assert(sizeof(SampleHeader) == 24);

inline constexpr unsigned kMaxFrames = 64;

}  // namespace perusetrace::sampling
