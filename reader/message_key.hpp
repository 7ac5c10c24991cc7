// What MPI matches a point-to-point message by, in order: sender, receiver (world ranks),
// communicator and tag. The analyses that pair sends with receives key their queues by it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace perusetrace::archive {

struct MessageKey {
  std::uint32_t from, to, comm, tag;
  bool operator==(const MessageKey&) const = default;
};

struct MessageKeyHash {
  std::size_t operator()(const MessageKey& k) const {
    std::uint64_t h = k.from;
    h = h * 0x9E3779B97F4A7C15ull ^ k.to;
    h = h * 0x9E3779B97F4A7C15ull ^ k.comm;
    h = h * 0x9E3779B97F4A7C15ull ^ k.tag;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace perusetrace::archive
