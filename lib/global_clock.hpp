// One clock for the whole run: each rank's local CLOCK_MONOTONIC ns moved onto rank 0's clock.
// Ranks that read the same clock (one host, one time namespace) share rank 0's offset of their
// clock domain exactly (0 on rank 0's own); other domains' offsets are measured at MPI_Init and
// at MPI_Finalize (clock_sync.hpp) and interpolated. The writer applies the map itself, so every
// reader sees the same corrected times whether or not it applies OTF2 clock offsets.
#pragma once

#include <cstdint>

#include "lib/clock.hpp"

namespace perusetrace {

class OffsetLine {
 public:
  // Real oscillators drift by tens of ppm; two offsets that differ by more than this over their
  // span differ by measurement error, and following them could make time run backwards.
  static constexpr double kMaxDrift = 500e-6;

  // Points come in time order: the one at MPI_Init, then the one at MPI_Finalize.
  void add(std::uint64_t local_ns, std::int64_t offset_ns, double error_ns) noexcept {
    if (points_ == 0) {
      t0_ = local_ns, o0_ = offset_ns, e0_ = error_ns;
      points_ = 1;
      return;
    }
    if (local_ns <= t0_) return;  // out of order: damaged, keep the first
    t1_ = local_ns, o1_ = offset_ns, e1_ = error_ns;
    points_ = 2;
  }

  int points() const noexcept { return points_; }

  // Between the points, the line through them; outside, the nearer point's offset. A slope
  // beyond any real drift keeps the better-measured point's offset for the whole run.
  std::int64_t offset_at(std::uint64_t local_ns) const noexcept {
    if (points_ == 0) return 0;
    if (points_ == 2 && steep()) return best();
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
  bool steep() const noexcept {
    const double change = static_cast<double>(o1_ - o0_);
    const double span = static_cast<double>(t1_ - t0_);
    return (change < 0 ? -change : change) > kMaxDrift * span;
  }
  std::int64_t best() const noexcept { return e1_ < e0_ ? o1_ : o0_; }

  std::uint64_t t0_ = 0, t1_ = 0;
  std::int64_t o0_ = 0, o1_ = 0;
  double e0_ = 0, e1_ = 0;
  int points_ = 0;
};

// A record's ticks to the run's global ns.
struct GlobalClock {
  TickScale scale;     // ticks -> local ns
  OffsetLine offsets;  // local ns -> global ns
  std::uint64_t local_ns(std::uint64_t ticks) const noexcept { return scale.to_ns(ticks); }
  std::uint64_t global_ns(std::uint64_t ticks) const noexcept {
    return offsets.to_global(scale.to_ns(ticks));
  }
};

}  // namespace perusetrace
