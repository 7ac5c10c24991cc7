// One clock for the whole run: each rank's local CLOCK_MONOTONIC ns moved onto rank 0's clock.
// Ranks that read the same clock (one host, one time namespace) share rank 0's offset of their
// clock domain exactly (0 on rank 0's own); other domains' offsets are measured at MPI_Init and
// at MPI_Finalize (clock_sync.hpp) and interpolated. The writer applies the map itself, so every
// reader sees the same corrected times whether or not it applies OTF2 clock offsets.
#pragma once

#include <cstdint>

#include "record/clock.hpp"
#include "record/clock_offset.hpp"

namespace perusetrace {

class OffsetLine {
 public:
  // Real oscillators drift by tens of ppm; two offsets that differ by more than this over their
  // span differ by measurement error, and following them could make time run backwards.
  static constexpr double kMaxDrift = 500e-6;

  // Points come in time order: the one at MPI_Init, then the one at MPI_Finalize. A second
  // point that would make a slope beyond any real drift is measurement error: the better
  // measured of the two is kept alone.
  void add(std::uint64_t local_ns, std::int64_t offset_ns, double error_ns) noexcept {
    if (points_ == 0) {
      t0_ = local_ns, o0_ = offset_ns, e0_ = error_ns;
      points_ = 1;
      return;
    }
    if (points_ == 2 || local_ns <= t0_) return;  // a third, or out of order: damaged
    const double change = static_cast<double>(offset_ns - o0_);
    if ((change < 0 ? -change : change) > kMaxDrift * static_cast<double>(local_ns - t0_)) {
      if (error_ns < e0_) o0_ = offset_ns, e0_ = error_ns;
      return;
    }
    t1_ = local_ns, o1_ = offset_ns;
    points_ = 2;
  }
  void add(const trace::ClockOffset& o) noexcept { add(o.local_time, o.offset, o.error); }

  // Between the points, the line through them; outside, the nearer point's offset.
  std::int64_t offset_at(std::uint64_t local_ns) const noexcept {
    if (points_ == 0) return 0;
    if (points_ == 1 || local_ns <= t0_) return o0_;
    if (local_ns >= t1_) return o1_;
    const auto span = static_cast<Wide>(t1_ - t0_);
    const auto into = static_cast<Wide>(local_ns - t0_);
    return static_cast<std::int64_t>(static_cast<Wide>(o0_) +
                                     static_cast<Wide>(o1_ - o0_) * into / span);
  }

  std::uint64_t to_global(std::uint64_t local_ns) const noexcept {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(local_ns) + offset_at(local_ns));
  }

 private:
  std::uint64_t t0_ = 0, t1_ = 0;
  std::int64_t o0_ = 0, o1_ = 0;
  double e0_ = 0;  // the first point's error, while a second may replace it
  int points_ = 0;
};

// A record's ticks to the run's global ns.
struct GlobalClock {
  TickScale scale;     // ticks -> local ns
  OffsetLine offsets;  // local ns -> global ns
};

}  // namespace perusetrace
