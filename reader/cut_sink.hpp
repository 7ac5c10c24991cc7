// Hands on the events up to a time and drops the rest: what analyses that compare ranks see of
// an archive in which a rank stopped recording early (MPITRACE_MAX_SIZE, Definitions::
// recording_cuts). After that time the rank's side of every message, collective and wait is
// missing, and an analysis would find waits that never were.
#pragma once

#include <cstdint>

#include "reader/archive_reader.hpp"
#include "reader/forwarding_sink.hpp"

namespace perusetrace::archive {

class CutSink final : public ForwardingSink<CutSink> {
 public:
  CutSink(EventSink& next, std::uint64_t cut) : next_(next), cut_(cut) {}

  template <typename Call>
  void route(std::uint32_t /*loc*/, std::uint64_t t, const Call& call) {
    if (t <= cut_) call(next_, t);
  }

 private:
  EventSink& next_;
  std::uint64_t cut_;
};

}  // namespace perusetrace::archive
