// Reading perusetrace's OTF2 archives with the OTF2 C reader: global definitions, the local
// definitions for the communicator mapping tables, then one global event reader that hands the
// events of every location over in time order (as tests/trace_counts.cpp does).
#include "archive_reader.hpp"

#include <fmt/core.h>
#include <otf2/otf2.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace perusetrace::archive {

namespace {

constexpr const char* kPerusePrefix = "PERUSE_COMM_";
constexpr const char* kTracerRegion = "perusetrace flush";
constexpr std::uint64_t kEventsPerBatch = 1 << 16;

// OTF2 prints its own errors to stderr; the tools word them themselves.
std::string g_last_otf2_error;
OTF2_ErrorCode quiet_errors(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                            const char* format, va_list va) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, va);
  g_last_otf2_error = text;
  return code;
}

bool is_directory(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// Timer ticks to ns (perusetrace's timer already counts ns).
std::uint64_t to_ns(std::uint64_t ticks, std::uint64_t resolution) {
  if (resolution == 1'000'000'000u) return ticks;
  return static_cast<std::uint64_t>(static_cast<long double>(ticks) * 1e9L /
                                    static_cast<long double>(resolution));
}

RegionRole role_of(OTF2_RegionRole r) {
  switch (r) {
    case OTF2_REGION_ROLE_FUNCTION:
      return RegionRole::Function;
    case OTF2_REGION_ROLE_POINT2POINT:
      return RegionRole::PointToPoint;
    case OTF2_REGION_ROLE_BARRIER:
    case OTF2_REGION_ROLE_IMPLICIT_BARRIER:
      return RegionRole::Barrier;
    case OTF2_REGION_ROLE_COLL_ONE2ALL:
    case OTF2_REGION_ROLE_COLL_ALL2ONE:
    case OTF2_REGION_ROLE_COLL_ALL2ALL:
    case OTF2_REGION_ROLE_COLL_OTHER:
      return RegionRole::Collective;
    case OTF2_REGION_ROLE_FILE_IO:
    case OTF2_REGION_ROLE_FILE_IO_METADATA:
      return RegionRole::FileIo;
    default:
      return RegionRole::Other;
  }
}

}  // namespace

struct ArchiveReader::Impl {
  // Closed here, not in ~ArchiveReader: a constructor that throws after opening never gets
  // to run the destructor of the object it was building (found by the fuzzer, as a leak).
  ~Impl() {
    if (reader != nullptr) OTF2_Reader_Close(reader);
  }
  OTF2_Reader* reader = nullptr;
  Definitions* defs = nullptr;
  EventSink* sink = nullptr;

  // Definitions as OTF2 gives them, before they are put in order.
  std::unordered_map<OTF2_StringRef, std::string> strings;
  struct RawNode {
    OTF2_StringRef name;
  };
  std::map<OTF2_SystemTreeNodeRef, RawNode> nodes;
  struct RawGroup {
    OTF2_StringRef name;
    OTF2_SystemTreeNodeRef parent;
  };
  std::map<OTF2_LocationGroupRef, RawGroup> groups;
  struct RawLocation {
    OTF2_StringRef name;
    OTF2_LocationGroupRef group;
    std::uint64_t events;
  };
  std::map<OTF2_LocationRef, RawLocation> locations;
  struct RawRegion {
    OTF2_StringRef name;
    OTF2_RegionRole role;
  };
  std::map<OTF2_RegionRef, RawRegion> regions;
  std::map<std::string, OTF2_AttributeRef> attributes;
  struct RawCommGroup {
    OTF2_GroupType type;
    std::vector<std::uint64_t> members;
  };
  std::map<OTF2_GroupRef, RawCommGroup> comm_groups;
  struct RawComm {
    OTF2_StringRef name;
    OTF2_GroupRef group;
  };
  std::map<OTF2_CommRef, RawComm> comms;
  std::map<OTF2_MetricMemberRef, OTF2_StringRef> metric_members;
  std::map<OTF2_MetricRef, OTF2_MetricMemberRef> metric_classes;

  std::unordered_map<OTF2_LocationRef, std::uint32_t> location_index;
  OTF2_AttributeRef attr_request = 0, attr_peer = 0, attr_tag = 0, attr_bytes = 0,
                    attr_operation = 0, attr_comm = 0;

  std::uint64_t ns(OTF2_TimeStamp t) const {
    if (t <= defs->global_offset) return 0;
    return to_ns(t - defs->global_offset, defs->timer_resolution);
  }
  std::uint32_t loc(OTF2_LocationRef l) const {
    auto it = location_index.find(l);
    return it == location_index.end() ? 0xffffffffu : it->second;
  }
  const std::string& str(OTF2_StringRef s) {
    static const std::string empty;
    auto it = strings.find(s);
    return it == strings.end() ? empty : it->second;
  }
};

namespace {

using Impl = ArchiveReader::Impl;
Impl& self(void* data) {
  return *static_cast<Impl*>(data);
}

// ---- global definitions ------------------------------------------------------------------

OTF2_CallbackCode def_clock(void* d, uint64_t resolution, uint64_t offset, uint64_t length,
                            uint64_t) {
  Definitions& defs = *self(d).defs;
  defs.timer_resolution = resolution == 0 ? 1'000'000'000 : resolution;
  defs.global_offset = offset;
  defs.trace_length = to_ns(length, defs.timer_resolution);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_string(void* d, OTF2_StringRef ref, const char* s) {
  self(d).strings[ref] = s;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_node(void* d, OTF2_SystemTreeNodeRef ref, OTF2_StringRef name, OTF2_StringRef,
                           OTF2_SystemTreeNodeRef) {
  self(d).nodes[ref] = {name};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_group(void* d, OTF2_LocationGroupRef ref, OTF2_StringRef name,
                            OTF2_LocationGroupType, OTF2_SystemTreeNodeRef parent,
                            OTF2_LocationGroupRef) {
  self(d).groups[ref] = {name, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_location(void* d, OTF2_LocationRef ref, OTF2_StringRef name,
                               OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  self(d).locations[ref] = {name, group, events};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_region(void* d, OTF2_RegionRef ref, OTF2_StringRef name, OTF2_StringRef,
                             OTF2_StringRef, OTF2_RegionRole role, OTF2_Paradigm, OTF2_RegionFlag,
                             OTF2_StringRef, uint32_t, uint32_t) {
  self(d).regions[ref] = {name, role};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_attribute(void* d, OTF2_AttributeRef ref, OTF2_StringRef name, OTF2_StringRef,
                                OTF2_Type) {
  Impl& s = self(d);
  s.attributes[s.str(name)] = ref;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_comm_group(void* d, OTF2_GroupRef ref, OTF2_StringRef, OTF2_GroupType type,
                                 OTF2_Paradigm, OTF2_GroupFlag, uint32_t n,
                                 const uint64_t* members) {
  self(d).comm_groups[ref] = {type, std::vector<std::uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_comm(void* d, OTF2_CommRef ref, OTF2_StringRef name, OTF2_GroupRef group,
                           OTF2_CommRef, OTF2_CommFlag) {
  self(d).comms[ref] = {name, group};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_metric_member(void* d, OTF2_MetricMemberRef ref, OTF2_StringRef name,
                                    OTF2_StringRef, OTF2_MetricType, OTF2_MetricMode, OTF2_Type,
                                    OTF2_Base, int64_t, OTF2_StringRef) {
  self(d).metric_members[ref] = name;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode def_metric_class(void* d, OTF2_MetricRef ref, uint8_t n,
                                   const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
                                   OTF2_RecorderKind) {
  if (n > 0) self(d).metric_classes[ref] = members[0];
  return OTF2_CALLBACK_SUCCESS;
}

// ---- events ------------------------------------------------------------------------------

OTF2_CallbackCode on_enter(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList* a,
                           OTF2_RegionRef region) {
  Impl& s = self(d);
  const std::uint32_t i = s.loc(l);
  if (i == 0xffffffffu || region >= s.defs->regions.size()) return OTF2_CALLBACK_SUCCESS;
  if (s.defs->regions[region].kind == RegionKind::Peruse) {
    PeruseFields f;
    std::uint32_t peer_raw = 0, tag_raw = 0;
    if (a != nullptr) {
      OTF2_AttributeList_GetUint64(a, s.attr_request, &f.request);
      if (OTF2_AttributeList_GetInt32(a, s.attr_peer, reinterpret_cast<int32_t*>(&peer_raw)) ==
          OTF2_SUCCESS)
        f.peer = static_cast<std::int32_t>(peer_raw);
      if (OTF2_AttributeList_GetInt32(a, s.attr_tag, reinterpret_cast<int32_t*>(&tag_raw)) ==
          OTF2_SUCCESS)
        f.tag = static_cast<std::int32_t>(tag_raw);
      OTF2_AttributeList_GetUint64(a, s.attr_bytes, &f.bytes);
      OTF2_AttributeList_GetUint8(a, s.attr_operation, &f.operation);
      OTF2_CommRef comm = OTF2_UNDEFINED_COMM;
      OTF2_AttributeList_GetCommRef(a, s.attr_comm, &comm);
      f.comm = comm == OTF2_UNDEFINED_COMM ? kNoComm : comm;
    }
    s.sink->peruse(i, s.ns(t), region, f);
  } else {
    s.sink->enter(i, s.ns(t), region);
  }
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_leave(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  Impl& s = self(d);
  const std::uint32_t i = s.loc(l);
  if (i == 0xffffffffu || region >= s.defs->regions.size()) return OTF2_CALLBACK_SUCCESS;
  if (s.defs->regions[region].kind != RegionKind::Peruse) s.sink->leave(i, s.ns(t), region);
  return OTF2_CALLBACK_SUCCESS;
}
std::uint32_t comm_of(OTF2_CommRef c) {
  return c == OTF2_UNDEFINED_COMM ? kNoComm : c;
}
OTF2_CallbackCode on_send(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                          uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->send(i, s.ns(t), peer, comm_of(comm), tag, bytes, 0, true);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                           uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
                           uint64_t request) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->send(i, s.ns(t), peer, comm_of(comm), tag, bytes, request, false);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_isend_complete(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                    OTF2_AttributeList*, uint64_t request) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->send_complete(i, s.ns(t), request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv_request(OTF2_LocationRef l, OTF2_TimeStamp t, void* d,
                                   OTF2_AttributeList*, uint64_t request) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu) s.sink->recv_request(i, s.ns(t), request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_recv(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                          uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->recv(i, s.ns(t), peer, comm_of(comm), tag, bytes, 0, true);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_irecv(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                           uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
                           uint64_t request) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->recv(i, s.ns(t), peer, comm_of(comm), tag, bytes, request, false);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_cancelled(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                               uint64_t request) {
  Impl& s = self(d);
  if (const std::uint32_t i = s.loc(l); i != 0xffffffffu)
    s.sink->request_cancelled(i, s.ns(t), request);
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric(OTF2_LocationRef l, OTF2_TimeStamp t, void* d, OTF2_AttributeList*,
                            OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  Impl& s = self(d);
  const std::uint32_t i = s.loc(l);
  if (i == 0xffffffffu || n == 0) return OTF2_CALLBACK_SUCCESS;
  std::int64_t v = 0;
  switch (types[0]) {
    case OTF2_TYPE_INT64:
      v = values[0].signed_int;
      break;
    case OTF2_TYPE_UINT64:
      v = static_cast<std::int64_t>(values[0].unsigned_int);
      break;
    default:
      v = static_cast<std::int64_t>(values[0].floating_point);
  }
  s.sink->metric(i, s.ns(t), metric, v);
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

namespace {

// OTF2 trusts the counts in an anchor file: a damaged one can make it allocate gigabytes or loop
// for minutes (found by the fuzzer). An intact anchor is a few hundred bytes and opens in
// milliseconds, so a child process opens it first, within a time and (where the sanitizers
// allow) a memory limit.
enum class AnchorCheck { Opens, DoesNotOpen, Damaged };
AnchorCheck check_anchor(const std::string& anchor) {
  const pid_t child = ::fork();
  if (child < 0) return AnchorCheck::Opens;  // cannot check: the real open will tell
  if (child == 0) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    const rlimit memory{1ul << 30, 1ul << 30};
    ::setrlimit(RLIMIT_AS, &memory);
#endif
    OTF2_Error_RegisterCallback(quiet_errors, nullptr);
    OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
    if (reader == nullptr) ::_exit(3);
    OTF2_Reader_Close(reader);
    ::_exit(0);
  }
  const timespec step{0, 2'000'000};
  for (int waited = 0; waited < 2500; ++waited) {  // 5 s
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return AnchorCheck::Opens;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return AnchorCheck::DoesNotOpen;
      return AnchorCheck::Damaged;  // killed (out of memory) or ended otherwise
    }
    if (done < 0) return AnchorCheck::Opens;
    ::nanosleep(&step, nullptr);
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return AnchorCheck::Damaged;
}

}  // namespace

ArchiveReader::ArchiveReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->defs = &defs_;
  if (!exists(path))
    throw ArchiveError(fmt::format(
        "{} does not exist. Give the trace directory perusetrace wrote (PROGRAM-trace) or the "
        "traces.otf2 inside it.",
        path));
  anchor_ = path;
  if (is_directory(path)) {
    anchor_ = path + "/traces.otf2";
    if (!exists(anchor_))
      throw ArchiveError(fmt::format(
          "{} is a directory without traces.otf2, so it holds no perusetrace archive. Give the "
          "trace directory perusetrace wrote (PROGRAM-trace) or its traces.otf2.",
          path));
  }
  OTF2_Error_RegisterCallback(quiet_errors, nullptr);
  auto fail = [&](const char* what) {
    throw ArchiveError(
        fmt::format("{} is not a readable OTF2 archive ({}{}). Give the traces.otf2 of a complete "
                    "perusetrace trace (an archive is complete once the traced program has left "
                    "MPI_Finalize).",
                    anchor_, what, g_last_otf2_error.empty() ? "" : ": " + g_last_otf2_error));
  };
  Impl& s = *impl_;
  const AnchorCheck check = check_anchor(anchor_);
  if (check == AnchorCheck::DoesNotOpen) fail("OTF2 cannot open it");
  if (check == AnchorCheck::Damaged) {
    g_last_otf2_error.clear();
    fail("its anchor file is damaged: OTF2 could not read it within 5 s and 1 GiB");
  }
  s.reader = OTF2_Reader_Open(anchor_.c_str());
  if (s.reader == nullptr) fail("OTF2 cannot open it");
  if (OTF2_Reader_SetSerialCollectiveCallbacks(s.reader) != OTF2_SUCCESS)
    fail("OTF2 cannot set up reading");
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(s.reader, &creator) != OTF2_SUCCESS) fail("it has no anchor data");
  defs_.creator = creator ? creator : "";
  std::free(creator);
  char* settings = nullptr;
  if (OTF2_Reader_GetProperty(s.reader, "PERUSETRACE::SETTINGS", &settings) == OTF2_SUCCESS &&
      settings != nullptr)
    defs_.settings = settings;
  std::free(settings);

  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(s.reader);
  if (gdr == nullptr) fail("it has no global definitions");
  OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(dc, def_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(dc, def_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(dc, def_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(dc, def_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(dc, def_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(dc, def_region);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(dc, def_attribute);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(dc, def_comm_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(dc, def_comm);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(dc, def_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(dc, def_metric_class);
  OTF2_Reader_RegisterGlobalDefCallbacks(s.reader, gdr, dc, &s);
  std::uint64_t n = 0;
  const OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(s.reader, gdr, &n);
  OTF2_GlobalDefReaderCallbacks_Delete(dc);
  if (rc != OTF2_SUCCESS) fail("its global definitions cannot be read");

  // perusetrace's own marks: its attributes, its Peruse regions, its tracer region.
  static constexpr const char* kAttrs[] = {"peruse_request", "peruse_peer",      "peruse_tag",
                                           "peruse_bytes",   "peruse_operation", "peruse_comm"};
  bool has_tracer_region = false;
  for (const auto& [ref, r] : s.regions) has_tracer_region |= s.str(r.name) == kTracerRegion;
  std::vector<std::string> missing;
  for (const char* a : kAttrs)
    if (!s.attributes.count(a)) missing.emplace_back(a);
  if (!missing.empty() || !has_tracer_region || s.locations.empty()) {
    throw ArchiveError(fmt::format(
        "{} is an OTF2 archive (written by '{}') but not one perusetrace wrote: it lacks {}. "
        "perusetrace's tools read only perusetrace's archives; trace the program with "
        "`perusetrace run` (or libperusetrace preloaded) and give that trace.",
        anchor_, defs_.creator.empty() ? "an unknown tool" : defs_.creator,
        !missing.empty()    ? "the attribute " + missing.front()
        : has_tracer_region ? std::string("any location")
                            : std::string("the region '") + kTracerRegion + "'"));
  }
  s.attr_request = s.attributes["peruse_request"];
  s.attr_peer = s.attributes["peruse_peer"];
  s.attr_tag = s.attributes["peruse_tag"];
  s.attr_bytes = s.attributes["peruse_bytes"];
  s.attr_operation = s.attributes["peruse_operation"];
  s.attr_comm = s.attributes["peruse_comm"];

  // System tree: nodes that hold ranks, ranks by location group id.
  std::map<OTF2_SystemTreeNodeRef, std::uint32_t> node_index;
  for (const auto& [ref, g] : s.groups) {
    auto [it, fresh] =
        node_index.try_emplace(g.parent, static_cast<std::uint32_t>(defs_.nodes.size()));
    if (fresh) {
      auto n_it = s.nodes.find(g.parent);
      defs_.nodes.push_back({n_it == s.nodes.end() ? "node" : s.str(n_it->second.name)});
    }
  }
  std::map<OTF2_LocationGroupRef, std::uint32_t> rank_index;
  for (const auto& [ref, g] : s.groups) {
    rank_index[ref] = static_cast<std::uint32_t>(defs_.ranks.size());
    defs_.ranks.push_back({s.str(g.name), node_index[g.parent], 0});
  }
  // Locations in (rank, id) order; a rank's threads numbered in id order.
  std::vector<std::pair<std::uint32_t, OTF2_LocationRef>> order;
  for (const auto& [ref, l] : s.locations) {
    auto it = rank_index.find(l.group);
    if (it == rank_index.end())
      throw ArchiveError(fmt::format(
          "{}: location {} belongs to no rank (its location group {} is not defined); the "
          "archive is damaged. Trace the program again.",
          anchor_, ref, l.group));
    order.emplace_back(it->second, ref);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [rank, ref] : order) {
    const auto& l = s.locations[ref];
    s.location_index[ref] = static_cast<std::uint32_t>(defs_.locations.size());
    defs_.locations.push_back({ref, s.str(l.name), rank, defs_.ranks[rank].threads++, l.events});
    defs_.total_events += l.events;
  }

  // Regions, indexed by id.
  std::uint32_t peruse_count = 0;
  for (const auto& [ref, r] : s.regions) {
    if (ref >= defs_.regions.size()) defs_.regions.resize(ref + 1);
    RegionDef& out = defs_.regions[ref];
    out.name = s.str(r.name);
    out.role = role_of(r.role);
    if (out.name.rfind(kPerusePrefix, 0) == 0) {
      out.kind = RegionKind::Peruse;
      out.peruse_index = peruse_count++;
      defs_.peruse_events.push_back(out.name.substr(std::char_traits<char>::length(kPerusePrefix)));
    } else if (out.name == kTracerRegion) {
      out.kind = RegionKind::Tracer;
    } else if (out.name.rfind("MPI_", 0) == 0) {
      out.kind = RegionKind::MpiFunction;
    }
  }

  // Communicators: members as world ranks.
  for (const auto& [ref, c] : s.comms) {
    if (ref >= defs_.comms.size()) defs_.comms.resize(ref + 1);
    CommDef& out = defs_.comms[ref];
    out.name = s.str(c.name);
    auto g = s.comm_groups.find(c.group);
    if (g != s.comm_groups.end()) {
      out.self = g->second.type == OTF2_GROUP_TYPE_COMM_SELF;
      for (std::uint64_t m : g->second.members)
        out.world_ranks.push_back(static_cast<std::uint32_t>(m));
    }
  }
  for (const auto& [ref, member] : s.metric_classes) {
    if (ref >= defs_.metrics.size()) defs_.metrics.resize(ref + 1);
    auto m = s.metric_members.find(member);
    defs_.metrics[ref] = m == s.metric_members.end() ? "" : s.str(m->second);
  }
  s.strings.clear();
}

ArchiveReader::~ArchiveReader() = default;

void ArchiveReader::read_events(EventSink& sink,
                                const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Impl& s = *impl_;
  s.sink = &sink;
  for (const LocationDef& l : defs_.locations) OTF2_Reader_SelectLocation(s.reader, l.id);
  // The local definitions carry each location's communicator mapping table.
  const bool have_defs = OTF2_Reader_OpenDefFiles(s.reader) == OTF2_SUCCESS;
  if (OTF2_Reader_OpenEvtFiles(s.reader) != OTF2_SUCCESS)
    throw ArchiveError(
        fmt::format("{}: the event files cannot be opened ({}). The archive is "
                    "incomplete; trace the program again.",
                    anchor_, g_last_otf2_error));
  // perusetrace writes them for every location: without them its communicator ids, and so
  // every message's partners, would be read as something else.
  for (const LocationDef& l : defs_.locations) {
    OTF2_DefReader* d = have_defs ? OTF2_Reader_GetDefReader(s.reader, l.id) : nullptr;
    std::uint64_t read = 0;
    const OTF2_ErrorCode rc =
        d != nullptr ? OTF2_Reader_ReadAllLocalDefinitions(s.reader, d, &read) : OTF2_ERROR_INVALID;
    if (d != nullptr) OTF2_Reader_CloseDefReader(s.reader, d);
    if (rc != OTF2_SUCCESS || read == 0)
      throw ArchiveError(fmt::format(
          "{}: the local definitions of {} (traces/{}.def) are missing or damaged{}; they map "
          "its communicators, so its messages cannot be read. The archive is damaged; trace the "
          "program again.",
          anchor_, l.name, l.id, rc != OTF2_SUCCESS ? " (" + g_last_otf2_error + ")" : ""));
    OTF2_Reader_GetEvtReader(s.reader, l.id);
  }
  if (have_defs) OTF2_Reader_CloseDefFiles(s.reader);

  OTF2_GlobalEvtReader* events = OTF2_Reader_GetGlobalEvtReader(s.reader);
  if (events == nullptr)
    throw ArchiveError(
        fmt::format("{}: the events cannot be read ({}). The archive is "
                    "incomplete; trace the program again.",
                    anchor_, g_last_otf2_error));
  OTF2_GlobalEvtReaderCallbacks* ec = OTF2_GlobalEvtReaderCallbacks_New();
  OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(ec, on_enter);
  OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(ec, on_leave);
  OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(ec, on_send);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(ec, on_isend);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(ec, on_isend_complete);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(ec, on_irecv_request);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(ec, on_recv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(ec, on_irecv);
  OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(ec, on_cancelled);
  OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(ec, on_metric);
  OTF2_Reader_RegisterGlobalEvtCallbacks(s.reader, events, ec, &s);
  std::uint64_t total = 0;
  progress(0, defs_.total_events);
  for (;;) {
    std::uint64_t read = 0;
    const OTF2_ErrorCode rc =
        OTF2_Reader_ReadGlobalEvents(s.reader, events, kEventsPerBatch, &read);
    if (rc != OTF2_SUCCESS) {
      OTF2_GlobalEvtReaderCallbacks_Delete(ec);
      throw ArchiveError(fmt::format(
          "{}: reading the events failed after {} of {} ({}). The archive is damaged or "
          "incomplete; trace the program again.",
          anchor_, total, defs_.total_events, g_last_otf2_error));
    }
    total += read;
    progress(total, defs_.total_events);
    if (read < kEventsPerBatch) break;
  }
  OTF2_GlobalEvtReaderCallbacks_Delete(ec);
  OTF2_Reader_CloseGlobalEvtReader(s.reader, events);
  OTF2_Reader_CloseEvtFiles(s.reader);
  if (total != defs_.total_events)
    throw ArchiveError(fmt::format(
        "{}: {} events could be read where the definitions promise {}: an event file is cut "
        "short or damaged. Trace the program again.",
        anchor_, total, defs_.total_events));
}

}  // namespace perusetrace::archive
