// The names perusetrace gives what it writes into an archive, which its tools look for: one
// source for the writer (otf2_writer/) and the reader (reader/).
#pragma once

#include <cstddef>

namespace perusetrace::trace {

// Properties of the anchor file.
// The version of what perusetrace writes into an archive (its records, attributes and
// properties), raised whenever the reader of an older perusetrace could misread it. Archives
// written before this property was: version 1.
inline constexpr const char* kArchiveVersionProperty = "PERUSETRACE::ARCHIVE_VERSION";
inline constexpr unsigned kArchiveVersion = 1;
// The settings the run was traced with: "MPITRACE_PERUSE_EVENTS=... MPITRACE_GROUPS=...".
inline constexpr const char* kSettingsProperty = "PERUSETRACE::SETTINGS";
// One item per clock domain, separated by spaces:
// leader=RANK;host=NAME;ranks=N;offsets=OFFSET_NS:ERROR_NS:ROUND_TRIPS,...
inline constexpr const char* kClockDomainsProperty = "PERUSETRACE::CLOCK_DOMAINS";

// The other MPI jobs at the far end of intercommunicators (MPI_Comm_spawn's children, the parent
// of a spawned job, MPI_Comm_connect's peers), one item per job, separated by spaces:
//   job=NAME;relation=spawned|parent|connected;archive=PATH|-;first_group=G;ranks=R,R,...
// PATH is the job's own archive relative to this archive's directory ("-": not known). Its
// processes that are members of an intercommunicator here are location groups G, G+1, ... (in
// a system tree node of class kOtherJobNodeClass named NAME) standing for its world ranks R, in
// that order, each with one location whose one event is a MeasurementOnOff (off) at the trace's
// start; G + i is also their index in group 0.
inline constexpr const char* kJobsProperty = "PERUSETRACE::MPI_JOBS";
inline constexpr const char* kOtherJobNodeClass = "other MPI job";

// The ranks whose recording stopped early because their journal reached MPITRACE_MAX_SIZE, as
// "RANK=TIME" items separated by spaces, TIME an event timestamp: the rank has no event after
// it (the run went on). Absent when every rank recorded to MPI_Finalize.
inline constexpr const char* kRecordingCutProperty = "PERUSETRACE::RECORDING_CUT";

// MPI_T control variables (lib/mpit_session.hpp), items separated by "; " (a value's own ';'
// written as ','): rank 0's at MPI_Init, "NAME=VALUE"; then the ranks whose values differ,
// "RANK NAME=VALUE" per differing variable; then what MPITRACE_CVARS asked for, "NAME=VALUE: set"
// or "NAME=VALUE: not set, WHY".
inline constexpr const char* kCvarsProperty = "PERUSETRACE::MPI_T_CVARS";
inline constexpr const char* kCvarsDifferProperty = "PERUSETRACE::MPI_T_CVARS_DIFFER";
inline constexpr const char* kCvarsSetProperty = "PERUSETRACE::MPI_T_CVARS_SET";

// Metrics. The Peruse-derived counters are metric members 0..2 ("posted queue depth",
// "unexpected queue depth", "bytes in flight", ABSOLUTE_POINT). MPI_T performance variables
// follow, one member per value, named
//   "MPI_T PVAR"                          a NO_OBJECT variable with one element
//   "MPI_T PVAR[i]"                       element i of a NO_OBJECT variable
//   "MPI_T PVAR (COMM) [peer R]"          element i of one bound to communicator COMM (its name,
//                                         or "comm N", N the rank's local id): peer R = world
//                                         rank of the communicator's member i
// plus, for a watermark, " moves" (times it changed) and " change" (sum of its changes).
// A member whose mode is RELATIVE_LAST holds the change since the previous read (counters,
// timers, aggregates, Open MPI's monotonic SPC counters); ABSOLUTE_POINT, the value read. Values
// are written only when they changed, at the read: before the Enter of an MPI call (what
// happened outside MPI) and before its Leave (what the call caused).
inline constexpr const char* kPvarMetricPrefix = "MPI_T ";
// An annotation's integer values (perusetrace/annotate.h, set) are a member of type USER named
// after the attribute ("MODULE:NAME", or "NAME" for the program's own), ABSOLUTE_POINT, INT64.
// Its nested values are regions of paradigm USER named "ATTRIBUTE=VALUE" (the first '=' ends
// the attribute), entered and left on the thread that began and ended them.
inline constexpr char kAnnotationSeparator = '=';
inline constexpr const char* kAnnotationDescription = "perusetrace annotation";
// The description of the regions and the metric of a process-scope attribute: the value holds
// for every thread of the rank, whichever thread began or set it.
inline constexpr const char* kProcessAnnotationDescription =
    "perusetrace annotation, process scope";

// The attributes of Peruse events: their ids, and their names by id.
enum Attribute : unsigned {
  kAttrRequest,    // stable request id (UINT64)
  kAttrPeer,       // peer as a world rank, -1 for MPI_ANY_SOURCE (INT32)
  kAttrTag,        // (INT32)
  kAttrBytes,      // count x type size; fragment bytes for REQ_XFER_CONTINUE (UINT64)
  kAttrOperation,  // 0 send, 1 receive (UINT8)
  kAttrComm,       // (COMM)
  // Of a CallingContextSample (lib/sampler.hpp):
  kAttrMpiState,      // 0 not in MPI, 1 MPI work, 2 MPI stall (UINT8, mpi_state.h's values)
  kAttrMpiActivity,   // what the thread in MPI does or waits for (UINT8, mpi_state.h's values)
  kAttrMpiFunction,   // the MPI function the sample was taken in (REGION)
  kAttrSampleWeight,  // the sampling periods it stands for, when more than 1 (UINT32)
  // MPI-IO (docs/otf2-mapping.md, MPI-IO):
  kAttrIoSizeAtOpen,  // of an IoCreateHandle: the file's size in bytes when it was opened (UINT64)
  kAttrIoHandle,      // of the Leave of MPI_File_set_size and MPI_File_preallocate (IO_HANDLE)
  kAttrIoSize,        // ... and the size they set or preallocated, in bytes (UINT64)
  // The MPI datatype of a message's or an I/O operation's buffer, and of a collective's send and
  // receive buffers (STRING: the datatype's definition string, datatype_text.hpp)
  kAttrDatatype,
  kAttrSendDatatype,
  kAttrRecvDatatype,
  // Of the Leave of polls folded into one call (MPITRACE_FOLD_POLLS): how many calls the span
  // from its Enter holds, and their time inside MPI in ns (UINT64 both); absent: one call.
  kAttrPollCalls,
  kAttrPollInsideNs,
  kAttrCount,
  // Archives written before the MPI-IO attributes (and the datatype ones after them) lack them:
  // a reader requires only those before them.
  kAttrRequiredCount = kAttrIoSizeAtOpen,
};
inline constexpr const char* kAttributeNames[kAttrCount] = {
    "peruse_request",    "peruse_peer", "peruse_tag",    "peruse_bytes", "peruse_operation",
    "peruse_comm",       "mpi_state",   "mpi_activity",  "mpi_function", "sample_weight",
    "io_size_at_open",   "io_handle",   "io_size",       "mpi_datatype", "mpi_send_datatype",
    "mpi_recv_datatype", "poll_calls",  "poll_inside_ns"};

// The MPI-IO paradigm's files (IoRegularFile, one per name) carry this property: the size in
// bytes the file had when the run first opened it (UINT64), when some rank opened it.
inline constexpr const char* kIoInitialSizeProperty = "initial size";

// Regions: a Peruse event is the region of its full name (events/catalogue.hpp), the tracer
// writing its buffer is one region of its own.
inline constexpr const char* kPeruseRegionPrefix = "PERUSE_COMM_";
inline constexpr const char* kTracerRegion = "perusetrace flush";

}  // namespace perusetrace::trace
