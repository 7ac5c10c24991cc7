// What a thread does while a region is the innermost one it is inside, in the categories
// Paraver's and Vampir's users know (waiting for a message, blocking send, collective, ...):
// the Paraver converter's thread states and the HTML timeline's colours.
#pragma once

#include <cstdint>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

enum class CallKind : std::uint8_t {
  OutsideMpi,       // no MPI call (the program's own code, annotations)
  WaitMessage,      // MPI_Recv, MPI_Mrecv, MPI_Probe, MPI_Mprobe
  BlockingSend,     // MPI_Send, MPI_Ssend, MPI_Bsend, MPI_Rsend
  SendRecv,         // MPI_Sendrecv(_replace)
  ImmediateSend,    // MPI_Isend and friends, MPI_Start(all)
  ImmediateRecv,    // MPI_Irecv, MPI_Imrecv
  Wait,             // MPI_Wait*
  TestProbe,        // MPI_Test*, MPI_Iprobe, MPI_Improbe
  Synchronization,  // barriers
  Collective,       // collectives other than barriers
  Io,               // MPI-IO
  OtherMpi,         // every other MPI function
  Tracer,           // perusetrace writing its buffer out
};
inline constexpr int kCallKinds = static_cast<int>(CallKind::Tracer) + 1;

CallKind call_kind(const RegionDef& region);
// Whether a call of this MPI function may move messages (Open MPI's progress engine runs in
// every call that sends, receives, completes, probes or synchronises): false for the calls
// that only read or build local objects (MPI_Comm_rank, MPI_Type_*, MPI_Wtime, ...) and for
// ob1's nonblocking posting calls (MPI_Isend, MPI_Irecv, MPI_Start, ...), which poll nothing.
bool makes_progress(const RegionDef& region);
// "waiting for a message", "blocking send", ...
const char* call_kind_name(CallKind kind);

}  // namespace perusetrace::archive
