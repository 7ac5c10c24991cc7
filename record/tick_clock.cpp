#include "record/tick_clock.hpp"

#include <fstream>
#include <sstream>

namespace perusetrace {

namespace {

// Linux lists constant_tsc (fixed rate whatever the CPU's frequency) and nonstop_tsc (keeps
// counting in deep sleep states) only when both hold for every CPU of the machine.
bool invariant_tsc() {
#ifdef PERUSETRACE_HAVE_TSC
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line);
    bool constant = false, nonstop = false;
    for (std::string w; words >> w;) {
      constant |= w == "constant_tsc";
      nonstop |= w == "nonstop_tsc";
    }
    return constant && nonstop;
  }
#endif
  return false;
}

}  // namespace

bool choose_tick_clock(ClockChoice choice, std::string& error) {
  detail::g_use_tsc = false;
  if (choice == ClockChoice::Monotonic) return true;
  const bool invariant = invariant_tsc();
  if (choice == ClockChoice::Tsc && !invariant) {
    error =
        "MPITRACE_CLOCK='tsc': this CPU's time-stamp counter is not invariant (/proc/cpuinfo "
        "lacks constant_tsc or nonstop_tsc), so its ticks cannot be turned into time. Allowed: "
        "auto (the TSC where it is invariant, CLOCK_MONOTONIC otherwise) or monotonic.";
    return false;
  }
  detail::g_use_tsc = invariant;
  return true;
}

bool tick_clock_is_tsc() noexcept {
  return detail::g_use_tsc;
}

const char* tick_clock_name() noexcept {
  return detail::g_use_tsc ? "tsc" : "monotonic";
}

TickPoint tick_point() noexcept {
  if (!detail::g_use_tsc) {
    const std::uint64_t ns = now_ns();
    return {ns, ns};
  }
  // The ns read pinned between two tick reads; the tightest of a few tries wins, so a
  // preemption between the reads does not skew the scale.
  TickPoint best;
  std::uint64_t best_width = ~0ull;
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t before = now_ticks();
    const std::uint64_t ns = now_ns();
    const std::uint64_t after = now_ticks();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

TickScale tick_scale(TickPoint first, TickPoint last) noexcept {
  TickScale s;
  // TickScale works on signed 64-bit spans: farther apart (a damaged journal) is no scale.
  constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 62;
  if (last.ticks > first.ticks && last.ns > first.ns && last.ticks - first.ticks < kMaxSpan &&
      last.ns - first.ns < kMaxSpan) {
    s.a = first;
    s.b = last;
  }
  return s;
}

}  // namespace perusetrace
