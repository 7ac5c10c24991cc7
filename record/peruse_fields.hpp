// The fields of a Peruse event as the archive carries them. The writer (otf2_writer/events.cpp)
// writes all of them on every event. Archives of earlier versions carried, on an event's Enter,
//   peruse_request  unless it equalled the request of the previous Peruse event of the location;
//   each other field unless it equalled that field of the previous Peruse event of the location
//                   with the same request (request 0, the MSG_* and SEARCH_* events, counting as
//                   one request of its own),
// an absent field meaning exactly that earlier value, remembered in kSlots slots (request mod
// kSlots). The tools' reader (reader/archive_reader.cpp) still completes such events with
// PeruseFieldMemory; on a whole event it changes nothing. No OTF2 here.
#pragma once

#include <cstdint>
#include <memory>

namespace perusetrace::trace {

struct PeruseFieldValues {
  std::uint64_t request = 0;
  std::int32_t peer = -1;  // world rank, -1 any source
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint8_t operation = 0;  // 0 send, 1 receive
  std::uint32_t comm = 0;      // the writer: local id; a reader: the archive's (unified) id
};

// Which fields an event's Enter carries.
enum PeruseField : unsigned {
  kFieldRequest = 1u << 0,
  kFieldPeer = 1u << 1,
  kFieldTag = 1u << 2,
  kFieldBytes = 1u << 3,
  kFieldOperation = 1u << 4,
  kFieldComm = 1u << 5,
  kAllFields = (1u << 6) - 1,
};

class PeruseFieldMemory {
 public:
  static constexpr std::uint64_t kSlots = 1024;

  // Reader: completes `v`, whose fields in `present` were read, and remembers it. A field absent
  // without an earlier value (a damaged archive) keeps its default.
  void complete(PeruseFieldValues& v, unsigned present) {
    if (!(present & kFieldRequest)) v.request = last_request_;
    const Slot& s = slot(v.request);
    if (s.used && s.values.request == v.request) {
      if (!(present & kFieldPeer)) v.peer = s.values.peer;
      if (!(present & kFieldTag)) v.tag = s.values.tag;
      if (!(present & kFieldBytes)) v.bytes = s.values.bytes;
      if (!(present & kFieldOperation)) v.operation = s.values.operation;
      if (!(present & kFieldComm)) v.comm = s.values.comm;
    }
    remember(v);
  }

 private:
  struct Slot {
    PeruseFieldValues values;
    bool used = false;
  };
  Slot& slot(std::uint64_t request) {
    if (!slots_) slots_ = std::make_unique<Slot[]>(kSlots);  // only locations with Peruse events
    return slots_[request % kSlots];
  }
  void remember(const PeruseFieldValues& v) {
    Slot& s = slot(v.request);
    s.values = v;
    s.used = true;
    last_request_ = v.request;
  }
  std::unique_ptr<Slot[]> slots_;
  std::uint64_t last_request_ = 0;
};

}  // namespace perusetrace::trace
