#include <catch2/catch.hpp>

#include <cstdint>

#include "record/global_clock.hpp"
#include "record/tick_clock.hpp"

using namespace perusetrace;

TEST_CASE("the default scale is the identity") {
  const TickScale s;
  CHECK(s.to_ns(0) == 0);
  CHECK(s.to_ns(123456789012345ull) == 123456789012345ull);
  CHECK(s.to_ticks(987654321ull) == 987654321ull);
}

TEST_CASE("ticks scale along the line through two points, before and after them") {
  // 3 GHz: 3 ticks per ns, at an arbitrary origin on both clocks.
  const TickScale s = tick_scale({1'000'000'000, 5'000}, {1'000'000'000 + 3'000'000, 1'005'000});
  CHECK(s.to_ns(1'000'000'000) == 5'000);
  CHECK(s.to_ns(1'000'000'000 + 3'000'000) == 1'005'000);
  CHECK(s.to_ns(1'000'000'000 + 300) == 5'100);
  CHECK(s.to_ns(1'000'000'000 - 300) == 4'900);  // MPI_Init's Enter, read before the first point
  CHECK(s.to_ticks(4'900) == 1'000'000'000 - 300);
  // A run of a day at 3 GHz stays exact: no overflow in the products.
  const std::uint64_t day_ticks = 3ull * 86'400'000'000'000ull;
  CHECK(s.to_ns(1'000'000'000 + day_ticks) == 5'000 + 86'400'000'000'000ull);
}

TEST_CASE("conversion keeps the order of records") {
  const TickScale s = tick_scale({100, 0}, {100 + 2'999'999, 1'000'000});
  std::uint64_t previous = 0;
  for (std::uint64_t t = 100; t < 100 + 100'000; t += 7) {
    const std::uint64_t ns = s.to_ns(t);
    REQUIRE(ns >= previous);
    previous = ns;
  }
}

TEST_CASE("points too close or out of order give the identity, not a division by zero") {
  CHECK(tick_scale({10, 10}, {10, 20}).to_ns(55) == 55);
  CHECK(tick_scale({10, 10}, {5, 20}).to_ns(55) == 55);
  CHECK(tick_scale({10, 10}, {20, 10}).to_ns(55) == 55);
}

TEST_CASE("the chosen clock's points agree with CLOCK_MONOTONIC") {
  std::string error;
  REQUIRE(choose_tick_clock(ClockChoice::Auto, error));
  const TickPoint a = tick_point();
  std::uint64_t t = now_ns();
  while (now_ns() - t < 5'000'000) {
  }
  const TickPoint b = tick_point();
  const TickScale s = tick_scale(a, b);
  // A tick read between two ns reads converts to a time between them, however long a
  // preemption kept them apart; 5 us for the scale's own error after 5 ms of calibration.
  // Catches a wrong unit or sign, never a busy machine.
  const std::uint64_t before = now_ns();
  const std::uint64_t ticks = now_ticks();
  const std::uint64_t after = now_ns();
  CHECK(s.to_ns(ticks) + 5'000 >= before);
  CHECK(s.to_ns(ticks) <= after + 5'000);
  REQUIRE(choose_tick_clock(ClockChoice::Monotonic, error));
  CHECK_FALSE(tick_clock_is_tsc());
  CHECK(std::string(tick_clock_name()) == "monotonic");
}

TEST_CASE("no offset measured: the local clock is the global one") {
  const OffsetLine line;
  CHECK(line.to_global(123'456'789) == 123'456'789);
}

TEST_CASE("offsets interpolate between init and finalize and hold outside") {
  OffsetLine line;
  line.add(1'000'000'000, -5'000'000'000'000, 20'000);  // a host 5000 s ahead of rank 0's
  line.add(3'000'000'000, -5'000'000'040'000, 20'000);  // drifting by 20 ppm
  CHECK(line.offset_at(1'000'000'000) == -5'000'000'000'000);
  CHECK(line.offset_at(2'000'000'000) == -5'000'000'020'000);
  CHECK(line.offset_at(3'000'000'000) == -5'000'000'040'000);
  CHECK(line.offset_at(500'000'000) == -5'000'000'000'000);    // MPI_Init's Enter, before
  CHECK(line.offset_at(4'000'000'000) == -5'000'000'040'000);  // after the last point
}

TEST_CASE("offsets too far apart for any clock's drift keep the better-measured one") {
  // 1 ms apart over 10 ms is 10 % drift: measurement error, and following it could turn time
  // backwards on a short run.
  OffsetLine line;
  line.add(1'000'000'000, 3'000'000, 400'000);
  line.add(1'010'000'000, 2'000'000, 5'000);
  CHECK(line.offset_at(1'000'000'000) == 2'000'000);
  CHECK(line.offset_at(1'005'000'000) == 2'000'000);
  CHECK(line.offset_at(1'020'000'000) == 2'000'000);
}

TEST_CASE("global times keep the order of local times") {
  OffsetLine line;
  line.add(1'000, 1'000'000, 10);
  line.add(1'000'000'001'000, 1'000'400'000, 10);  // 400 ppm: the steepest allowed
  std::uint64_t previous = 0;
  for (std::uint64_t t = 0; t < 1'100'000'000'000; t += 7'777'777'777) {
    const std::uint64_t g = line.to_global(t);
    CHECK(g >= previous);
    previous = g;
  }
}
