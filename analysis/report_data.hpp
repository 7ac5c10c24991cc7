// What `perusetrace report` finds in an archive: the analyses' results, independent of how they
// are printed (text_output, json_output, html_output).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/inside_mpi_data.hpp"
#include "analysis/size_classes.hpp"
#include "analysis/stats.hpp"
#include "analysis/wait_state_data.hpp"

namespace perusetrace::report {

// Time bins of the over-time series (bandwidth, queue depths).
inline constexpr int kTimeBins = 200;

// An analysis the selected Peruse events cannot feed, and the setting that would.
struct Missing {
  std::string analysis;             // "posted_queue", "messages", ...
  std::vector<std::string> events;  // the Peruse events it needs but the archive lacks
  std::string setting;              // MPITRACE_PERUSE_EVENTS=... that enables it
};

struct FunctionStat {
  std::uint64_t calls = 0;
  std::uint64_t ns = 0;  // inclusive time
};

struct QueueStat {
  // Searches (SEARCH_*_BEGIN .. END).
  std::uint64_t searches = 0;
  std::uint64_t search_ns = 0;
  std::uint64_t search_max_ns = 0;
  // Depth (insertions minus removals), integrated over time for the mean.
  std::int64_t depth = 0;
  std::int64_t max_depth = 0;
  long double depth_area = 0;  // depth x ns
  std::uint64_t last_change = 0;
  std::array<std::int64_t, kTimeBins> max_in_bin{};
};

struct RankStats {
  std::string name;
  std::uint64_t mpi_ns = 0;  // outermost MPI calls only
  std::map<std::string, FunctionStat> functions;
  std::uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
  QueueStat posted, unexpected;
  // Lost on this rank waiting: for the program's messages, for collectives' internal ones.
  std::uint64_t posted_queue_ns = 0, posted_queue_in_collectives_ns = 0,
                complete_before_wait_ns = 0;
  // Message time, not lost time: messages of this rank's receives in the unexpected queue.
  std::uint64_t unexpected_queue_ns = 0;
};

// One occurrence of a Peruse measure: `lost` is its duration (no process lost it: wait states
// are WaitCase), on `rank`, for the message sender -> receiver.
struct PatternCase {
  std::uint64_t lost = 0;
  std::uint64_t time = 0;  // when the waiting began, ns since the trace start
  std::int32_t sender = -1, receiver = -1;
  std::int32_t tag = 0;
  std::uint32_t rank = 0;   // where the time was lost
  std::uint64_t bytes = 0;  // the message's
};

struct PairTotal {
  std::uint64_t count = 0;
  std::uint64_t lost = 0;
};

struct Pattern {
  std::uint64_t count = 0;
  std::uint64_t total = 0;
  std::uint64_t bytes = 0;  // of the messages
  Distribution durations;   // of the cases
  Worst<PatternCase> worst{5};
  std::map<std::pair<std::int32_t, std::int32_t>, PairTotal> pairs;  // (sender, receiver)
  void add(const PatternCase& c) {
    ++count;
    total += c.lost;
    bytes += c.bytes;
    durations.add(static_cast<double>(c.lost));
    worst.add(c, static_cast<double>(c.lost));
    auto& p = pairs[{c.sender, c.receiver}];
    ++p.count;
    p.lost += c.lost;
  }
};

// Messages as Peruse sees them, one per request (a message has a send and a receive request).
struct MessageCase {
  std::uint32_t rank = 0;
  std::int32_t peer = -1;
  std::int32_t tag = 0;
  std::uint8_t operation = 0;  // 0 send, 1 receive
  std::uint64_t bytes = 0;
  std::uint64_t time = 0;  // logical start
  std::uint64_t logical = 0;
  std::uint64_t physical = 0;
  std::uint32_t fragments = 0;
};

struct MessageGroup {  // one operation (send / receive) and one protocol (eager / fragmented)
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  Distribution logical_ns, physical_ns, bandwidth, fragments;
};

// The receive requests of one size class: a message's receive sees its whole transfer.
struct SizeClassStat {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  Distribution bandwidth;  // bytes / physical ns of the receives with a physical duration
  // Their bytes and physical ns summed: the class's bandwidth as one figure, exact (the
  // distribution's median is only as fine as its quarter-octave bins).
  std::uint64_t transfer_bytes = 0, transfer_ns = 0;
  double transfer_bandwidth() const {
    return transfer_ns
               ? static_cast<double>(transfer_bytes) * 1e9 / static_cast<double>(transfer_ns)
               : 0.0;
  }
};

struct Messages {
  MessageGroup groups[2][2];  // [operation][fragmented]
  std::array<SizeClassStat, kSizeClassFrom.size()> size_classes{};
  Distribution fragment_interval_ns;
  std::uint64_t fragments = 0;
  std::uint64_t fragmented_ns = 0;  // physical time of the fragmented messages
  Worst<MessageCase> slowest{10};
  // Transfer bandwidth over time: bytes and physical ns of the transfers ending in each bin.
  std::array<double, kTimeBins> bin_bytes{};
  std::array<double, kTimeBins> bin_ns{};
};

struct CollectiveStat {
  std::uint64_t calls = 0;
  std::uint64_t sends = 0, send_bytes = 0;  // internal (negative tag) requests
  std::uint64_t receives = 0, receive_bytes = 0;
};

// Point-to-point traffic of one placement: sender and receiver on the same host (shared memory)
// or on different hosts (the network), which on a cluster are different transports.
struct PlacementStat {
  std::uint64_t messages = 0, bytes = 0;  // MPI send records, so inline eager sends count too
  Distribution bandwidth;                 // Peruse requests with a physical duration
  std::uint64_t posted_queue_count = 0, posted_queue_ns = 0;
};

struct HostRanks {
  std::string name;  // the system-tree node the ranks' location groups sit under
  std::vector<std::uint32_t> ranks;
};

struct Placement {
  std::vector<HostRanks> hosts;  // by the archive's node index
  PlacementStat intra, inter;
};

// No message may be received before it was sent: on a trace whose hosts' clocks were measured
// well, none is. Messages of one sender, receiver, communicator and tag match in order.
struct ClockCondition {
  std::uint64_t messages = 0;   // matched send/receive pairs
  std::uint64_t backwards = 0;  // received (the receive call's record) before the send began
  std::uint64_t worst_ns = 0;
  std::int32_t worst_sender = -1, worst_receiver = -1;
  // On a trace of several clocks, receives moved after their send (with their thread's later
  // events) before the analyses ran, and the largest move; 0 on one clock: nothing is moved.
  std::uint64_t repaired = 0, max_move_ns = 0;
};

// MPI_T (docs/mpit.md): one performance variable's value as the archive has it, a metric member
// "MPI_T NAME..." (record/archive_schema.hpp).
enum class PvarKind : std::uint8_t {
  Delta,      // the member holds changes: counters, timers
  Value,      // the member holds the value read
  Watermark,  // a value with its " moves" and " change" members (folded into this one)
};

struct PvarRank {
  std::uint64_t values = 0;           // metric events; 0: the value never changed on this rank
  double total = 0;                   // Delta: the sum of the changes
  double min = 0, max = 0, last = 0;  // Value, Watermark: over the values written
  double moves = 0, change = 0;       // Watermark: its " moves" and " change" members, last
};

// Where changes were written: inside the innermost MPI call open on the location, or outside
// any ("outside MPI").
struct PvarPlace {
  double change = 0;   // Delta: the sum of its changes; Watermark: of its rises
  double highest = 0;  // Watermark: the highest value written there
  std::uint64_t values = 0;
};

inline constexpr const char* kOutsideMpi = "outside MPI";

struct PvarStat {
  std::string name;  // without the "MPI_T " prefix
  std::string description, unit;
  PvarKind kind = PvarKind::Value;
  bool real = false;                        // double values
  std::vector<PvarRank> ranks;              // by world rank
  std::map<std::string, PvarPlace> places;  // by MPI function, or kOutsideMpi
  std::array<double, kTimeBins> bins{};     // Delta: changes per time bin, summed over ranks
  std::uint64_t values = 0;                 // metric events over all ranks
  double total() const {
    double t = 0;
    for (const PvarRank& r : ranks) t += r.total;
    return t;
  }
  // A counter that changed, a value or watermark that moved on some rank after its first read.
  bool varied() const {
    if (kind == PvarKind::Delta) return values > 0;
    for (const PvarRank& r : ranks)
      if (r.values > 0 && r.min != r.max) return true;
    return false;
  }
  double highest() const {  // over ranks that wrote a value
    double h = 0;
    bool any = false;
    for (const PvarRank& r : ranks)
      if (r.values > 0) h = any ? std::max(h, r.max) : r.max, any = true;
    return h;
  }
};

// A control variable of the run, from the archive's properties.
struct CvarItem {
  std::int32_t rank = 0;  // PERUSETRACE::MPI_T_CVARS_DIFFER: the rank whose value differs
  std::string name, value;
  std::string rank0_value;  // differing ones: rank 0's value ("" when rank 0 has none)
  bool set = false;         // MPITRACE_CVARS: whether the setting took
  std::string note;         // ... and, if not, why
};

struct Mpit {
  bool present = false;  // MPI_T values or MPITRACE_CVARS in the archive: the section is shown
  std::vector<PvarStat> pvars;  // in the archive's metric order
  std::size_t cvars = 0;        // rank 0's control variables recorded
  std::vector<CvarItem> differ, set;
};

// `--by ATTRIBUTE[,ATTRIBUTE]` (context_analysis.hpp): the analyses per context, a context being
// the values of the attributes in force on the thread (perusetrace/annotate.h).
struct ContextStat {
  std::vector<std::string> values;  // one per attribute asked for; "" where none was in force
  std::uint64_t mpi_ns = 0;         // outermost MPI calls only
  std::map<std::string, FunctionStat> functions;  // outermost calls, by function
  std::uint64_t sent = 0, sent_bytes = 0;         // MPI send records, as RankStats counts them
  std::uint64_t posted_queue_count = 0, posted_queue_ns = 0;  // on the receiver, at its posting
  std::uint64_t received = 0, received_bytes = 0;             // MPI receive records
  // Samples (MPITRACE_SAMPLING): thread time by the sampled MPI state (mpi_state.h's order: not
  // in MPI, MPI work, MPI stall), the samples' periods times the sampling period.
  std::array<std::uint64_t, 3> sampled_ns{};
};

struct ByContext {
  std::vector<std::string> attributes;  // as asked for; empty: no --by
  std::vector<std::string> found;       // the archive's attributes, "MODULE:NAME" or "NAME"
  std::vector<ContextStat> contexts;    // in order of first appearance
};

// One-sided communication (MPI RMA): what each origin moved to and from each target, per
// window, and the time ranks spent in each kind of synchronisation call.
struct RmaTraffic {
  std::uint64_t puts = 0, gets = 0, atomics = 0;
  std::uint64_t bytes_sent = 0;      // to the target (puts, accumulates)
  std::uint64_t bytes_received = 0;  // from the target (gets, fetched results)
  std::uint64_t operations() const { return puts + gets + atomics; }
};
enum RmaSyncKind : unsigned { kRmaFence, kRmaPscw, kRmaLock, kRmaFlush, kRmaSyncKinds };
inline constexpr const char* kRmaSyncNames[kRmaSyncKinds] = {"fence", "pscw", "lock", "flush"};
struct RmaSyncTime {
  std::uint64_t calls[kRmaSyncKinds] = {};
  std::uint64_t ns[kRmaSyncKinds] = {};
};
struct RmaWindowStat {
  std::string name, comm;
  RmaTraffic traffic;
};
struct Rma {
  bool present = false;  // the archive has RMA windows
  std::map<std::pair<std::uint32_t, std::uint32_t>, RmaTraffic> pairs;  // (origin, target)
  std::vector<RmaWindowStat> windows;                                   // by archive window id
  std::vector<RmaSyncTime> sync;                                        // by rank
  std::uint64_t never_completed = 0;  // operations without a local completion in the trace
};

// MPI-IO: what each rank did to each file (io_analysis.hpp). An operation's kind: collective
// or independent, blocking or not (nonblocking ones complete in a Wait or Test, split
// collectives in their *_end).
enum IoKind : unsigned {
  kIoIndependent,
  kIoCollective,
  kIoIndependentNonblocking,
  kIoCollectiveNonblocking,
  kIoKinds
};
inline constexpr const char* kIoKindNames[kIoKinds] = {
    "independent", "collective", "independent_nonblocking", "collective_nonblocking"};
inline constexpr std::uint64_t kIoUnknownSize = ~std::uint64_t{0};
struct IoTraffic {
  std::uint64_t operations = 0;
  std::uint64_t bytes = 0;  // transferred (as completed)
  std::uint64_t ns = 0;     // each operation's begin to its completion, summed
};
struct IoRankStat {  // one rank's use of one file
  bool used = false;
  std::uint64_t opens = 0, closes = 0;
  IoTraffic reads, writes;
  IoTraffic kinds[kIoKinds];                          // reads and writes by kind
  IoTraffic flushes;                                  // MPI_File_sync (no bytes of their own)
  std::uint64_t seeks = 0, resizes = 0, deletes = 0;  // MPI_File_seek, set_size/preallocate
  // The rank's time in the MPI calls that did this file's I/O: every outermost MPI call in
  // which one of its events happened (its MPI_File_* calls, the Waits completing its requests).
  std::uint64_t calls = 0, call_ns = 0;
  std::uint64_t unfinished = 0;  // operations begun whose completion the trace lacks
};
struct IoFileStat {
  std::string name;
  std::uint64_t initial_size = kIoUnknownSize;  // at the run's first opening of it
  std::vector<IoRankStat> ranks;                // by world rank
};
struct IoRankTotal {  // every MPI_File_* call of a rank (file_io and file_io_metadata roles)
  std::uint64_t calls = 0, ns = 0;
};
struct Io {
  bool present = false;            // the archive has MPI-IO files
  std::vector<IoFileStat> files;   // by archive file id
  std::vector<IoRankTotal> ranks;  // by world rank
};

// Another MPI job at the far end of intercommunicators (MPI_Comm_spawn's children, the job that
// spawned this one): a trace of its own. What this trace holds of the traffic with it.
struct JobStat {
  std::string name;      // "spawn-1", "parent", ...
  std::string relation;  // "spawned", "parent", "connected" (archive_schema.hpp)
  std::string archive;   // its archive, as a path from where the report ran; "" not known
  bool archive_found = false;
  std::uint32_t processes = 0;  // its processes that are members of communicators here
  // MPI point-to-point records of this job's ranks with them
  std::uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
};

// What went through one MPI datatype (archive Definitions::datatypes): the bytes of the program's
// messages, collectives and file operations that named it as their buffer's type.
struct DatatypeStat {
  std::uint32_t id = 0;  // the archive's datatype id
  std::string name;      // its MPI or user name, or its structure ("vector(4, 1, 8) of ...")
  std::string combiner;  // NAMED, VECTOR, ...
  std::int64_t size = 0, extent = 0, true_extent = 0;
  bool contiguous = false;  // size == extent == true extent: moved without packing
  std::uint64_t sends = 0, send_bytes = 0, receives = 0, receive_bytes = 0;  // point-to-point
  std::uint64_t collectives = 0, collective_bytes = 0;  // calls, bytes sent plus received
  std::uint64_t file_operations = 0, file_bytes = 0;    // completed MPI-IO operations
  std::uint64_t bytes() const { return send_bytes + receive_bytes + collective_bytes + file_bytes; }
};

struct Report {
  std::string archive, creator, settings;
  std::uint64_t events = 0;
  std::uint64_t trace_ns = 0;
  // The processes that computed the report (docs/parallel-analysis.md); 1 until the report runs
  // as a parallel analysis.
  unsigned analysis_ranks = 1;
  // Ranks whose recording stopped early (MPITRACE_MAX_SIZE) -> when (ns since the start); the
  // analyses read the events up to the earliest, `analysed_until_ns` (0: all of them).
  // trace_ns is then that time, what every share of the run is of, and archive_ns the archive's
  // whole span (other ranks recorded on).
  std::map<int, std::uint64_t> recording_cuts;
  std::uint64_t analysed_until_ns = 0;
  std::uint64_t archive_ns = 0;
  std::uint64_t bin_ns = 1;                       // width of a time bin
  std::vector<std::string> selected;              // Peruse events selected (settings)
  std::map<std::string, std::uint64_t> observed;  // Peruse events seen, by short name
  std::vector<Missing> missing;
  std::vector<RankStats> ranks;
  std::vector<std::uint64_t> matrix_count, matrix_bytes;  // [sender * ranks + receiver]
  std::vector<JobStat> jobs;                              // other MPI jobs, in the archive's order
  Messages messages;
  InsideMpi inside;
  WaitStates wait_states;
  // Peruse's measures of messages and requests, none of them time a process lost (that is
  // wait_states): a receive's time in the posted queue before its message arrived, for the
  // program's messages and for those of collectives (posted inside a collective call, or with
  // Open MPI's internal tags below MPI_ANY_TAG); a message's time in the unexpected queue before
  // its receive was posted (it was copied twice); a nonblocking request's time complete before
  // the Wait/Test that collected it.
  Pattern posted_queue, posted_queue_in_collectives, unexpected_queue, complete_before_wait;
  std::map<std::string, CollectiveStat> collectives;
  Placement placement;
  ClockCondition clock;
  std::uint64_t requests_in_flight_max = 0;  // the analysis' own state, for the record
  Mpit mpit;
  Rma rma;
  Io io;
  ByContext by_context;                 // --by
  std::vector<ByContext> by_attribute;  // without --by: each of the archive's attributes alone
  // Archives with datatype definitions only (written since they are recorded): those used, most
  // bytes first.
  bool has_datatypes = false;
  std::vector<DatatypeStat> datatypes;

  const Missing* missing_for(const std::string& analysis) const {
    for (const auto& m : missing)
      if (m.analysis == analysis) return &m;
    return nullptr;
  }
};

}  // namespace perusetrace::report
