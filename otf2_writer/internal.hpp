// Shared by the otf2_writer/*.cpp files; nothing outside otf2_writer/ includes this.
#pragma once

#include <otf2/otf2.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "otf2_writer/writer.hpp"
#include "record/archive_schema.hpp"
#include "record/datatype_text.hpp"
#include "record/peruse_fields.hpp"

namespace perusetrace::trace::detail {

struct Location {
  OTF2_EvtWriter* writer = nullptr;
  OTF2_AttributeList* attributes = nullptr;
  std::uint32_t thread_index = 0;
  std::uint64_t id = 0;
  std::uint64_t events = 0;
  bool closed = false;
  std::vector<std::uint32_t> annotations;  // open ones, innermost last (local pair ids)
  std::uint64_t last_time = 0;             // of the latest record
  Record fold{};  // a PollFold for the Leave that follows it (kind Enter: none)
  // The Peruse counters' values as this location last recorded them: a metric event gives all
  // three, and a record carries only the one its event changed.
  std::int64_t peruse_counters[static_cast<int>(Metric::Count)] = {};
};

// A nested annotation's local region ref: after the static regions (mapped to its global id by
// the location's region mapping table, write_local_definitions).
inline OTF2_RegionRef annotation_region(const ArchiveSpec& spec, std::uint32_t pair) {
  return static_cast<OTF2_RegionRef>(spec.regions.size() + pair);
}

// The archive's one I/O paradigm, MPI-IO (definitions.cpp, write_io).
inline constexpr OTF2_IoParadigmRef kIoParadigm = 0;

// A file handle's IoCreateHandle as the writer encoded it: when (on the global clock) and the
// file's size then. The files' initial sizes come from these (unified_of).
struct HandleOpen {
  bool seen = false;
  std::uint64_t time = 0;
  std::uint64_t size = kIoUnknownBytes;
};

struct State {
  ArchiveSpec spec;
  // Of the rank whose events are being written, by local handle id (events.cpp).
  std::vector<HandleOpen> handle_opens;
  OTF2_Archive* archive = nullptr;
  std::mutex mutex;  // guards `locations` (open/close), never taken per event
  std::vector<Location*> locations;
  std::atomic<bool> failed{false};
  bool quiet_failures = false;  // `perusetrace recover` reports the failure itself
  std::string first_failure;
};

State& state();
std::uint64_t location_id(int rank, int size, std::uint32_t thread_index);
void fail(const std::string& what);  // records the first failure and tells the user once
// What to do after a write into `directory` failed, for every archive write: a directory removed
// while the program ran (after the last drain looked for it) or while the archive is written
// fails with "does not exist", for which "free space" is the wrong advice.
std::string write_remedy(const std::string& directory);

// chunk_memory.cpp: OTF2's event chunks within spec.otf2_memory_bytes per location.
extern const OTF2_MemoryCallbacks kChunkMemory;

// streams.cpp: what the MPI archive and the offline one share.
OTF2_Archive* create_archive(const ArchiveSpec& spec, std::string& error);  // sets state().spec
Location* open_stream(int rank, std::uint32_t thread_index);

// events.cpp
void encode(Location& location, const Record* records, std::size_t count);
// Keeps what an IoCreateHandle of the rank being written says (State::handle_opens).
void note_handle_open(std::uint32_t handle, std::uint64_t time, std::uint64_t size);
// Leaves, at the location's last time, the annotations its thread left open (a program that
// ended without closing them, a run cut short): every Enter gets its Leave.
OTF2_ErrorCode end_annotations(Location& location);

// definitions.cpp: everything rank 0 writes into the global definitions.
struct RankReport : RankSummary {
  std::vector<std::uint64_t> location_events;  // per thread
  // The rank's file handles' openings (State::handle_opens); contribution_of folds them into
  // its handles, so they are not sent up the tree themselves.
  std::vector<HandleOpen> handle_opens;
};
RankReport report_of(const ProcessInfo& process);
struct UnifiedComm {
  std::string name;
  // Members as indices into group 0 (COMM_LOCATIONS): world ranks, and beyond the world size the
  // processes of other jobs (Unified::jobs).
  std::vector<int> world_ranks;
  bool inter = false;
  bool self = false;
  std::uint64_t parent = OTF2_UNDEFINED_COMM;  // global id of the communicator it was made from
};
// Another MPI job at the far end of intercommunicators (CommInfo::job): each of its processes
// that is a member of one is a location group of its own, with one location measured nowhere,
// so that the communicators' groups and the messages' peers name real locations. They follow
// this job's ranks in group 0, job after job.
struct UnifiedJob {
  std::string name, archive;
  JobRelation relation = JobRelation::None;
  std::vector<int> ranks;   // its world ranks that are members here, ascending
  std::uint32_t first = 0;  // the index in group 0 of ranks[0]; ranks[i] is first + i
};
struct UnifiedContext {  // a calling context, the same function, file and line and parent
  std::string function, file;
  std::uint32_t line = 0;
  std::uint64_t parent = OTF2_UNDEFINED_CALLING_CONTEXT;  // global id
};
struct UnifiedHandle {  // one MPI-IO file handle of one rank
  std::string name;
  std::uint64_t file;  // global IoFile id
  std::uint64_t comm;  // global Comm id
};
struct UnifiedFile {  // an MPI-IO file, by name
  std::string name;
  std::uint64_t initial_size = kIoUnknownBytes;  // at the run's first opening of it
};
// A communicator's identity, the same on every member rank without any communication: a hash
// of its parent's identity, its members and how many such children of that parent the rank
// created before it (rank_reports.cpp).
struct CommId {
  std::uint64_t a = 0, b = 0;  // {0, 0}: none
  bool operator==(const CommId& o) const { return a == o.a && b == o.b; }
  explicit operator bool() const { return a != 0 || b != 0; }
};
struct CommIdHash {
  std::size_t operator()(const CommId& id) const { return static_cast<std::size_t>(id.a); }
};
using CommIds = std::unordered_map<CommId, std::uint64_t, CommIdHash>;  // -> global id

struct UnifiedWindow {  // an RMA window of the whole run
  std::string name;
  std::uint64_t comm = OTF2_UNDEFINED_COMM;  // global id
};

struct Unified {
  std::vector<RankReport> ranks;  // rank 0 only, as are the next four
  std::vector<UnifiedComm> comms;
  std::vector<UnifiedWindow> windows;     // rank 0: global RmaWin id = index
  CommIds window_ids;                     // rank 0: identity -> global id
  std::vector<std::uint64_t> window_map;  // this rank: local -> global window id
  // The groups of RmaGroupSync events (world ranks); their global Group ids follow the
  // communicators' groups, from rma_group_base on (rank 0).
  std::vector<std::vector<int>> rma_groups;
  std::uint64_t rma_group_base = 0;
  std::vector<std::uint64_t> group_map;  // this rank: local RMA group -> global Group id
  std::vector<UnifiedFile> files;        // by global IoFile id
  std::unordered_map<std::string, std::uint64_t> file_ids;  // rank 0: name -> global IoFile id
  std::vector<UnifiedHandle> handles;
  CommIds comm_ids;
  std::vector<std::uint64_t> comm_map;    // this rank: local -> global communicator id
  std::vector<std::uint64_t> handle_map;  // this rank: local -> global I/O handle id
  std::vector<std::uint64_t> file_map;    // this rank: local file id -> global IoFile id
  std::vector<MetricInfo> metrics;        // rank 0: global metric id kFirstPvarMetric + i
  std::unordered_map<std::string, std::uint64_t> metric_ids;  // rank 0: name -> global id
  std::vector<std::uint64_t> metric_map;   // this rank: local -> global metric id
  std::vector<UnifiedContext> contexts;    // rank 0: global calling context id = index
  CommIds context_ids;                     // rank 0: path hash -> global id
  std::vector<std::uint64_t> context_map;  // this rank: local -> global calling context id
  // Nested annotations: region spec.regions.size() + i is annotations[i] (rank 0).
  std::vector<std::string> annotations;
  std::unordered_map<std::string, std::uint64_t> annotation_ids;  // rank 0: pair -> i
  std::vector<std::string> process_attributes;                    // rank 0
  std::vector<std::uint64_t> region_map;  // this rank: local -> global region id; empty: same
  std::vector<UnifiedJob> jobs;           // rank 0: the other jobs, in order of first appearance
  // Datatypes (datatype_text.hpp): global datatype i is global String i (rank 0).
  std::vector<DatatypeText> datatypes;
  CommIds datatype_ids;                     // rank 0: definition hash -> global id
  std::vector<std::uint64_t> datatype_map;  // this rank: local datatype id -> global String
};
// The location ids of the other jobs' processes follow every location of this job's: group 0
// index `size + i` (i counting across all jobs) is location other_job_location(ranks, size, i).
std::uint64_t other_job_location(const std::vector<RankReport>& ranks, int size, std::uint32_t i);
std::uint32_t other_job_processes(const Unified& unified);
// other_jobs.cpp: the other jobs' event streams (before the event files close) and local
// definitions (while the definition files are open), which OTF2 readers open for every location,
// and the property that names the jobs (archive_schema.hpp). A stream holds kOtherJobEvents
// events: OTF2 3.0.2's global event reader frees the reader of an empty location and then reads
// it again (otf2_global_evt_reader_new), which crashes otf2-print and python3-otf2 at random.
inline constexpr std::uint64_t kOtherJobEvents = 1;
OTF2_ErrorCode write_other_job_streams(OTF2_Archive* archive, const Unified& unified, int size);
OTF2_ErrorCode write_other_job_definitions(OTF2_Archive* archive, const Unified& unified, int size);
std::string jobs_text(const Unified& unified);
void write_local_definitions(OTF2_DefWriter* defs, const Unified& unified);
// Rank 0, before closing: the properties only the unified reports can tell.
OTF2_ErrorCode set_unified_properties(OTF2_Archive* archive, const Unified& unified);
void write_global_definitions(OTF2_GlobalDefWriter* writer, const ArchiveSpec& spec,
                              const Unified& unified);
// The archive's clock-domains property (archive_schema.hpp), from the ranks' reports.
std::string clock_domains_text(const std::vector<RankReport>& ranks);

// rank_reports.cpp: what ranks contribute to the unification. Contributions of neighbouring
// ranges of ranks merge into one, each communicator kept once, so they can be merged up a tree
// of ranks: no rank ever holds more than the definitions of the whole run.
struct CommEntry {
  CommId id, parent;
  std::string name;
  // The name was given with MPI_Comm_set_name, by world rank `namer`. Ranks may give one
  // communicator different names: its rank 0's wins, else the lowest rank's that named it.
  bool named = false;
  int namer = -1;
  // An intercommunicator: both groups, the lower one first; one to another job: this job's
  // group first. Members in another job (job_relation) as other_job_member(their rank there).
  std::vector<int> world_ranks;
  bool inter = false, self = false;
  JobRelation job_relation = JobRelation::None;
  std::string job, job_archive;
};
struct HandleEntry {
  std::string name;
  CommId comm;
  HandleOpen open;  // its IoCreateHandle, when the rank's events had it
};
// An RMA window as ranks contribute it: identified by its communicator's identity and how many
// windows the rank created on that communicator before it (members create them collectively).
struct WindowEntry {
  CommId id, comm;
  std::string name;
};
// A calling context as ranks contribute it: identified by a hash of its path (CommId's hash).
struct ContextEntry {
  CommId id, parent;  // parent {0, 0}: a root
  std::string function, file;
  std::uint32_t line = 0;
};
// A datatype as ranks contribute it: identified by a hash of its fields and of its inner types'
// identities, so ranks that built the same structure agree without communication.
struct DatatypeEntry {
  CommId id;
  DatatypeInfo info;          // local_id and types unused
  std::vector<CommId> types;  // the inner types
};
struct Contribution {
  int first_rank = 0;
  std::vector<ContextEntry> contexts;    // each path once, parents before children
  std::vector<RankReport> ranks;         // first_rank, first_rank + 1, ...
  std::vector<CommEntry> comms;          // in order of first appearance
  std::vector<HandleEntry> handles;      // in rank order, each rank's in opening order
  std::vector<std::string> file_names;   // files deletions named, each once
  std::vector<MetricInfo> metrics;       // MPI_T metrics, each name once, in order of appearance
  std::vector<std::string> annotations;  // "ATTRIBUTE=VALUE" pairs, each once
  std::vector<std::string> process_attributes;  // each once
  std::vector<WindowEntry> windows;             // each once, in order of first appearance
  std::vector<std::vector<int>> rma_groups;     // each member list once
  std::vector<DatatypeEntry> datatypes;         // each once, inner ones first
};
// One rank's part; `ids` gets the identity of each of its local communicator ids.
Contribution contribution_of(int rank, const RankReport& report, const ProcessInfo& process,
                             std::vector<CommId>& ids);
// The identity of each of a rank's local window ids, from its communicators' identities.
std::vector<CommId> window_ids_of(int rank, const ProcessInfo& process,
                                  const std::vector<CommId>& comm_ids);
// A rank's local ids as global ones: `keys` holds each local id's identity (communicators,
// calling contexts, datatypes and windows by CommId, where {0, 0} names nothing; RMA groups by
// members; files by name), `global` the global id of each identity, `none` stands for one it
// does not have. Global datatype i is String i.
template <class Key, class Global>
std::vector<std::uint64_t> global_ids_of(const std::vector<Key>& keys, const Global& global,
                                         std::uint64_t none) {
  std::vector<std::uint64_t> map(keys.size(), none);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if constexpr (std::is_same_v<Key, CommId>)
      if (!keys[i]) continue;
    const auto it = global.find(keys[i]);
    if (it != global.end()) map[i] = it->second;
  }
  return map;
}
// How many Group definitions the communicators take in `layout` (write_comms), so that the
// RMA groups can follow them.
std::uint64_t comm_group_count(int size, const std::vector<UnifiedComm>& comms, CommLayout layout);
// `next` holds the ranks right after those of `into`.
void merge(Contribution& into, Contribution&& next);
std::vector<char> serialize(const Contribution& c);
Contribution deserialize(const char* data, std::size_t length);
// The whole run's contribution as global definitions: ids in order of first appearance.
Unified unified_of(Contribution&& all, int size, CommLayout layout);
// Rank 0: the global Group id of each RMA group, by members.
std::map<std::vector<int>, std::uint64_t> rma_group_ids(const Unified& u);
// A rank's local metric ids as global ones: the Peruse counters keep theirs, MPI_T's go by name.
std::vector<std::uint64_t> metric_map_of(const std::vector<MetricInfo>& metrics,
                                         const std::unordered_map<std::string, std::uint64_t>& ids);
// A rank's local region refs as global ones: the static regions keep theirs, its annotations
// (ProcessInfo::annotations) go by name; empty when it has none.
std::vector<std::uint64_t> region_map_of(const ArchiveSpec& spec,
                                         const std::vector<std::string>& annotations,
                                         const std::unordered_map<std::string, std::uint64_t>& ids);
// A rank's calling contexts' identities, by local id (the path's hash).
std::vector<CommId> context_ids_of(const std::vector<ContextInfo>& contexts);
// A rank's datatypes' identities, by local id (index 0, no datatype, is none).
std::vector<CommId> datatype_ids_of(const std::vector<DatatypeInfo>& datatypes);
// A rank's local file handle ids as global ones, its first handle being global id `base`.
std::vector<std::uint64_t> handle_map_of(const std::vector<FileInfo>& files, std::uint64_t base);

// unification.cpp: collective over MPI_COMM_WORLD.
Unified unify(const ProcessInfo& process, const RankReport& mine);

}  // namespace perusetrace::trace::detail
