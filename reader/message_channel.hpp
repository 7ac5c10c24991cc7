// The order in which MPI matches point-to-point messages: those of one sender, receiver,
// communicator and tag match in the order they were sent. The tools pair sends and receives
// per channel (the report's clock condition, the controlled logical clock).
#pragma once

#include <cstddef>
#include <cstdint>

namespace perusetrace::archive {

struct MessageChannel {
  std::int32_t from, to;  // world ranks
  std::uint32_t comm, tag;
  bool operator==(const MessageChannel&) const = default;
};

struct MessageChannelHash {
  std::size_t operator()(const MessageChannel& k) const {
    std::uint64_t h = static_cast<std::uint32_t>(k.from);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.to);
    h = h * 0x9E3779B97F4A7C15ull ^ k.comm;
    h = h * 0x9E3779B97F4A7C15ull ^ k.tag;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

}  // namespace perusetrace::archive
