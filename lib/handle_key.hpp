// MPI handles as hash-table keys. Open MPI's handles are pointers, MPICH's are integers; both
// become a non-zero uintptr_t (0 marks an empty slot).
#pragma once

#include <cstdint>
#include <type_traits>

namespace perusetrace {

template <typename Handle>
std::uintptr_t handle_key(Handle h) noexcept {
  if constexpr (std::is_pointer_v<Handle>) {
    return reinterpret_cast<std::uintptr_t>(h);
  } else {
    return static_cast<std::uintptr_t>(static_cast<std::uint32_t>(h)) + 1;
  }
}

}  // namespace perusetrace
