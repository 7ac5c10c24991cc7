// What the archive's reading threads leave to the one place that sees every event in the
// archive's order, just before the sinks do: times from OTF2's clock to ns since the trace's
// start, the Peruse fields an archive of an earlier version left out (they repeat an earlier
// event of the location), and the datatypes a nonblocking operation named when it began, given
// to its completion (the request is the rank's: another thread may complete it).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/event_batch.hpp"
#include "record/peruse_fields.hpp"

namespace perusetrace::archive {

inline constexpr std::uint32_t kNoDatatype = 0xffffffffu;

// Timer ticks to ns; saturates instead of overflowing on a damaged timer resolution.
std::uint64_t ticks_to_ns(std::uint64_t ticks, std::uint64_t resolution);

// EventRecord::aux as the reading threads leave it (the sinks never see these records as such).
enum RecordNote : std::uint8_t {
  kNoNote = 0,
  // Peruse: aux holds the trace::PeruseField bits of the fields the event carried.
  // IoBegin: c is the datatype the operation names (kNoDatatype: none), kept for its completion.
  // CollectiveRequest: a and b are the send and receive datatypes, kept for its completion.
  kKeepsDatatypes = 1,
  // IoComplete, Collective (a nonblocking one's completion): the datatypes kept for it are
  // looked up; the DatatypeUse records right after it (kFromCompletion) get them.
  kLooksUpDatatypes = 2,
  // DatatypeUse: its datatype is the one the completion before it looked up (flag: which one,
  // DatatypeUse::CollectiveSend, CollectiveReceive, FileRead); Nothing when there is none.
  kFromCompletion = 3,
};

class EventSequencer {
 public:
  explicit EventSequencer(const Definitions& defs);

  // Turns a record as read (OTF2 time, notes in aux) into the one the sinks see. Called in the
  // archive's order, once per record.
  void sequence(EventRecord& r) {
    r.t = ns(r.t);
    if (r.kind == RecordKind::Peruse) {
      complete_peruse(r);
    } else if (r.aux != kNoNote) {
      datatypes(r);
    }
    r.aux = 0;
  }
  void sequence(EventBatch& batch) {
    for (EventRecord& r : batch.records) sequence(r);
  }

  // OTF2's time to ns since the trace's start (perusetrace's timer counts ns already).
  std::uint64_t ns(std::uint64_t t) const {
    if (t <= offset_) return 0;
    return exact_ns_ ? t - offset_ : ticks_to_ns(t - offset_, resolution_);
  }

 private:
  void complete_peruse(EventRecord& r);
  void datatypes(EventRecord& r);

  const Definitions& defs_;
  std::uint64_t offset_, resolution_;
  bool exact_ns_;
  std::vector<trace::PeruseFieldMemory> peruse_memory_;  // by location
  // (rank, request) -> (send, receive) datatype; (rank, matching) -> datatype of an I/O.
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::pair<std::uint32_t, std::uint32_t>>
      pending_collectives_;
  struct PendingIo {
    std::uint32_t datatype;
    bool write;
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, PendingIo> pending_io_;
  // What the last completion looked up: send and receive (or the file operation's) datatype.
  std::uint32_t found_send_ = kNoDatatype, found_receive_ = kNoDatatype;
  bool found_write_ = false;
};

}  // namespace perusetrace::archive
