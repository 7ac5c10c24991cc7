// The global definitions rank 0 writes at the end: clock, system tree (machine -> host ->
// rank -> thread), regions, attributes, metrics, and the unified communicators. Ids of every
// kind are written in increasing order, as otf2-print expects.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <tuple>

#include "events/catalogue.hpp"
#include "otf2_writer/internal.hpp"
#include "record/archive_schema.hpp"

namespace perusetrace::trace::detail {

namespace {

class Strings {
 public:
  explicit Strings(OTF2_GlobalDefWriter* w) : w_(w) {}
  OTF2_StringRef operator()(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<OTF2_StringRef>(ids_.size()));
    if (fresh) OTF2_GlobalDefWriter_WriteString(w_, it->second, s.c_str());
    return it->second;
  }

 private:
  OTF2_GlobalDefWriter* w_;
  std::map<std::string, OTF2_StringRef> ids_;
};

OTF2_RegionRole otf2_role(RegionRole role) {
  switch (role) {
    case RegionRole::Function:
      return OTF2_REGION_ROLE_FUNCTION;
    case RegionRole::PointToPoint:
      return OTF2_REGION_ROLE_POINT2POINT;
    case RegionRole::Barrier:
      return OTF2_REGION_ROLE_BARRIER;
    case RegionRole::CollOneToAll:
      return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case RegionRole::CollAllToOne:
      return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case RegionRole::CollAllToAll:
      return OTF2_REGION_ROLE_COLL_ALL2ALL;
    case RegionRole::CollOther:
      return OTF2_REGION_ROLE_COLL_OTHER;
    case RegionRole::FileIo:
      return OTF2_REGION_ROLE_FILE_IO;
    case RegionRole::FileIoMetadata:
      return OTF2_REGION_ROLE_FILE_IO_METADATA;
    case RegionRole::Rma:
      return OTF2_REGION_ROLE_RMA;
    case RegionRole::Artificial:
      return OTF2_REGION_ROLE_ARTIFICIAL;
  }
  return OTF2_REGION_ROLE_UNKNOWN;
}

OTF2_Paradigm otf2_paradigm(Paradigm p) {
  switch (p) {
    case Paradigm::Mpi:
      return OTF2_PARADIGM_MPI;
    case Paradigm::Peruse:
      return OTF2_PARADIGM_MPI;  // Peruse is MPI seen from inside
    case Paradigm::Measurement:
      return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
  }
  return OTF2_PARADIGM_UNKNOWN;
}

// The reports' times are on the global clock already: the trace spans exactly the events.
void write_clock(OTF2_GlobalDefWriter* w, const std::vector<RankReport>& ranks) {
  std::uint64_t start = UINT64_MAX, end = 0, realtime = 0;
  for (const RankReport& r : ranks) {
    if (r.start_time < start) start = r.start_time, realtime = r.realtime_start;
    end = std::max(end, r.end_time);
  }
  if (start == UINT64_MAX) start = 0;
  OTF2_GlobalDefWriter_WriteClockProperties(w, 1'000'000'000u, start, end - start, realtime);
}

void write_system_tree(OTF2_GlobalDefWriter* w, Strings& str, int size,
                       const std::vector<RankReport>& ranks, const std::vector<UnifiedJob>& jobs) {
  OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, str("perusetrace run"), str("machine"),
                                           OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  std::map<std::string, OTF2_SystemTreeNodeRef> hosts;
  for (const RankReport& r : ranks) {
    auto [it, fresh] =
        hosts.try_emplace(r.host, static_cast<OTF2_SystemTreeNodeRef>(hosts.size() + 1));
    if (fresh) OTF2_GlobalDefWriter_WriteSystemTreeNode(w, it->second, str(r.host), str("node"), 0);
  }
  // Each other job is a node of its own: where its processes run is in its own archive.
  auto job_node = static_cast<OTF2_SystemTreeNodeRef>(hosts.size() + 1);
  for (const UnifiedJob& job : jobs)
    OTF2_GlobalDefWriter_WriteSystemTreeNode(w, job_node++, str(job.name), str(kOtherJobNodeClass),
                                             0);
  for (int rank = 0; rank < size; ++rank) {
    OTF2_GlobalDefWriter_WriteLocationGroup(
        w, static_cast<OTF2_LocationGroupRef>(rank), str("MPI Rank " + std::to_string(rank)),
        OTF2_LOCATION_GROUP_TYPE_PROCESS, hosts[ranks[rank].host], OTF2_UNDEFINED_LOCATION_GROUP);
  }
  job_node = static_cast<OTF2_SystemTreeNodeRef>(hosts.size() + 1);
  for (const UnifiedJob& job : jobs) {
    for (std::size_t i = 0; i < job.ranks.size(); ++i)
      OTF2_GlobalDefWriter_WriteLocationGroup(
          w, static_cast<OTF2_LocationGroupRef>(job.first + i),
          str(job.name + " MPI Rank " + std::to_string(job.ranks[i])),
          OTF2_LOCATION_GROUP_TYPE_PROCESS, job_node, OTF2_UNDEFINED_LOCATION_GROUP);
    ++job_node;
  }
  // Location ids grow with the thread index first, then the rank: write them in that order.
  std::size_t max_threads = 0;
  for (const RankReport& r : ranks) max_threads = std::max(max_threads, r.location_events.size());
  for (std::size_t t = 0; t < max_threads; ++t) {
    for (int rank = 0; rank < size; ++rank) {
      if (t >= ranks[rank].location_events.size()) continue;
      const std::string name = t == 0 ? "Master thread" : "Thread " + std::to_string(t);
      OTF2_GlobalDefWriter_WriteLocation(w, location_id(rank, size, static_cast<std::uint32_t>(t)),
                                         str(name), OTF2_LOCATION_TYPE_CPU_THREAD,
                                         ranks[rank].location_events[t],
                                         static_cast<OTF2_LocationGroupRef>(rank));
    }
  }
  for (const UnifiedJob& job : jobs)
    for (std::uint32_t i = 0; i < job.ranks.size(); ++i)
      OTF2_GlobalDefWriter_WriteLocation(
          w, other_job_location(ranks, size, job.first - static_cast<std::uint32_t>(size) + i),
          str("Master thread"), OTF2_LOCATION_TYPE_CPU_THREAD, kOtherJobEvents,
          static_cast<OTF2_LocationGroupRef>(job.first + i));
}

void write_regions(OTF2_GlobalDefWriter* w, Strings& str, const ArchiveSpec& spec) {
  for (std::size_t i = 0; i < spec.regions.size(); ++i) {
    const RegionInfo& r = spec.regions[i];
    std::string description = "MPI function";
    if (r.paradigm == Paradigm::Peruse) {
      const auto event = static_cast<PeruseEvent>(i - spec.peruse_region_base);
      description = "Peruse: " + std::string(info(event).description);
    } else if (r.paradigm == Paradigm::Measurement) {
      description = "perusetrace writing its buffer to the trace";
    }
    const OTF2_StringRef name = str(r.name);
    OTF2_GlobalDefWriter_WriteRegion(w, static_cast<OTF2_RegionRef>(i), name, name,
                                     str(description), otf2_role(r.role), otf2_paradigm(r.paradigm),
                                     OTF2_REGION_FLAG_NONE, str(""), 0, 0);
  }
}

// The nested annotations' "ATTRIBUTE=VALUE" pairs, right after the static regions.
void write_annotations(OTF2_GlobalDefWriter* w, Strings& str, const ArchiveSpec& spec,
                       const std::vector<std::string>& annotations,
                       const std::vector<std::string>& process_attributes) {
  if (annotations.empty()) return;
  OTF2_GlobalDefWriter_WriteParadigm(w, OTF2_PARADIGM_USER, str("user"),
                                     OTF2_PARADIGM_CLASS_PROCESS);
  for (std::size_t i = 0; i < annotations.size(); ++i) {
    const OTF2_StringRef name = str(annotations[i]);
    const std::string attribute =
        annotations[i].substr(0, annotations[i].find(kAnnotationSeparator));
    const bool process = std::find(process_attributes.begin(), process_attributes.end(),
                                   attribute) != process_attributes.end();
    OTF2_GlobalDefWriter_WriteRegion(
        w, static_cast<OTF2_RegionRef>(spec.regions.size() + i), name, name,
        str(process ? kProcessAnnotationDescription : kAnnotationDescription),
        OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, str(""), 0, 0);
  }
}

void write_attributes_and_metrics(OTF2_GlobalDefWriter* w, Strings& str,
                                  const std::vector<MetricInfo>& pvars) {
  struct Attr {
    const char* description;
    OTF2_Type type;
  };
  // By attribute id; the names are the schema's, which the tools look for.
  static constexpr Attr kAttrs[kAttrCount] = {
      {"stable request id (shared with MpiIsend/MpiIrecv)", OTF2_TYPE_UINT64},
      {"peer as a world rank, -1 for MPI_ANY_SOURCE", OTF2_TYPE_INT32},
      {"message tag (negative inside collectives)", OTF2_TYPE_INT32},
      {"request bytes; fragment bytes for REQ_XFER_CONTINUE", OTF2_TYPE_UINT64},
      {"0 send, 1 receive", OTF2_TYPE_UINT8},
      {"communicator", OTF2_TYPE_COMM},
      {"MPI state of a sample: 0 not in MPI, 1 MPI work, 2 MPI stall", OTF2_TYPE_UINT8},
      {"what the sampled thread in MPI does or waits for: 0 none, 1 message, 2 transfer, "
       "3 collective, 4 I/O",
       OTF2_TYPE_UINT8},
      {"the MPI function a sample was taken in", OTF2_TYPE_REGION},
      {"sampling periods a sample stands for (1 when absent): the timer expired while its "
       "thread was not running",
       OTF2_TYPE_UINT32},
      {"the file's size in bytes when this handle opened it", OTF2_TYPE_UINT64},
      {"the file handle whose size the call set or preallocated", OTF2_TYPE_IO_HANDLE},
      {"the size in bytes the call set or preallocated", OTF2_TYPE_UINT64},
      {"MPI datatype of the buffer (its definition: MPI_Datatype ID combiner=... name=...)",
       OTF2_TYPE_STRING},
      {"MPI datatype of a collective's send buffer", OTF2_TYPE_STRING},
      {"MPI datatype of a collective's receive buffer", OTF2_TYPE_STRING},
      {"calls of the region this Leave ends: unsuccessful tests or probes in a row, folded into "
       "one (the last may have found something); 1 when absent",
       OTF2_TYPE_UINT64},
      {"the time in ns those calls spent inside MPI (the rest of the span is the program's)",
       OTF2_TYPE_UINT64},
  };
  for (std::uint32_t i = 0; i < kAttrCount; ++i)
    OTF2_GlobalDefWriter_WriteAttribute(w, i, str(kAttributeNames[i]), str(kAttrs[i].description),
                                        kAttrs[i].type);
  struct Counter {
    const char* name;
    const char* description;
    const char* unit;
  };
  static constexpr Counter kCounters[static_cast<int>(Metric::Count)] = {
      {"posted queue depth", "receives waiting in the posted-receive queue (Peruse)", "requests"},
      {"unexpected queue depth", "messages waiting in the unexpected queue (Peruse)", "messages"},
      {"bytes in flight", "bytes of requests between XFER_BEGIN and XFER_END (Peruse)", "bytes"},
  };
  for (std::uint32_t i = 0; i < static_cast<std::uint32_t>(Metric::Count); ++i) {
    OTF2_GlobalDefWriter_WriteMetricMember(
        w, i, str(kCounters[i].name), str(kCounters[i].description), OTF2_METRIC_TYPE_OTHER,
        OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, str(kCounters[i].unit));
  }
  // MPI_T's values, ids after the Peruse counters (archive_schema.hpp).
  for (std::size_t i = 0; i < pvars.size(); ++i) {
    const MetricInfo& m = pvars[i];
    OTF2_GlobalDefWriter_WriteMetricMember(
        w, static_cast<OTF2_MetricMemberRef>(kFirstPvarMetric + i), str(m.name), str(m.description),
        m.annotation ? OTF2_METRIC_TYPE_USER : OTF2_METRIC_TYPE_OTHER,
        m.delta ? OTF2_METRIC_RELATIVE_LAST : OTF2_METRIC_ABSOLUTE_POINT,
        m.real ? OTF2_TYPE_DOUBLE : OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, str(m.unit));
  }
  const OTF2_MetricMemberRef counters[] = {0, 1, 2};
  static_assert(std::size(counters) == kFirstPvarMetric);
  OTF2_GlobalDefWriter_WriteMetricClass(w, kPeruseCounterClass, kFirstPvarMetric, counters,
                                        OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT);
  for (std::size_t i = 0; i < pvars.size(); ++i) {
    const auto member = static_cast<OTF2_MetricMemberRef>(kFirstPvarMetric + i);
    OTF2_GlobalDefWriter_WriteMetricClass(w, static_cast<OTF2_MetricRef>(metric_class_of(member)),
                                          1, &member, OTF2_METRIC_SYNCHRONOUS,
                                          OTF2_RECORDER_KIND_ABSTRACT);
  }
}

// The OTF2 standard's layout, which Score-P writes too: group 0 (COMM_LOCATIONS) says which
// location stands for each world rank, and each Comm's group (COMM_GROUP) lists its members as
// indices into group 0, i.e. world ranks.
void write_otf2_comms(OTF2_GlobalDefWriter* w, Strings& str, const std::vector<std::uint64_t>& all,
                      const std::vector<UnifiedComm>& comms) {
  OTF2_GlobalDefWriter_WriteGroup(w, 0, str("MPI ranks"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                  OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                  static_cast<std::uint32_t>(all.size()), all.data());
  for (std::size_t i = 0; i < comms.size(); ++i) {
    const UnifiedComm& c = comms[i];
    std::vector<std::uint64_t> m(c.world_ranks.begin(), c.world_ranks.end());
    OTF2_GlobalDefWriter_WriteGroup(w, static_cast<OTF2_GroupRef>(i + 1), str(c.name),
                                    c.self ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    c.self ? 0 : static_cast<std::uint32_t>(m.size()), m.data());
  }
  for (std::size_t i = 0; i < comms.size(); ++i) {
    OTF2_GlobalDefWriter_WriteComm(w, static_cast<OTF2_CommRef>(i), str(comms[i].name),
                                   static_cast<OTF2_GroupRef>(i + 1),
                                   static_cast<OTF2_CommRef>(comms[i].parent), OTF2_COMM_FLAG_NONE);
  }
}

// ViTE 1.2 keeps only COMM_LOCATIONS groups and takes the group a Comm names for one: a rank of
// the communicator is the index of its location in that group. So each Comm names a
// COMM_LOCATIONS group of its members' locations in rank order (group 0, every rank, serves
// MPI_COMM_WORLD and its copies; a member list is written once). The standard allows neither a
// Comm over such a group nor a second one per paradigm: otf2-print warns and cannot name a
// message's peer, while python3-otf2 and perusetrace's tools read it like the standard layout.
struct ViteGroups {
  std::map<std::vector<int>, OTF2_GroupRef> group_of;  // member list -> group
  std::vector<OTF2_GroupRef> comm_group;               // by communicator
  OTF2_GroupRef self_group = OTF2_UNDEFINED_GROUP;
  OTF2_GroupRef count = 1;
};

ViteGroups vite_groups(int size, const std::vector<UnifiedComm>& comms) {
  ViteGroups g;
  std::vector<int> world(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) world[r] = r;
  g.group_of.emplace(world, 0);
  g.comm_group.resize(comms.size());
  for (std::size_t i = 0; i < comms.size(); ++i) {
    if (comms[i].self) {
      if (g.self_group == OTF2_UNDEFINED_GROUP) g.self_group = g.count++;
      g.comm_group[i] = g.self_group;
    } else {
      g.comm_group[i] = g.group_of.try_emplace(comms[i].world_ranks, g.count).first->second;
      if (g.comm_group[i] == g.count) ++g.count;
    }
  }
  return g;
}

void write_vite_comms(OTF2_GlobalDefWriter* w, Strings& str, int size,
                      const std::vector<std::uint64_t>& all,
                      const std::vector<UnifiedComm>& comms) {
  const ViteGroups g = vite_groups(size, comms);
  const std::vector<OTF2_GroupRef>& comm_group = g.comm_group;
  // By id, not by member list: otf2-print expects increasing ids.
  std::vector<std::pair<OTF2_GroupRef, const std::vector<int>*>> groups;
  for (const auto& [ranks, ref] : g.group_of) groups.emplace_back(ref, &ranks);
  if (g.self_group != OTF2_UNDEFINED_GROUP) groups.emplace_back(g.self_group, nullptr);
  std::sort(groups.begin(), groups.end());
  for (const auto& [ref, ranks] : groups) {
    if (ranks == nullptr) {
      OTF2_GlobalDefWriter_WriteGroup(w, ref, str("MPI_COMM_SELF"), OTF2_GROUP_TYPE_COMM_SELF,
                                      OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, nullptr);
      continue;
    }
    std::vector<std::uint64_t> members;
    members.reserve(ranks->size());
    for (int r : *ranks) members.push_back(all[static_cast<std::size_t>(r)]);
    const std::string name = ref == 0 ? "MPI ranks" : "MPI ranks " + std::to_string(ref);
    OTF2_GlobalDefWriter_WriteGroup(w, ref, str(name), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                    OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    static_cast<std::uint32_t>(members.size()), members.data());
  }
  for (std::size_t i = 0; i < comms.size(); ++i) {
    OTF2_GlobalDefWriter_WriteComm(w, static_cast<OTF2_CommRef>(i), str(comms[i].name),
                                   comm_group[i], static_cast<OTF2_CommRef>(comms[i].parent),
                                   OTF2_COMM_FLAG_NONE);
  }
}

// The samples' calling contexts: a region per function (an MPI function's own region where the
// sample was taken inside MPI), a source location per file and line, and the sampler.
void write_contexts(OTF2_GlobalDefWriter* w, Strings& str, const ArchiveSpec& spec,
                    const Unified& u) {
  if (u.contexts.empty()) return;
  std::map<std::string, OTF2_RegionRef> regions;
  for (std::size_t r = 0; r < spec.regions.size(); ++r)
    if (spec.regions[r].paradigm == Paradigm::Mpi)
      regions.emplace(spec.regions[r].name, static_cast<OTF2_RegionRef>(r));
  auto next_region = static_cast<OTF2_RegionRef>(spec.regions.size() + u.annotations.size());
  std::map<std::pair<std::string, std::uint32_t>, OTF2_SourceCodeLocationRef> places;
  for (std::size_t i = 0; i < u.contexts.size(); ++i) {
    const UnifiedContext& c = u.contexts[i];
    auto [region, fresh] = regions.try_emplace(c.function, next_region);
    if (fresh) {
      ++next_region;
      const OTF2_StringRef name = str(c.function);
      OTF2_GlobalDefWriter_WriteRegion(w, region->second, name, name, str("sampled function"),
                                       OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
                                       OTF2_REGION_FLAG_NONE, str(c.file), 0, 0);
    }
    OTF2_SourceCodeLocationRef place = OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
    if (!c.file.empty()) {
      auto [it, new_place] = places.try_emplace(
          {c.file, c.line}, static_cast<OTF2_SourceCodeLocationRef>(places.size()));
      if (new_place)
        OTF2_GlobalDefWriter_WriteSourceCodeLocation(w, it->second, str(c.file), c.line);
      place = it->second;
    }
    OTF2_GlobalDefWriter_WriteCallingContext(w, static_cast<OTF2_CallingContextRef>(i),
                                             region->second, place,
                                             static_cast<OTF2_CallingContextRef>(c.parent));
  }
  OTF2_GlobalDefWriter_WriteInterruptGenerator(
      w, 0,
      str(spec.sampling_wall_clock
              ? "perusetrace sampler (a CLOCK_MONOTONIC timer per thread)"
              : "perusetrace sampler (a CPU-time timer per thread, blocked time from timestamps)"),
      OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL, -9, spec.sampling_period_ns);
}

// Python's OTF2 reader (Debian's python3-otf2 3.0.2) stops at an InterComm definition (it asks
// for the single group of a Comm as well), so in both layouts an intercommunicator is a Comm
// over both groups: the lower group first, or, to another job, this job's group first.
void write_comms(OTF2_GlobalDefWriter* w, Strings& str, int size, const Unified& u,
                 CommLayout layout) {
  // Group 0's members: every rank's first location, then the other jobs' processes.
  std::vector<std::uint64_t> all(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) all[r] = location_id(r, size, 0);
  for (std::uint32_t i = 0, n = other_job_processes(u); i < n; ++i)
    all.push_back(other_job_location(u.ranks, size, i));
  if (layout == CommLayout::Vite)
    write_vite_comms(w, str, size, all, u.comms);
  else
    write_otf2_comms(w, str, all, u.comms);
}

// MPI-IO: one paradigm, a regular file per name (scope: the whole machine, as a parallel file
// system is) with its size at the run's first opening of it, and every rank's handles, named
// after their file.
void write_io(OTF2_GlobalDefWriter* w, Strings& str, const Unified& u) {
  if (u.files.empty()) return;
  OTF2_GlobalDefWriter_WriteIoParadigm(w, kIoParadigm, str("MPI-IO"), str("MPI I/O"),
                                       OTF2_IO_PARADIGM_CLASS_PARALLEL, OTF2_IO_PARADIGM_FLAG_NONE,
                                       0, nullptr, nullptr, nullptr);
  for (std::size_t i = 0; i < u.files.size(); ++i) {
    const auto file = static_cast<OTF2_IoFileRef>(i);
    OTF2_GlobalDefWriter_WriteIoRegularFile(w, file, str(u.files[i].name), 0);
    if (u.files[i].initial_size == kIoUnknownBytes) continue;
    OTF2_AttributeValue size;
    size.uint64 = u.files[i].initial_size;
    OTF2_GlobalDefWriter_WriteIoFileProperty(w, file, str(kIoInitialSizeProperty), OTF2_TYPE_UINT64,
                                             size);
  }
  for (std::size_t i = 0; i < u.handles.size(); ++i) {
    const UnifiedHandle& h = u.handles[i];
    OTF2_GlobalDefWriter_WriteIoHandle(w, static_cast<OTF2_IoHandleRef>(i), str(h.name), h.file, 0,
                                       OTF2_IO_HANDLE_FLAG_NONE, h.comm, OTF2_UNDEFINED_IO_HANDLE);
  }
}

// One-sided communication: the groups of MPI_Win_post/start (members as world ranks, like a
// communicator's group) after the communicators' groups, and every window with its communicator.
void write_rma(OTF2_GlobalDefWriter* w, Strings& str, const Unified& u) {
  for (std::size_t i = 0; i < u.rma_groups.size(); ++i) {
    const std::vector<std::uint64_t> members(u.rma_groups[i].begin(), u.rma_groups[i].end());
    OTF2_GlobalDefWriter_WriteGroup(
        w, static_cast<OTF2_GroupRef>(u.rma_group_base + i), str("RMA group " + std::to_string(i)),
        OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
        static_cast<std::uint32_t>(members.size()), members.data());
  }
  for (std::size_t i = 0; i < u.windows.size(); ++i)
    OTF2_GlobalDefWriter_WriteRmaWin(w, static_cast<OTF2_RmaWinRef>(i), str(u.windows[i].name),
                                     static_cast<OTF2_CommRef>(u.windows[i].comm),
                                     OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS);
}

}  // namespace

std::uint64_t comm_group_count(int size, const std::vector<UnifiedComm>& comms, CommLayout layout) {
  if (layout == CommLayout::Vite) return vite_groups(size, comms).count;
  return comms.size() + 1;  // "MPI ranks", then one per communicator
}

std::string clock_domains_text(const std::vector<RankReport>& ranks) {
  // leader -> (host, ranks, the leader's offsets)
  std::map<int, std::tuple<std::string, int, std::vector<ClockOffset>>> domains;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto& [host, count, offsets] = domains[ranks[r].clock_leader];
    if (count++ == 0 || static_cast<int>(r) == ranks[r].clock_leader) {
      host = ranks[r].host;
      offsets = ranks[r].clock_offsets;
    }
  }
  std::string text;
  char item[160];
  for (const auto& [leader, domain] : domains) {
    const auto& [host, count, offsets] = domain;
    if (!text.empty()) text += ' ';  // one line: otf2-print shows a property's first line only
    text += "leader=" + std::to_string(leader) + ";host=" + host +
            ";ranks=" + std::to_string(count) + ";offsets=";
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      std::snprintf(item, sizeof item, "%s%lld:%.0f:%u", i ? "," : "",
                    static_cast<long long>(offsets[i].offset), offsets[i].error,
                    offsets[i].exchanges);
      text += item;
    }
  }
  return text;
}

void write_global_definitions(OTF2_GlobalDefWriter* w, const ArchiveSpec& spec, const Unified& u) {
  Strings str(w);
  // First, so that datatype i is String i, which every rank's mapping table already names.
  for (const DatatypeText& d : u.datatypes) str(datatype_text(d));
  write_clock(w, u.ranks);
  OTF2_GlobalDefWriter_WriteParadigm(w, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS);
  write_system_tree(w, str, spec.size, u.ranks, u.jobs);
  write_regions(w, str, spec);
  write_annotations(w, str, spec, u.annotations, u.process_attributes);
  write_attributes_and_metrics(w, str, u.metrics);
  write_comms(w, str, spec.size, u, spec.comm_layout);
  write_rma(w, str, u);
  write_contexts(w, str, spec, u);
  write_io(w, str, u);
}

}  // namespace perusetrace::trace::detail
