// Whether a Peruse event that follows another back to back (back_to_back.hpp) can ride in that
// event's record (Record: carry_peruse) instead of taking a record of its own.
//
// On a receive's critical path ob1 fires arrival and search begin, removal, match and search end:
// three of the five only repeat what the record before them says, at its time. Carrying them
// takes their record, its fields and their translation off the hot path; the OTF2 writer writes
// them out as events of their own, unchanged. The decision compares the callback's raw arguments
// with those the latest record was written from: equal, the fields would be equal too.
#pragma once

#include <cstdint>

#include "events/catalogue.hpp"
#include "record/record.hpp"

namespace perusetrace {

static_assert(kPeruseEventCount < 31, "a carried event's code is 5 bits: event + 1");

// A Peruse callback's arguments that decide a record's fields: the communicator (its registry
// entry), the request (unique id), the data (count and type), peer, tag and operation.
struct PeruseArgs {
  const void* comm = nullptr;
  std::intptr_t unique_id = 0;
  const void* datatype = nullptr;
  int count = 0;
  int peer = 0;
  int tag = 0;
  int operation = 0;
};

// What a thread's latest Peruse record was written from, and the last event it holds (its own,
// or the last one carried). Checked against the thread's latest slot and its time: any record
// written since (a wrapper's, a drain's flush region, after a drain reused the slot) differs.
struct LatestPeruse {
  const Record* record = nullptr;
  std::uint64_t time = 0;
  PeruseArgs args;
  std::uint8_t last_event = 0;
};

// Carries `event` with arguments `a` in `latest`, the thread's latest record, if `last` describes
// that record, `event` may take the time of the event it holds last (`sources`, a bit per event:
// TimeSources) and the fields agree: the same communicator, peer, tag and operation, and the same
// request and data, or none (a message event's: request and bytes 0).
inline bool carry_follower(Record* latest, LatestPeruse& last, std::uint8_t event,
                           const PeruseArgs& a, std::uint32_t sources) noexcept {
  if (latest == nullptr || latest != last.record || latest->time != last.time) return false;
  if ((sources >> last.last_event & 1u) == 0) return false;
  const PeruseArgs& b = last.args;
  if (a.comm != b.comm || a.peer != b.peer || a.tag != b.tag || a.operation != b.operation)
    return false;
  bool without_request = false;
  if (a.unique_id != b.unique_id || a.count != b.count || a.datatype != b.datatype) {
    if (a.unique_id != 0 || a.count > 0) return false;
    without_request = true;
  }
  if (!carry_peruse(*latest, event, without_request)) return false;
  last.last_event = event;
  return true;
}

}  // namespace perusetrace
