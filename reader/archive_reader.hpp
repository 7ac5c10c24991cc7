// An OTF2 archive written by perusetrace, as its tools (the Paraver converter, the report) need
// it: the definitions in plain C++ types and the events streamed in time order to an EventSink.
// The only file of the tools that sees OTF2.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "record/datatype_text.hpp"
#include "record/peruse_fields.hpp"

namespace perusetrace::archive {

// A problem with the input, worded for the user: what is wrong and what to do.
class ArchiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Annotation: a nested annotation's value (perusetrace/annotate.h), "ATTRIBUTE=VALUE".
enum class RegionKind : std::uint8_t { MpiFunction, Peruse, Tracer, Other, Annotation };
enum class RegionRole : std::uint8_t { Function, PointToPoint, Barrier, Collective, FileIo, Other };

struct RegionDef {
  std::string name;
  RegionKind kind = RegionKind::Other;
  RegionRole role = RegionRole::Other;
  std::uint32_t peruse_index = 0;  // RegionKind::Peruse: position among the Peruse regions
  bool sampled = false;          // a function of the samples' call stacks (OTF2 paradigm SAMPLING)
  std::string attribute, value;  // RegionKind::Annotation: the name's two parts
  bool process_scope = false;    // RegionKind::Annotation: the value holds for the whole rank
};

struct NodeDef {
  std::string name;
};

struct RankDef {
  std::string name;
  std::uint32_t node = 0;  // index into Definitions::nodes
  std::uint32_t threads = 0;
};

struct LocationDef {
  std::uint64_t id = 0;  // OTF2 location id
  std::string name;
  std::uint32_t rank = 0;
  std::uint32_t thread = 0;  // 0 for the rank's first location, then in id order
  std::uint64_t events = 0;
};

// A member of a communicator that is a process of another MPI job (CommDef::job).
inline constexpr std::uint32_t kOtherJobRank = 0xfffffffeu;
inline constexpr std::uint32_t kNoJob = 0xffffffffu;

struct CommDef {
  std::string name;
  // Member i of the communicator is this world rank, or kOtherJobRank: a process of the job
  // `job`, whose world rank there is job_ranks[i].
  std::vector<std::uint32_t> world_ranks;
  bool self = false;                     // MPI_COMM_SELF: the one member is the caller
  std::uint32_t job = kNoJob;            // index into Definitions::jobs
  std::vector<std::uint32_t> job_ranks;  // with `job`: as world_ranks, in that job for its members
};

// Another MPI job at the far end of intercommunicators (MPI_Comm_spawn's children, the job that
// spawned this one, MPI_Comm_connect's peer): a trace of its own. Its processes are no ranks of
// this archive.
struct JobDef {
  std::string name;      // "spawn-1", "parent", ...
  std::string relation;  // "spawned" (by this job), "parent" (of this job), "connected"
  std::string archive;   // its archive, relative to this archive's directory; "" not known
  std::vector<std::uint32_t> ranks;  // its world ranks that are members of communicators here
  std::uint32_t first_group = 0;     // the location group of ranks[0]; the others follow
};

// MPI-IO (docs/otf2-mapping.md, MPI-IO). A size the archive does not give is kUnknownSize.
inline constexpr std::uint64_t kUnknownSize = ~std::uint64_t{0};

// An MPI datatype (record/datatype_text.hpp); `id` and the inner `types` index
// Definitions::datatypes.
using DatatypeDef = trace::DatatypeText;

// A file, one per name: opened, or only deleted, by some rank.
struct FileDef {
  std::string name;
  std::uint64_t initial_size = kUnknownSize;  // its size in bytes when the run first opened it
};

// A file opened by one rank: an OTF2 I/O handle. Its own size at opening comes with its
// creation (EventSink::io_handle_created).
struct IoHandleDef {
  std::string name;        // the file's name
  std::uint32_t file = 0;  // index into Definitions::files
  std::uint32_t comm = 0;  // the communicator it was opened on (kNoComm: unknown)
};

// A metric member. The Peruse counters share one class; every other metric has a class of its
// own (archive_schema.hpp). Metric events reach the sinks one member at a time.
enum class MetricMode : std::uint8_t {
  Value,  // the value read (OTF2's absolute and accumulated modes)
  Delta,  // the change since the previous value of the location (OTF2_METRIC_RELATIVE_LAST)
};
enum class MetricType : std::uint8_t { Int64, Uint64, Double };

struct MetricDef {
  std::string name, description, unit;
  MetricMode mode = MetricMode::Value;
  MetricType type = MetricType::Int64;
  bool annotation = false;     // an annotation's integer values, named after its attribute
  bool process_scope = false;  // an annotation's: the values hold for the whole rank
};

inline constexpr std::uint32_t kNoContext = 0xffffffffu;

// A node of the samples' calling context tree: a frame, its place, its caller's node. Inside MPI
// the leaf is the MPI function's own region.
struct ContextDef {
  std::uint32_t region = 0;           // index into Definitions::regions
  std::uint32_t parent = kNoContext;  // kNoContext at a root
  std::string file;                   // "" when the frame has no debug information
  std::uint32_t line = 0;
};

// An RMA window (one-sided communication): targets are ranks of its communicator.
struct WindowDef {
  std::string name;
  std::uint32_t comm = 0xffffffffu;  // index into Definitions::comms; kNoComm when unknown
};

struct Definitions {
  std::uint64_t timer_resolution = 1'000'000'000;
  std::uint64_t global_offset = 0;
  std::uint64_t trace_length = 0;       // in ns
  std::uint64_t realtime_start_ns = 0;  // CLOCK_REALTIME at the trace's start, 0 when unknown
  std::vector<NodeDef> nodes;
  std::vector<RankDef> ranks;              // by world rank
  std::vector<LocationDef> locations;      // by rank, then thread: the tools' location index
  std::vector<RegionDef> regions;          // by OTF2 region id
  std::vector<std::string> peruse_events;  // short names (REQ_ACTIVATE...) by peruse_index
  std::vector<CommDef> comms;              // by unified communicator id
  std::vector<WindowDef> windows;          // by OTF2 RmaWin id
  std::vector<JobDef> jobs;                // other MPI jobs (archive_schema.hpp, kJobsProperty)
  // Groups of processes (OTF2 COMM_GROUP groups: those of communicators and of RMA group
  // synchronisations) as world ranks, by OTF2 group id.
  std::map<std::uint32_t, std::vector<std::uint32_t>> groups;
  std::vector<MetricDef> metrics;        // by OTF2 metric member id (events name members)
  std::vector<ContextDef> contexts;      // by OTF2 calling context id (a forest)
  std::uint64_t sampling_period_ns = 0;  // the interrupt generator's period; 0: no sampling
  std::vector<FileDef> files;            // by OTF2 IoFile id
  std::vector<DatatypeDef> datatypes;    // by archive id, inner ones first
  std::vector<IoHandleDef> io_handles;   // by OTF2 IoHandle id
  std::uint64_t total_events = 0;
  std::string creator;
  unsigned archive_version = 1;  // PERUSETRACE::ARCHIVE_VERSION (1 for archives without it)
  std::string settings;          // the settings property ("MPITRACE_PERUSE_EVENTS=..."), or ""
  std::string clock_domains;     // the clock-domains property, or "" (archive_schema.hpp)
  // MPI_T's control variables as the properties hold them, or "" (archive_schema.hpp).
  std::string cvars, cvars_differ, cvars_set;
  // World rank -> when its recording stopped at MPITRACE_MAX_SIZE (ns since the trace start):
  // it has no event after (archive_schema.hpp). Empty when every rank recorded to the end.
  std::map<int, std::uint64_t> recording_cuts;
  // The earliest of them, or 0: what analyses that need every rank stop at.
  std::uint64_t analysis_cut() const {
    std::uint64_t first = 0;
    for (const auto& [rank, t] : recording_cuts)
      if (first == 0 || t < first) first = t;
    return first;
  }
};

// The fields of every Peruse event, whole (the archive writes repeated ones once); `comm` is the
// archive's communicator id, kNoComm when the event names none.
using PeruseFields = trace::PeruseFieldValues;

inline constexpr std::uint32_t kNoComm = 0xffffffffu;
inline constexpr std::uint32_t kNoRegion = 0xffffffffu;

// A CallingContextSample with perusetrace's attributes (archive_schema.hpp). `state` and
// `activity` are mpi_state.h's values as written (a damaged archive may hold others).
struct Sample {
  std::uint32_t context = kNoContext;  // index into Definitions::contexts
  std::uint8_t state = 0;
  std::uint8_t activity = 0;
  std::uint32_t mpi_function = kNoRegion;  // a region; kNoRegion outside MPI
  std::uint32_t weight = 1;                // the sampling periods it stands for
};

// One-sided communication's events, one struct for all of them (OTF2's Rma* records).
enum class RmaEventKind : std::uint8_t {
  WinCreate,
  WinDestroy,
  CollectiveBegin,
  CollectiveEnd,
  GroupSync,
  RequestLock,
  AcquireLock,
  TryLock,
  ReleaseLock,
  Sync,
  WaitChange,
  Put,
  Get,
  Atomic,
  CompleteBlocking,
  CompleteNonBlocking,
  CompleteRemote,
  Test,
};
inline constexpr std::uint32_t kAllTargets = 0xffffffffu;  // a lock or sync of every target
inline constexpr std::uint32_t kNoWindow = 0xffffffffu;
struct RmaEvent {
  RmaEventKind kind = RmaEventKind::Put;
  std::uint32_t window = kNoWindow;      // index into Definitions::windows
  std::uint32_t target = kAllTargets;    // a rank of the window's communicator
  std::uint64_t sent = 0, received = 0;  // bytes to and from the target (Put, Get, Atomic)
  std::uint64_t matching = 0;            // operations and their completions
  std::uint32_t group = 0xffffffffu;     // GroupSync: key of Definitions::groups
  std::uint32_t sync_level = 0;          // GroupSync, CollectiveEnd: 1 process, 2 memory
  bool exclusive = false;                // RequestLock, AcquireLock, TryLock
};
// An MPI-IO operation as it begins: what it does, how, and how much it asks for.
enum class IoMode : std::uint8_t { Read, Write, Flush };
inline constexpr std::uint32_t kIoNonBlocking = 1, kIoCollective = 2;  // IoBegin::flags (OTF2's)
struct IoBegin {
  IoMode mode = IoMode::Read;
  std::uint32_t flags = 0;
  std::uint64_t bytes = 0;     // requested; kUnknownSize for a flush
  std::uint64_t matching = 0;  // the same in its io_complete
};
enum class IoSeekFrom : std::uint8_t { Start, Current, End, Other };

// What a datatype carried, for EventSink::datatype_use.
enum class DatatypeUse : std::uint8_t {
  Send,               // a point-to-point message sent (MpiSend, MpiIsend)
  Receive,            // one received (MpiRecv, MpiIrecv)
  CollectiveSend,     // the bytes this rank sent in a collective
  CollectiveReceive,  // and received
  FileRead,           // an MPI-IO operation completed, with the bytes it transferred
  FileWrite,
};

inline constexpr std::uint32_t kNoRoot = 0xffffffffu;

// A collective operation as it completed: MpiCollectiveEnd, or NonBlockingCollectiveComplete
// (request not 0) in the Wait or Test that completed it.
struct Collective {
  std::uint32_t comm = 0xffffffffu;  // kNoComm when none
  std::uint32_t root = kNoRoot;      // a rank of comm
  std::uint64_t sent = 0, received = 0;
  std::uint64_t request = 0;
};

// Point-to-point communication's events, one struct for all of them (OTF2's MpiSend, MpiIsend,
// MpiIsendComplete, MpiIrecvRequest, MpiRecv, MpiIrecv, MpiRequestCancelled).
enum class P2pKind : std::uint8_t {
  Send,          // a message sent (blocking) or posted (an Isend's, with its request)
  SendComplete,  // an Isend's request completed (in a Wait or Test)
  RecvRequest,   // an Irecv posted: its request
  Recv,          // a message received: by a blocking call, or an Irecv's completed
  Cancelled,     // a request cancelled
};
struct PointToPoint {
  P2pKind kind = P2pKind::Send;
  std::uint32_t peer = 0;            // Send, Recv: a rank of `comm`
  std::uint32_t comm = 0xffffffffu;  // Send, Recv
  std::uint32_t tag = 0;             // Send, Recv
  std::uint64_t bytes = 0;           // Send, Recv
  std::uint64_t request = 0;         // 0 for a blocking Send or Recv
  bool blocking = false;             // Send, Recv: made by a blocking call
};

// MPI-IO's completions, seeks and resizes (EventSink::io_complete, io_seek, io_resize).
struct IoComplete {
  std::uint64_t bytes = 0;     // transferred
  std::uint64_t matching = 0;  // the same in its io_begin
};
// MPI_File_seek(_shared): the offset asked for, from where, and the one reached (etypes of the
// file's view; kUnknownSize when the MPI did not say).
struct IoSeek {
  std::int64_t offset = 0;
  IoSeekFrom from = IoSeekFrom::Start;
  std::uint64_t reached = kUnknownSize;
};
// MPI_File_set_size or MPI_File_preallocate (`region`, the MPI function) and the size asked for.
struct IoResize {
  std::uint32_t region = 0xffffffffu;
  std::uint64_t size = 0;
};

// Polls folded into one call (MPITRACE_FOLD_POLLS; EventSink::polls_folded): the span from the
// region's Enter to its Leave holds `calls` calls of it, `inside_ns` of it inside MPI.
struct PollFold {
  std::uint32_t region = 0;
  std::uint64_t calls = 1;
  std::uint64_t inside_ns = 0;
};
// What a leave() of `region` after a span of `span_ns` counts: the fold that came right before
// it (`pending`, which it clears), or one call and the span.
struct CallCount {
  std::uint64_t calls = 1, ns = 0;
};
inline CallCount counted(PollFold& pending, std::uint32_t region, std::uint64_t span_ns) {
  CallCount c{1, span_ns};
  if (pending.calls > 1 && pending.region == region)
    c = {pending.calls, pending.inside_ns < span_ns ? pending.inside_ns : span_ns};
  pending = PollFold{};
  return c;
}

// The bytes a datatype (index into Definitions::datatypes) carried (EventSink::datatype_use).
struct DatatypeBytes {
  std::uint32_t datatype = 0;
  DatatypeUse use = DatatypeUse::Send;
  std::uint64_t bytes = 0;
};

// Times are ns since the trace start; `loc` indexes Definitions::locations. Events come one
// struct per family; a callback does nothing unless a sink overrides it, so each sink overrides
// only the families it reads.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void enter(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*region*/) {}
  virtual void leave(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*region*/) {}
  virtual void peruse(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*region*/,
                      const PeruseFields& /*f*/) {}
  virtual void point_to_point(std::uint32_t /*loc*/, std::uint64_t /*t*/,
                              const PointToPoint& /*e*/) {}
  virtual void metric(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*metric*/,
                      std::int64_t /*value*/) {}
  // A metric whose value is a double (MPI_T timers, some Open MPI counters). Sinks that show
  // whole numbers keep this default: the value rounded (see rounded_metric).
  virtual void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value) {
    this->metric(loc, t, metric, rounded_metric(value));
  }
  // A sample of the thread's state and call stack (MPITRACE_SAMPLING); only the profile needs
  // them.
  virtual void sample(std::uint32_t /*loc*/, std::uint64_t /*t*/, const Sample& /*s*/) {}
  virtual void rma(std::uint32_t /*loc*/, std::uint64_t /*t*/, const RmaEvent& /*e*/) {}
  // MPI-IO: `handle` indexes Definitions::io_handles, `file` Definitions::files. Operations
  // begin and complete in the same MPI call, or complete in another (nonblocking ones in a Wait
  // or Test, split collectives in their *_end) with the same matching id.
  virtual void io_handle_created(std::uint32_t /*loc*/, std::uint64_t /*t*/,
                                 std::uint32_t /*handle*/, std::uint64_t /*size_at_open*/) {}
  virtual void io_handle_destroyed(std::uint32_t /*loc*/, std::uint64_t /*t*/,
                                   std::uint32_t /*handle*/) {}
  virtual void io_begin(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*handle*/,
                        const IoBegin& /*op*/) {}
  virtual void io_complete(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*handle*/,
                           const IoComplete& /*done*/) {}
  virtual void io_seek(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*handle*/,
                       const IoSeek& /*seek*/) {}
  // At the resizing call's Leave, just before the leave() callback.
  virtual void io_resize(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*handle*/,
                         const IoResize& /*resize*/) {}
  // Right before the leave() of a region that holds several calls folded into one (PollFold);
  // a sink that counts calls or time inside MPI takes them from here.
  virtual void polls_folded(std::uint32_t /*loc*/, std::uint64_t /*t*/, const PollFold& /*fold*/) {}
  virtual void io_delete(std::uint32_t /*loc*/, std::uint64_t /*t*/, std::uint32_t /*file*/) {}
  // Collectives (blocking ones between the Enter and the Leave of their call) and the requests
  // of nonblocking ones, made in the starting call.
  virtual void collective(std::uint32_t /*loc*/, std::uint64_t /*t*/, const Collective& /*c*/) {}
  virtual void collective_request(std::uint32_t /*loc*/, std::uint64_t /*t*/,
                                  std::uint64_t /*request*/) {}
  // Called right after the point-to-point event, collective or io_complete it belongs to, on the
  // same location. Archives written before datatypes were recorded have none.
  virtual void datatype_use(std::uint32_t /*loc*/, std::uint64_t /*t*/,
                            const DatatypeBytes& /*d*/) {}

  // `value` to the nearest integer; one outside int64's range is clamped, NaN is 0.
  static std::int64_t rounded_metric(double value);
};

// For a sink that takes point-to-point events kind by kind: calls its send(loc, t, e),
// send_complete(loc, t, request), recv_request(loc, t, request), recv(loc, t, e) or
// request_cancelled(loc, t, request), whichever of them it has. They must be public: a
// private one is not seen, and its events would be dropped without a word.
template <typename Sink>
void split_point_to_point(Sink& sink, std::uint32_t loc, std::uint64_t t, const PointToPoint& e) {
  static_assert(
      requires { sink.send(loc, t, e); } || requires { sink.recv(loc, t, e); },
      "split_point_to_point: the sink has no public send() or recv()");
  switch (e.kind) {
    case P2pKind::Send:
      if constexpr (requires { sink.send(loc, t, e); }) sink.send(loc, t, e);
      break;
    case P2pKind::SendComplete:
      if constexpr (requires { sink.send_complete(loc, t, e.request); })
        sink.send_complete(loc, t, e.request);
      break;
    case P2pKind::RecvRequest:
      if constexpr (requires { sink.recv_request(loc, t, e.request); })
        sink.recv_request(loc, t, e.request);
      break;
    case P2pKind::Recv:
      if constexpr (requires { sink.recv(loc, t, e); }) sink.recv(loc, t, e);
      break;
    case P2pKind::Cancelled:
      if constexpr (requires { sink.request_cancelled(loc, t, e.request); })
        sink.request_cancelled(loc, t, e.request);
      break;
  }
}

// "" when this reader reads an archive whose PERUSETRACE::ARCHIVE_VERSION property is `version`
// ("" for archives written before there was one); else what is wrong and what to do.
std::string archive_version_problem(const std::string& version, const std::string& anchor,
                                    const std::string& creator);

class ArchiveReader {
 public:
  // Opens PATH (DIR/traces.otf2, or DIR holding it) and reads its definitions; throws
  // ArchiveError naming the problem and the fix.
  explicit ArchiveReader(const std::string& path);
  ~ArchiveReader();
  ArchiveReader(const ArchiveReader&) = delete;
  ArchiveReader& operator=(const ArchiveReader&) = delete;

  const Definitions& definitions() const { return defs_; }
  const std::string& anchor() const { return anchor_; }  // the .otf2 file

  // Streams every event in time order: of equal times, a location's before those of a location
  // with a larger OTF2 id (OTF2's global event reader's order). `progress(read, total)` is
  // called now and then. Several threads decode the archive at once (set_reading_threads); the
  // sink's callbacks come on the calling thread, in the same order whatever their number.
  void read_events(EventSink& sink,
                   const std::function<void(std::uint64_t, std::uint64_t)>& progress);

  // Makes read_events read only these locations (indices into Definitions::locations), in the
  // same order as it reads them among all: a share of the archive for one process of a parallel
  // analysis. Empty (the default): every location. Throws std::invalid_argument for an index
  // the archive has not.
  void set_locations(std::vector<std::uint32_t> only);

  // How many threads decode the events: 0 (the default) as many as the machine has cores, at
  // most 8 and one per location; 1 reads on the calling thread alone.
  void set_reading_threads(unsigned threads);
  unsigned reading_threads() const;  // how many the last read_events used

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  Definitions defs_;
  std::string anchor_;
};

}  // namespace perusetrace::archive
