// The one fixed-size record every hot-path event is written as. No strings, no pointers into
// user memory: names are ids into tables that are written once, at the end.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace perusetrace {

// Every kind of record, once: the enum and its count come from this table, and the
// packing, the journal's reader and the archive writer size and check by it. Kinds are stored
// by number: a new one goes at the end, and its MPI handler and OTF2 encoding (events.cpp, whose
// switch has no default so the compiler names a kind it does not encode) follow.
//   X(name, fields it uses)
#define PERUSETRACE_RECORD_KINDS(X)                                                                \
  X(Enter, "region")                                                                               \
  X(Leave, "region")                                                                               \
  /* event, region = operation (0 send, 1 receive) and the events carried (see below),             \
     comm, peer (world rank), tag, bytes, request, aux = the derived counter the event             \
     changed (queue depth, bytes in flight) */                                                     \
  X(Peruse, "event comm peer tag bytes request aux")                                               \
  /* aux of the message kinds, of IoOperationBegin: the buffer's local datatype id, 0 none */      \
  X(MpiSend, "comm, peer (comm rank), tag, bytes, aux")                                            \
  X(MpiRecv, "comm, peer (comm rank), tag, bytes, aux")                                            \
  X(MpiIsend, "comm, peer, tag, bytes, request, aux")                                              \
  X(MpiIsendComplete, "request")                                                                   \
  X(MpiIrecvRequest, "request")                                                                    \
  X(MpiIrecv, "comm, peer, tag, bytes, request, aux")                                              \
  X(MpiRequestCancelled, "request")                                                                \
  X(CollectiveBegin, "")                                                                           \
  X(CollectiveEnd,                                                                                 \
    "region, comm, peer = root (comm rank, -1 none), bytes = sent, "                               \
    "request = datatype_pair (writer.hpp), aux = received")                                        \
  /* MPI-IO: comm holds the process-local I/O handle id (FileRegistry). */                         \
  X(IoCreateHandle,                                                                                \
    "comm, peer = IoAccess, tag = creation bits, bytes = the file's size, aux = status bits")      \
  X(IoDestroyHandle, "comm")                                                                       \
  X(IoOperationBegin,                                                                              \
    "comm, peer = IoOperation, tag = operation bits, bytes requested, "                            \
    "request = matching id, aux")                                                                  \
  X(IoOperationComplete, "comm, bytes transferred, request = matching id")                         \
  /* MPI_T: comm = the value's local metric id (MetricInfo), tag = 1 for a double, */              \
  X(PvarValue, "bytes = the value's bits (int64 or double)")                                       \
  /* A sample (lib/sampler.hpp): comm = its local calling context (ContextInfo), event = */        \
  /* the MPI state, tag = the activity, region = the MPI function (kNoRegion: none), */            \
  X(Sample, "bytes = the context's depth, aux = the periods it stands for")                        \
  /* Nonblocking collectives: the request in the starting call, the operation where a Wait or */   \
  /* Test completes it (a Leave carries it: the MPI function goes in tag, not region) */           \
  X(NbCollectiveRequest, "request, aux = datatype_pair (writer.hpp)")                              \
  X(NbCollectiveComplete,                                                                          \
    "comm, peer = root, tag = MPI function, bytes = sent, request, aux = received")                \
  /* Annotations (lib/annotations.hpp): comm = the local id of the "ATTRIBUTE=VALUE" pair */       \
  /* (ProcessInfo::annotations), tag = the attribute's id. */                                      \
  X(AnnotationBegin, "comm, tag")                                                                  \
  X(AnnotationEnd, "comm, tag")                                                                    \
  /* An integer value set: comm = the attribute's local metric id (MetricInfo). */                 \
  X(AnnotationSet, "comm, bytes = the value's bits (int64)")                                       \
  /* One-sided communication (lib/rma_handlers.cpp): comm = the process-local window id */         \
  /* (WindowInfo), peer = the target as a rank of the window's communicator (-1: all of them), */  \
  /* request = the matching id an operation shares with its completions. */                        \
  X(RmaWinCreate, "comm")                                                                          \
  X(RmaWinDestroy, "comm")                                                                         \
  X(RmaCollectiveBegin, "")                                                                        \
  X(RmaCollectiveEnd, "comm, peer = RmaSyncLevel bits, tag = RmaCollective")                       \
  X(RmaGroupSync, "comm, peer = RmaSyncLevel bits, tag = local group id (ProcessInfo)")            \
  X(RmaRequestLock, "comm, peer, tag = RmaLock")                                                   \
  X(RmaAcquireLock, "comm, peer, tag = RmaLock")                                                   \
  X(RmaReleaseLock, "comm, peer")                                                                  \
  X(RmaSync, "comm, peer")                                                                         \
  X(RmaPut, "comm, peer, bytes, request")                                                          \
  X(RmaGet, "comm, peer, bytes, request")                                                          \
  X(RmaAtomic, "comm, peer, tag = RmaAtomicKind, bytes = sent, aux = received, request")           \
  X(RmaOpCompleteNonBlocking, "comm, request")                                                     \
  X(RmaOpCompleteRemote, "comm, request")                                                          \
  X(RmaOpTest, "comm, request")                                                                    \
  /* MPI-IO metadata: a file deleted (comm = the local file id, ProcessInfo::file_names), an */    \
  /* individual or shared file pointer moved (IoSeekFrom), a file's size set or preallocated */    \
  /* (carried by the Leave of MPI_File_set_size or MPI_File_preallocate, which it annotates) */    \
  X(IoDeleteFile, "comm")                                                                          \
  X(IoSeek, "comm, peer = IoSeekFrom, bytes = offset asked (int64 bits), aux = offset reached")    \
  X(IoSetSize, "comm, bytes = the size")                                                           \
  /* Polls folded (lib/mpi_handlers.hpp, Call): right before the Leave that closes them, at its */ \
  /* time: region = the function, bytes = the calls, aux = the time inside them (ticks in the */   \
  /* journal, ns once read back: RecordFile) */                                                    \
  X(PollFold, "region, bytes, aux")

enum class RecordKind : std::uint8_t {
#define PERUSETRACE_KIND_NAME(name, fields) name,
  PERUSETRACE_RECORD_KINDS(PERUSETRACE_KIND_NAME)
#undef PERUSETRACE_KIND_NAME
};

inline constexpr std::size_t kRecordKindCount = 0
#define PERUSETRACE_KIND_ONE(name, fields) +1
    PERUSETRACE_RECORD_KINDS(PERUSETRACE_KIND_ONE)
#undef PERUSETRACE_KIND_ONE
    ;
static_assert(kRecordKindCount < 0x7f, "kinds are packed below the packing's escape byte");

// Whether a stored kind is one this build knows (a damaged journal holds any byte).
constexpr bool known_kind(std::uint8_t kind) noexcept {
  return kind < kRecordKindCount;
}

// MPI-IO values carried in records, independent of OTF2's own enums.
enum class IoAccess : std::int32_t { ReadOnly, WriteOnly, ReadWrite };
enum class IoOperation : std::int32_t { Read, Write, Flush };
enum class IoSeekFrom : std::int32_t { Start, Current, End };
// A size the MPI does not say (a flush moves no bytes of its own; a file whose size could not be
// read at its opening): OTF2's "undefined".
inline constexpr std::uint64_t kIoUnknownBytes = ~std::uint64_t{0};
inline constexpr std::int32_t kIoCreate = 1, kIoExclusive = 2;        // creation bits
inline constexpr std::int32_t kIoAppend = 1, kIoDeleteOnClose = 2;    // status bits
inline constexpr std::int32_t kIoNonBlocking = 1, kIoCollective = 2;  // operation bits

// One-sided communication values carried in records, independent of OTF2's own enums.
inline constexpr std::int32_t kRmaSyncProcess = 1, kRmaSyncMemory = 2;  // RmaSyncLevel bits
enum class RmaCollective : std::int32_t {
  Fence,
  Create,
  CreateAllocate,
  Destroy,
  DestroyDeallocate
};
enum class RmaLock : std::int32_t { Exclusive, Shared };
enum class RmaAtomicKind : std::int32_t { Accumulate, FetchAndAccumulate, CompareAndSwap };
inline constexpr std::int32_t kRmaAllTargets = -1;

// Derived counters, written as OTF2 metrics next to the Peruse events that change them.
enum class Metric : std::uint8_t { PostedQueueDepth, UnexpectedQueueDepth, BytesInFlight, Count };

// An Enter or Leave whose `event` is not 0 carries the MPI event of that kind (MpiSend ...
// IoOperationComplete) in its other fields, at the same time: right after the Enter, or right
// before the Leave (see Call in lib/mpi_handlers.hpp).
struct Record {
  std::uint64_t time;
  RecordKind kind;
  std::uint8_t event;    // Peruse: PeruseEvent; Enter/Leave: 0 or the RecordKind carried
  std::uint16_t region;  // region id (Enter/Leave)
  std::uint32_t comm;    // process-local communicator id
  std::int32_t peer;
  std::int32_t tag;
  std::uint64_t bytes;
  std::uint64_t request;  // stable request id: never reused within a run
  std::uint64_t aux;
};
static_assert(sizeof(Record) == 48, "records are fixed-size: keep the layout packed");

// Puts `event` (an MPI event record, its time unset) into `carrier`, an Enter or Leave.
// The carrier keeps its own time, kind and region; every other field is the event's, so a field
// added to Record is carried without this changing.
inline void carry(Record& carrier, const Record& event) noexcept {
  const Record own = carrier;
  carrier = event;
  carrier.time = own.time;
  carrier.kind = own.kind;
  carrier.region = own.region;
  carrier.event = static_cast<std::uint8_t>(event.kind);
}

// carry() into a record already committed to a buffer that outlives its process (the buffer
// file, lib/thread_buffer.hpp): `event` is written last, so that a process killed half-way
// leaves the record as it was (its other fields mean nothing while `event` is 0).
inline void carry_committed(Record& carrier, const Record& event) noexcept {
  Record merged = carrier;
  carry(merged, event);
  const std::uint8_t kind = merged.event;
  merged.event = carrier.event;
  carrier = merged;
  std::atomic_signal_fence(std::memory_order_release);
  carrier.event = kind;
}

// The MPI event an Enter or Leave carries (its `event` is not 0), at the carrier's time.
inline Record carried(const Record& carrier) noexcept {
  Record event = carrier;
  event.kind = static_cast<RecordKind>(carrier.event);
  event.event = 0;
  return event;
}

// A Peruse record carries up to two events Open MPI fired right after its own, back to back
// (record/carried_followers.hpp): they happened at its time and have its fields, except that
// one marked `without_request` has request and bytes 0. Its `region` holds the operation in the low
// 4 bits and a 6-bit code per carried event above them: (event + 1) << 1 | without_request.
struct CarriedPeruse {
  std::uint8_t event;
  bool without_request;
};
inline constexpr unsigned kCarriedSlots = 2;

inline std::uint8_t peruse_operation(const Record& r) noexcept {
  return static_cast<std::uint8_t>(r.region & 0xfu);
}

// The event `r` carries in `slot` (0 or 1, in the order they happened); false if none.
inline bool carried_peruse(const Record& r, unsigned slot, CarriedPeruse& out) noexcept {
  const unsigned code = r.region >> (4 + 6 * slot) & 0x3fu;
  if (code == 0) return false;
  out = CarriedPeruse{static_cast<std::uint8_t>((code >> 1) - 1), (code & 1u) != 0};
  return true;
}

// Adds `event` to what `r` carries; false when it carries two already.
inline bool carry_peruse(Record& r, std::uint8_t event, bool without_request) noexcept {
  const unsigned code = (event + 1u) << 1 | (without_request ? 1u : 0u);
  for (unsigned slot = 0; slot < kCarriedSlots; ++slot) {
    const unsigned shift = 4 + 6 * slot;
    if ((r.region >> shift & 0x3fu) == 0) {
      r.region = static_cast<std::uint16_t>(r.region | code << shift);
      return true;
    }
  }
  return false;
}

// The last event `r` holds: the last one it carries, or its own.
inline CarriedPeruse last_peruse_event(const Record& r) noexcept {
  CarriedPeruse last{r.event, false};
  for (unsigned slot = 0; slot < kCarriedSlots; ++slot) carried_peruse(r, slot, last);
  return last;
}

inline constexpr std::uint16_t kNoRegion = 0xffff;

// Local communicator ids the runtime reserves.
inline constexpr std::uint32_t kCommWorld = 0;
inline constexpr std::uint32_t kCommSelf = 1;
inline constexpr std::uint32_t kCommUnknown = 0xffffffffu;

}  // namespace perusetrace
