// Message-size classes, shared by the report's per-size tables.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace perusetrace::report {

// Message-size classes of the bandwidth by size: class i holds messages of at least
// kSizeClassFrom[i] bytes and less than the next class's lower bound (16x apart: below 1 KiB,
// 1-16 KiB, 16-256 KiB, 256 KiB-4 MiB, 4 MiB and more).
inline constexpr std::array<std::uint64_t, 5> kSizeClassFrom = {0, 1u << 10, 16u << 10, 256u << 10,
                                                                4u << 20};

inline std::size_t size_class(std::uint64_t bytes) {
  std::size_t c = 0;
  while (c + 1 < kSizeClassFrom.size() && bytes >= kSizeClassFrom[c + 1]) ++c;
  return c;
}

// "1 KiB - 16 KiB", "below 1 KiB", "4 MiB and more": class c's bounds, for the text outputs.
inline std::string size_class_label(std::size_t c) {
  auto bytes = [](std::uint64_t b) {
    return b >= (1u << 20) ? std::to_string(b >> 20) + " MiB" : std::to_string(b >> 10) + " KiB";
  };
  if (c == 0) return "below " + bytes(kSizeClassFrom[1]);
  if (c + 1 >= kSizeClassFrom.size()) return bytes(kSizeClassFrom[c]) + " and more";
  return bytes(kSizeClassFrom[c]) + " - " + bytes(kSizeClassFrom[c + 1]);
}
inline constexpr std::size_t kSizeClasses = kSizeClassFrom.size();

}  // namespace perusetrace::report
