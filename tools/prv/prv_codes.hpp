// The numbers perusetrace's Paraver traces use: thread states (record type 1) and event types
// (record type 2). MPI calls are also written in Extrae's types 50000001-50000005
// (extrae_mpi.hpp), for Paraver's stock configurations; everything else is perusetrace's own,
// in 64000000-64000999, MPI_T's in 64100000-64199999, clear of Extrae's (README.md, "Paraver
// traces").
#pragma once

#include <cstddef>
#include <cstdint>

namespace perusetrace::prv {

// Thread states. The numbers follow the usual Paraver/Extrae meaning where one exists, so
// Paraver's stock state configurations colour them sensibly.
enum State : std::uint32_t {
  kStateIdle = 0,             // before a thread's first record
  kStateRunning = 1,          // outside MPI
  kStateNotCreated = 2,       // a thread before it first appears
  kStateWaitMessage = 3,      // MPI_Recv, MPI_Mrecv, MPI_Probe, MPI_Mprobe
  kStateBlockingSend = 4,     // MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend
  kStateSynchronization = 5,  // barriers
  kStateTestProbe = 6,        // MPI_Test*, MPI_Iprobe, MPI_Improbe
  kStateWait = 8,             // MPI_Wait*
  kStateImmediateSend = 10,   // MPI_Isend and friends, MPI_Start(all)
  kStateImmediateRecv = 11,   // MPI_Irecv, MPI_Imrecv
  kStateIo = 12,              // MPI-IO
  kStateCollective = 13,      // collectives other than barriers
  kStateOtherMpi = 15,        // every other MPI function
  kStateSendRecv = 16,        // MPI_Sendrecv(_replace)
  kStateTracer = 24,          // perusetrace writing its buffer out
};

// Event types.
inline constexpr std::uint64_t kTypeBase = 64000000;
inline constexpr std::uint64_t kTypeMpiCall = 64000001;        // value: function id + 1, 0 outside
inline constexpr std::uint64_t kTypePeruseEvent = 64000100;    // value: Peruse event index + 1
inline constexpr std::uint64_t kTypePeruseRequest = 64000101;  // perusetrace request id
inline constexpr std::uint64_t kTypePerusePeer = 64000102;     // peer_value()
inline constexpr std::uint64_t kTypePeruseTag = 64000103;      // tag (>= 0)
inline constexpr std::uint64_t kTypePeruseInternalTag = 64000104;  // -tag (collective traffic)
inline constexpr std::uint64_t kTypePeruseBytes = 64000105;        // request bytes
inline constexpr std::uint64_t kTypePeruseOperation = 64000106;    // 1 send, 2 receive
inline constexpr std::uint64_t kTypePeruseComm = 64000107;         // communicator id + 1
inline constexpr std::uint64_t kTypePostedQueue = 64000110;        // derived counters
inline constexpr std::uint64_t kTypeUnexpectedQueue = 64000111;
inline constexpr std::uint64_t kTypeBytesInFlight = 64000112;
inline constexpr std::uint64_t kTypeFragmentBytes = 64000113;  // bytes of one XFER_CONTINUE
// At the end of an MPI call that stands for several (polls folded, MPITRACE_FOLD_POLLS): how
// many, and their time inside MPI in ns; the rest of the call's state was the program's.
inline constexpr std::uint64_t kTypePollCalls = 64000120;
inline constexpr std::uint64_t kTypePollInsideNs = 64000121;
// Each Peruse event also has a type of its own, value 1: Paraver keeps one value per type and
// time, so events sharing kTypePeruseEvent at one nanosecond (carried followers) would hide each
// other from its counts.
inline constexpr std::uint64_t kTypePeruseEachFirst = 64000200;  // + Peruse event index
// One-sided communication: an operation issued (RmaPut, RmaGet, RmaAtomic), its window, target
// and bytes (to and from the target together).
inline constexpr std::uint64_t kTypeRmaOperation = 64000300;  // 1 put, 2 get, 3 atomic
inline constexpr std::uint64_t kTypeRmaWindow = 64000301;     // window id + 1
inline constexpr std::uint64_t kTypeRmaTarget = 64000302;     // world rank + 1
inline constexpr std::uint64_t kTypeRmaBytes = 64000303;
inline constexpr std::uint64_t kTypeLast = 64000999;
// MPI_T's values (archive metrics "MPI_T ..."), one type each in the archive's order: a range of
// their own, since a run can have thousands (per-peer variables of every communicator).
inline constexpr std::uint64_t kTypeMpitFirst = 64100000;
inline constexpr std::uint64_t kTypeMpitLast = 64199999;
// Annotations (perusetrace/annotate.h): a nested attribute's value, one type per attribute in
// the order the archive's regions name them, the value numbered in that order from 1 (0: none in
// force); an integer attribute's set values, one type per attribute, the value itself.
inline constexpr std::uint64_t kTypeAnnotationFirst = 64200000;
inline constexpr std::uint64_t kTypeAnnotationLast = 64249999;
inline constexpr std::uint64_t kTypeAnnotationSetFirst = 64250000;
inline constexpr std::uint64_t kTypeAnnotationSetLast = 64299999;

// A Peruse peer as kTypePerusePeer's value: world rank + 1, 0 any source; rank r of another MPI
// job (peer -2 - r, docs/otf2-mapping.md) after this job's `ranks`: ranks + 1 + r.
inline std::uint64_t peer_value(std::size_t ranks, std::int32_t peer) {
  if (peer < -1)
    return ranks + 1 + static_cast<std::uint64_t>(-2 - static_cast<std::int64_t>(peer));
  return static_cast<std::uint64_t>(peer + 1);
}

}  // namespace perusetrace::prv
