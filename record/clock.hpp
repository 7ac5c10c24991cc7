// Timestamps for every record.
#pragma once

#include <time.h>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define PERUSETRACE_HAVE_TSC 1
#endif

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

namespace detail {
inline bool g_use_tsc = false;  // set once at MPI_Init (tick_clock.cpp), before any record
}

// The records' clock. An invariant TSC is read in about half the time of the vDSO's
// clock_gettime on a KVM guest, and every record pays for one read; the conversion to
// CLOCK_MONOTONIC ns (TickScale) happens when the journal is read back, off the program's time.
// Without an invariant TSC, ticks are CLOCK_MONOTONIC ns and the scale is the identity.
inline std::uint64_t now_ticks() noexcept {
#ifdef PERUSETRACE_HAVE_TSC
  if (detail::g_use_tsc) return __rdtsc();
#endif
  return now_ns();
}

// For hot paths that test the clock once and then read it without a branch or a call.
inline bool tsc_ticks() noexcept {
#ifdef PERUSETRACE_HAVE_TSC
  return detail::g_use_tsc;
#else
  return false;
#endif
}
// Only after tsc_ticks() said true.
inline std::uint64_t read_tsc() noexcept {
#ifdef PERUSETRACE_HAVE_TSC
  return __rdtsc();
#else
  return now_ns();
#endif
}

// A moment read on both clocks.
struct TickPoint {
  std::uint64_t ticks = 0, ns = 0;
};

__extension__ typedef __int128 Wide;  // products of a day's ticks and ns overflow 64 bits

// Ticks to ns along the line through two points; exact integer arithmetic, so conversion is
// monotonic and the same on every reader. The default is the identity.
struct TickScale {
  TickPoint a{0, 0}, b{1, 1};
  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    const auto dt = static_cast<Wide>(static_cast<std::int64_t>(ticks - a.ticks));
    const auto span_ns = static_cast<Wide>(static_cast<std::int64_t>(b.ns - a.ns));
    const auto span_ticks = static_cast<Wide>(static_cast<std::int64_t>(b.ticks - a.ticks));
    return static_cast<std::uint64_t>(static_cast<Wide>(a.ns) + dt * span_ns / span_ticks);
  }
  std::uint64_t to_ticks(std::uint64_t ns) const noexcept {
    const auto dn = static_cast<Wide>(static_cast<std::int64_t>(ns - a.ns));
    const auto span_ns = static_cast<Wide>(static_cast<std::int64_t>(b.ns - a.ns));
    const auto span_ticks = static_cast<Wide>(static_cast<std::int64_t>(b.ticks - a.ticks));
    return static_cast<std::uint64_t>(static_cast<Wide>(a.ticks) + dn * span_ticks / span_ns);
  }
};

}  // namespace perusetrace
