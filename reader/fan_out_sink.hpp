// Hands every event to several sinks, in the order given: one call per sink and event, where a
// tree of sinks that each pass an event to two would add a call per level.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/forwarding_sink.hpp"

namespace perusetrace::archive {

class FanOutSink final : public ForwardingSink<FanOutSink> {
 public:
  explicit FanOutSink(std::vector<EventSink*> sinks) : sinks_(std::move(sinks)) {}

  template <typename Call>
  void route(std::uint32_t /*loc*/, std::uint64_t t, const Call& call) {
    for (EventSink* sink : sinks_) call(*sink, t);
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace perusetrace::archive
