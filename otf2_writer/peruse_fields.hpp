// The fields of a Peruse event as the archive carries them, and the rule that keeps them short.
// Shared by the writer (otf2_writer/events.cpp) and the tools' reader
// (tools/archive/archive_reader.cpp); no OTF2 here.
//
// A request's fields rarely change between its events (REQ_ACTIVATE ... REQ_NOTIFY name the same
// peer, tag, bytes, operation and communicator), so an event's Enter carries:
//   peruse_request  unless it equals the request of the previous Peruse event of the location;
//   each other field unless it equals that field of the previous Peruse event of the location
//                   with the same request (request 0, the MSG_* and SEARCH_* events, counts as
//                   one request of its own),
// and an absent field means exactly that earlier value. A reader that remembers, per location,
// the previous request and the last fields of every request reads every event whole. The writer
// remembers fields in kSlots slots (request mod kSlots) and writes all of them when the slot
// holds another request, so a reader keeping the same slots (this class) needs no more memory.
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

  // Writer: the fields `v` must carry; remembers `v`.
  unsigned to_write(const PeruseFieldValues& v) {
    unsigned mask = v.request == last_request_ && seen_any_ ? 0u : kFieldRequest;
    Slot& s = slot(v.request);
    if (!s.used || s.values.request != v.request) {
      mask |= kAllFields & ~kFieldRequest;
    } else {
      if (s.values.peer != v.peer) mask |= kFieldPeer;
      if (s.values.tag != v.tag) mask |= kFieldTag;
      if (s.values.bytes != v.bytes) mask |= kFieldBytes;
      if (s.values.operation != v.operation) mask |= kFieldOperation;
      if (s.values.comm != v.comm) mask |= kFieldComm;
    }
    remember(v);
    return mask;
  }

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
    seen_any_ = true;
  }
  std::unique_ptr<Slot[]> slots_;
  std::uint64_t last_request_ = 0;
  bool seen_any_ = false;
};

}  // namespace perusetrace::trace
