// A fixed-size, lock-free table from MPI handles (or request addresses) to per-handle state,
// for lookups on the hot path. Open addressing: a slot is claimed once, by compare-and-swap,
// and then belongs to its key for the rest of the run. Tables are sized far above what an MPI
// can have alive at once; a full table answers nullptr and the caller records less.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace perusetrace {

// Slot: any type with a `std::atomic<std::uintptr_t> key` (0 = free).
template <typename Slot, std::size_t Capacity>
class HandleTable {
  static_assert(std::has_single_bit(Capacity), "capacity must be a power of two");

 public:
  // The slot of `key`, claimed for it if `claim` and it has none; nullptr if absent or full.
  Slot* find(std::uintptr_t key, bool claim) noexcept {
    if (key == 0) return nullptr;
    std::size_t i = static_cast<std::size_t>((key >> 3) * 0x9E3779B97F4A7C15ull >> kShift);
    for (std::size_t probe = 0; probe < Capacity; ++probe, i = (i + 1) & (Capacity - 1)) {
      std::uintptr_t k = slots_[i].key.load(std::memory_order_acquire);
      if (k == key) return &slots_[i];
      if (k == 0) {
        if (!claim) return nullptr;
        if (slots_[i].key.compare_exchange_strong(k, key, std::memory_order_acq_rel) || k == key)
          return &slots_[i];
      }
    }
    return nullptr;
  }

 private:
  static constexpr int kShift = 64 - std::countr_zero(Capacity);
  Slot slots_[Capacity];
};

}  // namespace perusetrace
