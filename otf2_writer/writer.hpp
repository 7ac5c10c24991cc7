// The runtime's only view of OTF2. Only otf2_writer/*.cpp include <otf2/otf2.h>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "record/clock_offset.hpp"
#include "record/record.hpp"

namespace perusetrace::trace {

enum class RegionRole : std::uint8_t {
  Function,
  PointToPoint,
  Barrier,
  CollOneToAll,
  CollAllToOne,
  CollAllToAll,
  CollOther,
  FileIo,
  FileIoMetadata,
  Rma,
  Artificial,
};
enum class Paradigm : std::uint8_t { Mpi, Peruse, Measurement };

// OTF2's collective operations, in OTF2's order.
enum class CollectiveOp : std::uint8_t {
  Barrier,
  Bcast,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Alltoallw,
  Allreduce,
  Reduce,
  ReduceScatter,
  Scan,
  Exscan,
  ReduceScatterBlock,
  None = 0xff,
};

struct RegionInfo {
  std::string name;
  RegionRole role;
  Paradigm paradigm;
  CollectiveOp collective = CollectiveOp::None;  // what a CollectiveEnd in this region is
};

// How Comm definitions name their members (docs/otf2-mapping.md, Unification).
enum class CommLayout {
  Otf2,  // as the OTF2 standard says: COMM_GROUP groups of indices into one COMM_LOCATIONS group
  Vite,  // a COMM_LOCATIONS group per member list, the only groups ViTE 1.2 resolves ranks with
};

struct ArchiveSpec {
  std::string directory;  // the archive: DIRECTORY/traces.otf2
  int rank = 0;
  int size = 1;
  std::vector<RegionInfo> regions;       // the same list on every rank: region ids need no mapping
  std::uint16_t peruse_region_base = 0;  // region of PeruseEvent 0; the others follow
  std::size_t otf2_memory_bytes = 0;     // OTF2 chunk memory per location before it flushes
  std::string settings;                  // recorded in the archive's properties
  std::uint64_t sampling_period_ns = 0;  // the sampler's interrupt generator (0: no samples)
  bool sampling_wall_clock = false;      // its timers count wall time, not threads' CPU time
  CommLayout comm_layout = CommLayout::Otf2;
  // This rank has told the user already why its trace is incomplete (its journal could not be
  // written): a failure writing the archive, on the same full disk, is not said again.
  bool quiet_failures = false;
};

// A communicator as this rank saw it; unification gives it one global id across ranks.
inline constexpr std::uint32_t kNoParent = 0xffffffffu;

// How this job relates to the MPI job at the far end of an intercommunicator whose remote group
// is not in this job's MPI_COMM_WORLD (docs/otf2-mapping.md, "Dynamic processes").
enum class JobRelation : std::uint8_t {
  None,       // the remote group is in this job (or the communicator is no intercommunicator)
  Spawned,    // MPI_Comm_spawn(_multiple) of this job started it
  Parent,     // it spawned this job (MPI_Comm_get_parent)
  Connected,  // MPI_Comm_connect/accept/join, or a spawn whose children could not be told
};

struct CommInfo {
  std::uint32_t local_id;
  // The local id of the communicator it was made from (kNoParent: none, or not traced). Threads
  // may create communicators with the same members in different orders on different ranks;
  // creations from one parent are ordered the same everywhere (they are collective over it).
  std::uint32_t parent = kNoParent;
  std::string name;
  // The name was given with MPI_Comm_set_name (the latest one), not made up by the tracer or the
  // MPI; unification prefers it (docs/otf2-mapping.md, Unification).
  bool named = false;
  // Member i of the communicator is world rank world_ranks[i]; a member in another MPI job
  // (job_relation) is other_job_member(its rank there).
  std::vector<int> world_ranks;
  bool inter = false;  // for an intercommunicator: the remote group follows
  std::vector<int> remote_world_ranks;
  // Members in another MPI job (the remote group of an intercommunicator to it, or some of an
  // intracommunicator made from one): `job` names that job in this archive ("spawn-1": the
  // children of this job's first spawn, "parent": the job that spawned this one; "": unknown,
  // one job per communicator); `job_archive` is the path of its archive relative to this
  // archive's directory ("": not known). Their ranks there are the remote group's ranks where
  // the job could not be told them.
  JobRelation job_relation = JobRelation::None;
  std::string job, job_archive;
};
// A member in another job, by its world rank there: below -1, which is MPI_ANY_SOURCE. Peruse
// events name such a peer so too.
constexpr int other_job_member(int rank) {
  return -2 - rank;
}
constexpr int other_job_rank(int member) {
  return -2 - member;
}

// An MPI-IO file handle as this rank opened it.
struct FileInfo {
  std::uint32_t local_id;
  std::string name;
  std::uint32_t comm;  // local id of the communicator it was opened on
};

// An RMA window as this rank created it (MPI_Win_create, _allocate, _allocate_shared,
// _create_dynamic). Records name it by `local_id`; unification gives it one global id.
struct WindowInfo {
  std::uint32_t local_id;
  std::uint32_t comm;  // local id of the communicator it was created on
  std::string name;    // "win N (CREATOR)", or the name given with MPI_Win_set_name
};
// An MPI datatype a rank used in a traced call, unwrapped with MPI_Type_get_envelope and
// MPI_Type_get_contents (HDTrace's method) when it was first seen. Local ids count from 1
// (kNoDatatype: none) and name each distinct definition once: two handles of one structure share
// an id. Records carry them: aux of MpiSend, MpiRecv, MpiIsend, MpiIrecv and IoOperationBegin;
// request of CollectiveEnd and aux of NbCollectiveRequest hold the send type in the low and the
// receive type in the high 32 bits (record/record.hpp).
inline constexpr std::uint32_t kNoDatatype = 0;
struct DatatypeInfo {
  std::uint32_t local_id = kNoDatatype;
  std::string combiner;  // MPI_COMBINER_ without the prefix: NAMED, VECTOR, STRUCT, ...
  // A named type's MPI name (MPI_INT), or what MPI_Type_set_name gave a derived one; "" none.
  std::string name;
  // What MPI_Type_get_contents returned, inner types as local ids (each defined before).
  std::vector<std::int64_t> integers, addresses;
  std::vector<std::uint32_t> types;
  std::int64_t size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
};
inline std::uint64_t datatype_pair(std::uint32_t send, std::uint32_t receive) {
  return static_cast<std::uint64_t>(receive) << 32 | send;
}

// An MPI_T performance variable's value as a metric (archive_schema.hpp says how they are named).
// Records of kind PvarValue carry `local_id` in their `comm` field.
inline constexpr std::uint32_t kFirstPvarMetric = static_cast<std::uint32_t>(Metric::Count);
// Metric members are numbered as above; classes are not: class 0 holds the Peruse counters (each
// metric event gives all of them, as Score-P writes its counters: readers such as pipit take one
// class of synchronous metrics right before the event it goes with), every later member has a
// class of its own.
inline constexpr std::uint32_t kPeruseCounterClass = 0;
constexpr std::uint64_t metric_class_of(std::uint64_t member) {
  return member - kFirstPvarMetric + 1;
}
struct MetricInfo {
  std::uint32_t local_id = 0;  // kFirstPvarMetric and up, in order of creation
  std::string name, description, unit;
  bool delta = false;  // the change since the previous read (RELATIVE_LAST), else the value
  bool real = false;   // DOUBLE values, else INT64
  // An annotation's integer values (perusetrace/annotate.h, set), named after the attribute;
  // written as a metric of type USER, which is how the tools tell it from MPI_T's.
  bool annotation = false;
};

// A node of a rank's calling context tree (the samples' call paths, outermost first), symbolised.
inline constexpr std::uint32_t kNoContext = 0xffffffffu;
struct ContextInfo {
  std::uint32_t local_id = 0;  // the index in ProcessInfo::contexts; Sample records name it
  std::uint32_t parent = kNoContext;
  std::string function;  // an MPI function's name for the MPI call a sample was taken in
  std::string file;      // "" when unknown
  std::uint32_t line = 0;
};

// What the global definitions say of each rank beyond its events' ids: rank 0 has it of every
// rank (a RankReport each), the rank itself as part of its ProcessInfo.
struct RankSummary {
  std::string host;
  // On the run's global clock (global_clock.hpp), as the records the writer is given: the span
  // of this rank's records, from MPI_Init to MPI_Finalize.
  std::uint64_t start_time = 0, end_time = 0;
  std::uint64_t realtime_start = 0;        // CLOCK_REALTIME at start_time
  int clock_leader = 0;                    // world rank leading this rank's clock domain
  std::vector<ClockOffset> clock_offsets;  // measured at MPI_Init and MPI_Finalize
  // MPI_T control variables, "NAME=VALUE" lines (archive_schema.hpp): rank 0 gives them all,
  // every other rank those that differ from rank 0's; rank 0 also what MPITRACE_CVARS set.
  std::string cvars, cvars_set;
  // When recording stopped on this rank because its journal reached MPITRACE_MAX_SIZE (global
  // clock), or 0: the rank has no record after it.
  std::uint64_t cut_time = 0;
};

struct ProcessInfo : RankSummary {
  std::vector<CommInfo> comms;          // every communicator this rank created, in creation order
  std::vector<FileInfo> files;          // every file handle, in opening order
  std::vector<WindowInfo> windows;      // every RMA window, in creation order
  std::vector<DatatypeInfo> datatypes;  // every datatype definition, inner ones first
  // The groups of MPI_Win_post/start (RmaGroupSync records) by local id: their members as world
  // ranks, in group rank order.
  std::vector<std::vector<int>> rma_groups;
  // Files by local file id: those a deletion named (records IoDeleteFile), unified by name.
  std::vector<std::string> file_names;
  std::vector<MetricInfo> metrics;    // MPI_T PVAR values recorded, in local id order
  std::vector<ContextInfo> contexts;  // the samples' calling contexts, parents first
  // The nested annotations' "ATTRIBUTE=VALUE" pairs by local id (records AnnotationBegin/End):
  // regions of paradigm USER, unified by name (archive_schema.hpp).
  std::vector<std::string> annotations;
  // The attributes among them of process scope: their values hold for every thread of the rank.
  std::vector<std::string> process_attributes;
};

// The archive is written at MPI_Finalize, by every rank for its own threads, from the records
// the run left in its journal (lib/journal.hpp).
// Collective over MPI_COMM_WORLD (through PMPI). On failure, `error` says why and what to do.
bool open_archive(const ArchiveSpec& spec, std::string& error);
// One event stream per (rank, thread), opened, written and closed one after another by the
// thread writing the archive; nullptr when the writer has stopped.
void* open_location(std::uint32_t thread_index) noexcept;
void write(void* location, const Record* records, std::size_t count) noexcept;
void close_location(void* location) noexcept;
// Collective: unifies the definitions, writes them, and closes the archive.
bool close_archive(const ProcessInfo& process, std::string& error);
// The writer stopped (an I/O error, a full disk): later records are dropped, what was written
// stays on disk; the message naming the problem and the fix was printed when it happened.
bool failed() noexcept;

// Without MPI, for `perusetrace recover`: one process writes the archive of every rank from
// what the ranks left behind. `read(rank, thread, out, capacity)` fills `out` with that
// thread's next records and returns how many, 0 at the end.
struct OfflineRank {
  ProcessInfo process;
  std::uint32_t threads = 0;
};
using RecordSource =
    std::function<std::size_t(int rank, std::uint32_t thread, Record* out, std::size_t capacity)>;
bool write_archive_offline(const ArchiveSpec& spec, const std::vector<OfflineRank>& ranks,
                           const RecordSource& read, std::string& error);

}  // namespace perusetrace::trace
