// Choosing the records' clock (clock.hpp) and measuring how its ticks map onto ns.
#pragma once

#include <string>

#include "record/clock.hpp"

namespace perusetrace {

enum class ClockChoice { Auto, Tsc, Monotonic };

// Sets the records' clock; false (with `error` naming the problem and the fix) when the TSC is
// asked for on a CPU whose TSC is not invariant.
bool choose_tick_clock(ClockChoice choice, std::string& error);
bool tick_clock_is_tsc() noexcept;
const char* tick_clock_name() noexcept;

// Both clocks read as close together as this thread can manage. Async-signal-safe.
TickPoint tick_point() noexcept;

// The scale between two points; the identity when the ticks are ns or the points are too
// close to tell.
TickScale tick_scale(TickPoint first, TickPoint last) noexcept;

}  // namespace perusetrace
