// Reading perusetrace's OTF2 archives with the OTF2 C reader: the global definitions here; the
// events by one or more decoders (event_decoder.hpp), each with a reader of its own for some of
// the locations (their local definitions carry the communicator mapping tables), their streams
// merged into OTF2's global order (event_merge.hpp) and finished by the sequencer
// (event_sequencer.hpp) before the sink sees them.
//
// The archive may be damaged (cut short by a full disk, copied in part, edited), and OTF2 trusts
// what it reads: every id an event or a definition names is checked here before it indexes
// anything, and the layout of the event files is checked before OTF2 reads them (see
// check_file).
#include "reader/archive_reader.hpp"

#include <fmt/core.h>
#include <otf2/otf2.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <new>
#include <thread>
#include <sstream>
#include <atomic>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reader/event_decoder.hpp"
#include "reader/event_merge.hpp"
#include "reader/event_sequencer.hpp"
#include "reader/otf2_callback.hpp"
#include "reader/pipelined_sink.hpp"
#include "record/archive_schema.hpp"

namespace perusetrace::archive {

namespace {

using trace::kPeruseRegionPrefix;
using trace::kTracerRegion;
// OTF2 prints its own errors to stderr; the tools word them themselves.
OTF2_ErrorCode quiet_errors(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                            const char* format, va_list va) {
  char text[512];
  std::vsnprintf(text, sizeof text, format, va);
  last_otf2_error() = text;
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

// What OTF2 puts at the start of every chunk of its files and at the end of a file it closed
// (its OTF2_Buffer.h: CHUNK_HEADER, an endianness mark; END_OF_FILE, END_OF_BUFFER).
constexpr unsigned char kChunkHeader = 3, kBigEndian = 0x23, kLittleEndian = 0x42;
constexpr unsigned char kEndOfFile = 2, kEndOfBuffer = 1;

// OTF2 reads an event file a chunk at a time and takes a short read for a whole chunk: past the
// end of a file cut short it decodes the stale chunks it still holds, and on a file cut at a
// chunk boundary it does so forever. It reads a definitions file whole, and one cut short by a
// few bytes reads as a shorter, valid one. So the layout of both is checked before OTF2 reads
// them: a chunk header at the start (and at every chunk of an event file, `chunk_size` > 0), and
// the end marks of a file OTF2 closed. `what` says what the file holds, for the message. With
// `chunks`, an event file's chunk headers' event numbers, first and last, one pair per chunk.
void check_file(const std::string& path, std::uint64_t chunk_size, const char* what,
                std::vector<EventRange>* chunks = nullptr) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    throw ArchiveError(fmt::format(
        "{} ({}) is missing: the archive is incomplete (copied in part, or its program "
        "stopped while writing it). Copy the whole trace directory, or trace the program again.",
        path, what));
  struct stat st {};
  const bool sized = ::fstat(::fileno(f), &st) == 0;
  const auto size = sized ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::string problem;
  // A chunk header: its mark, the endianness mark and (event files) the numbers of its first
  // and last event, 64 bits each.
  unsigned char head[18] = {};
  if (!sized || size < 4) problem = "it is empty or shorter than an OTF2 file can be";
  for (std::uint64_t at = 0; problem.empty() && at < size; at += chunk_size) {
    const std::size_t want = chunks != nullptr && size - at >= sizeof head ? sizeof head : 2;
    if (std::fseek(f, static_cast<long>(at), SEEK_SET) != 0 ||
        std::fread(head, 1, want, f) != want || head[0] != kChunkHeader ||
        (head[1] != kBigEndian && head[1] != kLittleEndian))
      problem = fmt::format("no OTF2 chunk header at byte {}", at);
    if (problem.empty() && chunks != nullptr) {
      auto number = [&](int from) {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) {
          const std::uint64_t byte = head[from + i];
          v |= head[1] == kBigEndian ? byte << (8 * (7 - i)) : byte << (8 * i);
        }
        return v;
      };
      if (want == sizeof head) {
        const std::uint64_t first = number(2), last = number(10);
        chunks->push_back({first, last >= first ? last - first + 1 : 0});
      } else {
        chunks->push_back({0, 0});  // too short to say: the reading in chunks is not tried
      }
    }
    if (chunk_size == 0) break;
  }
  if (problem.empty() &&
      (std::fseek(f, static_cast<long>(size - 2), SEEK_SET) != 0 ||
       std::fread(head, 1, 2, f) != 2 || head[0] != kEndOfFile || head[1] != kEndOfBuffer))
    problem = "it does not end the way OTF2 ends a file, so it was cut short";
  std::fclose(f);
  if (!problem.empty())
    throw ArchiveError(
        fmt::format("{} ({}) is damaged: {}. The archive cannot be read: trace the program again.",
                    path, what, problem));
}

// OTF2 trusts the counts in an anchor file: a damaged property count has it allocate and walk
// up to 2^32 entries, minutes and gigabytes before it gives up. So the anchor's layout is walked
// here first, each count bounded by the bytes left. The layout (OTF2 3.0's anchor format 3): a
// chunk header (3, endianness mark), "OTF2", the anchor and trace formats, three version bytes,
// the event and definition chunk sizes (64 bits), substrate, compression, the numbers of
// locations and global definitions (64 bits), machine, creator and description (strings); from
// anchor format 2 on, a 32-bit property count, that many name and value strings and a 64-bit
// trace id; from format 3 on, two 32-bit counts; then END_OF_FILE. Strings end with a NUL.
// Returns what is wrong, or "".
std::string check_anchor(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "it cannot be opened";
  constexpr long kMaxAnchor = 1 << 20;  // a few hundred bytes, plus the settings
  struct stat st {};
  if (::fstat(::fileno(f), &st) != 0 || st.st_size > kMaxAnchor) {
    std::fclose(f);
    return st.st_size > kMaxAnchor ? "it is far larger than an OTF2 anchor file"
                                   : "it cannot be read";
  }
  std::vector<unsigned char> b(static_cast<std::size_t>(st.st_size));
  const std::size_t size = std::fread(b.data(), 1, b.size(), f);
  std::fclose(f);
  std::size_t at = 0;
  bool big_endian = false;
  auto need = [&](std::size_t n) { return size - at >= n; };
  auto number = [&](int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      const std::uint64_t byte = b[at + static_cast<std::size_t>(i)];
      v |= big_endian ? byte << (8 * (bytes - 1 - i)) : byte << (8 * i);
    }
    at += static_cast<std::size_t>(bytes);
    return v;
  };
  auto string = [&](std::string* out) {
    if (at >= size) return false;
    const auto* start = b.data() + at;
    const auto* end = static_cast<const unsigned char*>(std::memchr(start, 0, size - at));
    if (end == nullptr) return false;
    if (out != nullptr) out->assign(reinterpret_cast<const char*>(start), end - start);
    at += static_cast<std::size_t>(end - start) + 1;
    return true;
  };
  if (!need(2) || b[0] != kChunkHeader || (b[1] != kBigEndian && b[1] != kLittleEndian))
    return "it does not start like an OTF2 file";
  big_endian = b[1] == kBigEndian;
  at = 2;
  std::string magic;
  if (!string(&magic) || magic != "OTF2") return "it does not start like an OTF2 anchor file";
  if (!need(1 + 38)) return "it ends too early";
  const auto format = number(1), trace_format = number(1);
  if (format == 0) return "its anchor format is 0";
  if (trace_format > 2)
    return fmt::format("its trace format {} is newer than OTF2 3.0's", trace_format);
  at += 3;  // OTF2 version
  const std::uint64_t event_chunk = number(8), definition_chunk = number(8);
  for (const std::uint64_t chunk : {event_chunk, definition_chunk})
    if (chunk < OTF2_CHUNK_SIZE_MIN || chunk > OTF2_CHUNK_SIZE_MAX)
      return fmt::format("its chunk size {} is outside OTF2's {}..{}", chunk, OTF2_CHUNK_SIZE_MIN,
                         OTF2_CHUNK_SIZE_MAX);
  const auto substrate = number(1), compression = number(1);
  if (substrate != OTF2_SUBSTRATE_POSIX || compression != OTF2_COMPRESSION_NONE)
    return "its files are not plain POSIX files, as perusetrace writes them";
  at += 16;  // locations, global definitions
  for (int i = 0; i < 3; ++i)
    if (!string(nullptr)) return "a string in it does not end";
  if (format >= 2) {
    if (!need(4)) return "it ends too early";
    const std::uint64_t properties = number(4);
    std::set<std::string> names;
    for (std::uint64_t i = 0; i < properties; ++i) {
      std::string name, value;
      if (!string(&name) || !string(&value))
        return fmt::format("it announces {} properties but holds {}", properties, i);
      // OTF2 refuses a name that is not NAMESPACE::NAME in [A-Za-z0-9_], and a name twice.
      bool valid = name.find("::") != std::string::npos;
      for (std::size_t from = 0; valid && from <= name.size();) {
        const std::size_t sep = std::min(name.find("::", from), name.size());
        valid = sep > from &&
                std::all_of(name.begin() + static_cast<std::ptrdiff_t>(from),
                            name.begin() + static_cast<std::ptrdiff_t>(sep), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
        from = sep + 2;
      }
      if (!valid) return fmt::format("its property name '{}' is not one OTF2 accepts", name);
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (value.empty()) {
        names.erase(name);
      } else if (!names.insert(name).second) {
        return fmt::format("it holds the property {} twice", name);
      }
    }
    if (!need(8)) return "it ends too early";
    at += 8;
  }
  if (format >= 3) {
    if (!need(8)) return "it ends too early";
    at += 8;
  }
  // OTF2 3.0 ends an anchor with END_OF_FILE, END_OF_BUFFER and one more 0.
  if (format == 3 && (size - at != 3 || b[at] != kEndOfFile || b[at + 1] != kEndOfBuffer))
    return "it does not end the way OTF2 ends an anchor file, so it was cut short or added to";
  return "";
}
}  // namespace

struct ArchiveReader::Impl {
  OTF2_Reader* reader = nullptr;
  Definitions* defs = nullptr;
  std::string anchor;
  // An exception thrown inside an OTF2 callback must not unwind through OTF2's C frames: it is
  // kept here, the callback interrupts OTF2, and it is thrown again once OTF2 has returned.
  std::exception_ptr failure;

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
    OTF2_Paradigm paradigm;
    OTF2_StringRef description;
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
  struct RawWindow {
    OTF2_StringRef name;
    OTF2_CommRef comm;
  };
  std::map<OTF2_RmaWinRef, RawWindow> windows;
  struct RawMember {
    OTF2_StringRef name, description, unit;
    OTF2_MetricMode mode;
    OTF2_Type type;
    OTF2_MetricType metric_type;
  };
  std::map<OTF2_MetricMemberRef, RawMember> metric_members;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> metric_classes;
  struct RawContext {
    OTF2_RegionRef region;
    OTF2_SourceCodeLocationRef place;
    OTF2_CallingContextRef parent;
  };
  std::map<OTF2_CallingContextRef, RawContext> contexts;
  struct RawPlace {
    OTF2_StringRef file;
    std::uint32_t line;
  };
  std::map<OTF2_SourceCodeLocationRef, RawPlace> places;
  struct RawFile {
    OTF2_StringRef name;
    std::uint64_t initial_size = kUnknownSize;
  };
  std::map<OTF2_IoFileRef, RawFile> files;
  struct RawHandle {
    OTF2_StringRef name;
    OTF2_IoFileRef file;
    OTF2_CommRef comm;
  };
  std::map<OTF2_IoHandleRef, RawHandle> handles;

  // What the events are read with (event_decoder.hpp): attribute ids, datatype strings, metric
  // classes, the locations' indices.
  DecoderSetup setup;
  unsigned reading_threads = 0;     // 0: as many as the machine has cores
  unsigned threads_used = 0;        // by the last read_events
  std::vector<std::uint32_t> only;  // set_locations: the locations read_events reads; empty: all

  ~Impl() {
    if (reader != nullptr) OTF2_Reader_Close(reader);
  }
  std::string event_file(OTF2_LocationRef l) const { return setup.event_file(l); }
  std::string local_definitions_file(OTF2_LocationRef l) const {
    return setup.local_definitions_file(l);
  }
  const std::string& str(OTF2_StringRef s) {
    static const std::string empty;
    auto it = strings.find(s);
    return it == strings.end() ? empty : it->second;
  }
};

namespace {

using Impl = ArchiveReader::Impl;

// Runs a callback's body; an exception becomes OTF2_CALLBACK_INTERRUPT (see Impl::failure).
template <class Body>
OTF2_CallbackCode guarded(void* data, Body&& body) {
  return guarded_callback<Impl>(data, std::forward<Body>(body));
}

// ---- global definitions ------------------------------------------------------------------

OTF2_CallbackCode def_clock(void* d, uint64_t resolution, uint64_t offset, uint64_t length,
                            uint64_t realtime) {
  return guarded(d, [&](Impl& s) {
    Definitions& defs = *s.defs;
    defs.realtime_start_ns = realtime;
    defs.timer_resolution = resolution == 0 ? 1'000'000'000 : resolution;
    defs.global_offset = offset;
    defs.trace_length = ticks_to_ns(length, defs.timer_resolution);
  });
}
OTF2_CallbackCode def_string(void* d, OTF2_StringRef ref, const char* text) {
  return guarded(d, [&](Impl& s) { s.strings[ref] = text; });
}
OTF2_CallbackCode def_node(void* d, OTF2_SystemTreeNodeRef ref, OTF2_StringRef name, OTF2_StringRef,
                           OTF2_SystemTreeNodeRef) {
  return guarded(d, [&](Impl& s) { s.nodes[ref] = {name}; });
}
OTF2_CallbackCode def_group(void* d, OTF2_LocationGroupRef ref, OTF2_StringRef name,
                            OTF2_LocationGroupType, OTF2_SystemTreeNodeRef parent,
                            OTF2_LocationGroupRef) {
  return guarded(d, [&](Impl& s) { s.groups[ref] = {name, parent}; });
}
OTF2_CallbackCode def_location(void* d, OTF2_LocationRef ref, OTF2_StringRef name,
                               OTF2_LocationType, uint64_t events, OTF2_LocationGroupRef group) {
  return guarded(d, [&](Impl& s) { s.locations[ref] = {name, group, events}; });
}
OTF2_CallbackCode def_region(void* d, OTF2_RegionRef ref, OTF2_StringRef name, OTF2_StringRef,
                             OTF2_StringRef description, OTF2_RegionRole role,
                             OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t,
                             uint32_t) {
  return guarded(d, [&](Impl& s) { s.regions[ref] = {name, role, paradigm, description}; });
}
OTF2_CallbackCode def_context(void* d, OTF2_CallingContextRef ref, OTF2_RegionRef region,
                              OTF2_SourceCodeLocationRef place, OTF2_CallingContextRef parent) {
  return guarded(d, [&](Impl& s) { s.contexts[ref] = {region, place, parent}; });
}
OTF2_CallbackCode def_place(void* d, OTF2_SourceCodeLocationRef ref, OTF2_StringRef file,
                            uint32_t line) {
  return guarded(d, [&](Impl& s) { s.places[ref] = {file, line}; });
}
// The period in ns; perusetrace writes one generator (ns: base 10, exponent -9). A period that
// does not come to a whole positive number of ns is left 0, which the profile refuses.
OTF2_CallbackCode def_interrupt_generator(void* d, OTF2_InterruptGeneratorRef, OTF2_StringRef,
                                          OTF2_InterruptGeneratorMode mode, OTF2_Base base,
                                          int64_t exponent, uint64_t period) {
  return guarded(d, [&](Impl& s) {
    if (mode != OTF2_INTERRUPT_GENERATOR_MODE_TIME || exponent < -30 || exponent > 30) return;
    const long double ns = static_cast<long double>(period) *
                           std::pow(base == OTF2_BASE_BINARY ? 2.0L : 10.0L, exponent) * 1e9L;
    if (ns >= 1 && ns < 1e18L) s.defs->sampling_period_ns = static_cast<std::uint64_t>(ns + 0.5L);
  });
}
OTF2_CallbackCode def_attribute(void* d, OTF2_AttributeRef ref, OTF2_StringRef name, OTF2_StringRef,
                                OTF2_Type) {
  return guarded(d, [&](Impl& s) { s.attributes[s.str(name)] = ref; });
}
OTF2_CallbackCode def_comm_group(void* d, OTF2_GroupRef ref, OTF2_StringRef, OTF2_GroupType type,
                                 OTF2_Paradigm, OTF2_GroupFlag, uint32_t n,
                                 const uint64_t* members) {
  return guarded(d, [&](Impl& s) {
    s.comm_groups[ref] = {type, std::vector<std::uint64_t>(members, members + n)};
  });
}
OTF2_CallbackCode def_comm(void* d, OTF2_CommRef ref, OTF2_StringRef name, OTF2_GroupRef group,
                           OTF2_CommRef, OTF2_CommFlag) {
  return guarded(d, [&](Impl& s) { s.comms[ref] = {name, group}; });
}
OTF2_CallbackCode def_rma_win(void* d, OTF2_RmaWinRef ref, OTF2_StringRef name, OTF2_CommRef comm,
                              OTF2_RmaWinFlag) {
  return guarded(d, [&](Impl& s) { s.windows[ref] = {name, comm}; });
}
OTF2_CallbackCode def_metric_member(void* d, OTF2_MetricMemberRef ref, OTF2_StringRef name,
                                    OTF2_StringRef description, OTF2_MetricType metric_type,
                                    OTF2_MetricMode mode, OTF2_Type type, OTF2_Base, int64_t,
                                    OTF2_StringRef unit) {
  return guarded(d, [&](Impl& s) {
    s.metric_members[ref] = {name, description, unit, mode, type, metric_type};
  });
}
OTF2_CallbackCode def_io_file(void* d, OTF2_IoFileRef ref, OTF2_StringRef name,
                              OTF2_SystemTreeNodeRef) {
  return guarded(d, [&](Impl& s) { s.files[ref].name = name; });
}
OTF2_CallbackCode def_io_file_property(void* d, OTF2_IoFileRef file, OTF2_StringRef name,
                                       OTF2_Type type, OTF2_AttributeValue value) {
  return guarded(d, [&](Impl& s) {
    if (type == OTF2_TYPE_UINT64 && s.str(name) == trace::kIoInitialSizeProperty)
      s.files[file].initial_size = value.uint64;
  });
}
OTF2_CallbackCode def_io_handle(void* d, OTF2_IoHandleRef ref, OTF2_StringRef name,
                                OTF2_IoFileRef file, OTF2_IoParadigmRef, OTF2_IoHandleFlag,
                                OTF2_CommRef comm, OTF2_IoHandleRef) {
  return guarded(d, [&](Impl& s) { s.handles[ref] = {name, file, comm}; });
}
OTF2_CallbackCode def_metric_class(void* d, OTF2_MetricRef ref, uint8_t n,
                                   const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
                                   OTF2_RecorderKind) {
  return guarded(d, [&](Impl& s) { s.metric_classes[ref].assign(members, members + n); });
}

}  // namespace

namespace {

// OTF2's global event reader does not say whose events it failed on. Reading each location's
// events alone, with a fresh reader and no more events than its definition announces (so that
// this cannot run away either), finds the event file to name. "" when each reads as announced.
std::string locate_event_damage(const std::string& anchor, const Definitions& defs, const Impl& s) {
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  if (reader == nullptr) return "";
  std::string found;
  bool open = OTF2_Reader_SetSerialCollectiveCallbacks(reader) == OTF2_SUCCESS;
  for (const LocationDef& l : defs.locations)
    open = open && OTF2_Reader_SelectLocation(reader, l.id) == OTF2_SUCCESS;
  open = open && OTF2_Reader_OpenEvtFiles(reader) == OTF2_SUCCESS;
  for (const LocationDef& l : defs.locations) {
    if (!open || !found.empty()) break;
    OTF2_EvtReader* events = OTF2_Reader_GetEvtReader(reader, l.id);
    if (events == nullptr) continue;
    last_otf2_error().clear();
    std::uint64_t read = 0;
    const std::uint64_t limit = l.events == ~std::uint64_t{0} ? l.events : l.events + 1;
    const OTF2_ErrorCode rc = OTF2_Reader_ReadLocalEvents(reader, events, limit, &read);
    if (rc != OTF2_SUCCESS || read != l.events)
      found = fmt::format(
          "{} (events of location {}, {}) is damaged: OTF2 reads {} {} of the {} "
          "events its definition announces{}",
          s.event_file(l.id), l.id, l.name, rc != OTF2_SUCCESS ? "only" : "", read, l.events,
          rc != OTF2_SUCCESS ? " (" + last_otf2_error() + ")" : "");
    OTF2_Reader_CloseEvtReader(reader, events);
  }
  if (open) OTF2_Reader_CloseEvtFiles(reader);
  OTF2_Reader_Close(reader);
  return found;
}

}  // namespace

namespace {

[[noreturn]] void damaged(const std::string& file, const std::string& what) {
  throw ArchiveError(fmt::format(
      "{} is damaged: {}. The archive cannot be read: trace the program again.", file, what));
}

// perusetrace's own marks: its attributes, its Peruse regions, its tracer region.
void require_perusetrace_marks(ArchiveReader::Impl& s, const std::string& anchor_,
                               const std::string& creator) {
  bool has_tracer_region = false;
  for (const auto& [ref, r] : s.regions) has_tracer_region |= s.str(r.name) == kTracerRegion;
  std::vector<std::string> missing;
  for (std::uint32_t a = 0; a < trace::kAttrRequiredCount; ++a)
    if (!s.attributes.count(trace::kAttributeNames[a]))
      missing.emplace_back(trace::kAttributeNames[a]);
  if (!missing.empty() || !has_tracer_region || s.locations.empty()) {
    throw ArchiveError(fmt::format(
        "{} is an OTF2 archive (written by '{}') but not one perusetrace wrote: it lacks {}. "
        "perusetrace's tools read only perusetrace's archives; trace the program with "
        "`perusetrace run` (or libperusetrace preloaded) and give that trace.",
        anchor_, creator.empty() ? "an unknown tool" : creator,
        !missing.empty()    ? "the attribute " + missing.front()
        : has_tracer_region ? std::string("any location")
                            : std::string("the region '") + kTracerRegion + "'"));
  }
  s.setup.attr_request = s.attributes[trace::kAttributeNames[trace::kAttrRequest]];
  s.setup.attr_peer = s.attributes[trace::kAttributeNames[trace::kAttrPeer]];
  s.setup.attr_tag = s.attributes[trace::kAttributeNames[trace::kAttrTag]];
  s.setup.attr_bytes = s.attributes[trace::kAttributeNames[trace::kAttrBytes]];
  s.setup.attr_operation = s.attributes[trace::kAttributeNames[trace::kAttrOperation]];
  s.setup.attr_comm = s.attributes[trace::kAttributeNames[trace::kAttrComm]];
  s.setup.attr_state = s.attributes[trace::kAttributeNames[trace::kAttrMpiState]];
  s.setup.attr_activity = s.attributes[trace::kAttributeNames[trace::kAttrMpiActivity]];
  s.setup.attr_function = s.attributes[trace::kAttributeNames[trace::kAttrMpiFunction]];
  s.setup.attr_weight = s.attributes[trace::kAttributeNames[trace::kAttrSampleWeight]];
  auto optional = [&](trace::Attribute a) {
    const auto it = s.attributes.find(trace::kAttributeNames[a]);
    return it == s.attributes.end() ? OTF2_UNDEFINED_ATTRIBUTE : it->second;
  };
  s.setup.attr_size_at_open = optional(trace::kAttrIoSizeAtOpen);
  s.setup.attr_io_handle = optional(trace::kAttrIoHandle);
  s.setup.attr_io_size = optional(trace::kAttrIoSize);
  s.setup.attr_datatype = optional(trace::kAttrDatatype);
  s.setup.attr_send_datatype = optional(trace::kAttrSendDatatype);
  s.setup.attr_recv_datatype = optional(trace::kAttrRecvDatatype);
  s.setup.attr_poll_calls = optional(trace::kAttrPollCalls);
  s.setup.attr_poll_inside = optional(trace::kAttrPollInsideNs);
}

// perusetrace numbers regions, communicators and metrics from 0 without gaps, and the tools
// index tables by these ids: an id past the count is damage, not a reason to allocate for it.
void require_dense_ids(const ArchiveReader::Impl& s, const std::string& global_defs) {
  auto dense = [&](const char* what, std::uint64_t last, std::size_t count) {
    if (count > 0 && last >= count)
      damaged(global_defs,
              fmt::format("it defines {} {}s but numbers one of them {}", count, what, last));
  };
  if (!s.regions.empty()) dense("region", s.regions.rbegin()->first, s.regions.size());
  if (!s.comms.empty()) dense("communicator", s.comms.rbegin()->first, s.comms.size());
  if (!s.metric_classes.empty())
    dense("metric class", s.metric_classes.rbegin()->first, s.metric_classes.size());
  if (!s.metric_members.empty())
    dense("metric", s.metric_members.rbegin()->first, s.metric_members.size());
  if (!s.contexts.empty()) dense("calling context", s.contexts.rbegin()->first, s.contexts.size());
  if (!s.files.empty()) dense("I/O file", s.files.rbegin()->first, s.files.size());
  if (!s.handles.empty()) dense("I/O handle", s.handles.rbegin()->first, s.handles.size());
}

// The calling context tree. A tool walks a context up to its root, so a parent or region that
// does not exist, or a cycle, is damage.
void build_contexts(ArchiveReader::Impl& s, Definitions& defs_, const std::string& global_defs) {
  defs_.contexts.resize(s.contexts.size());
  for (const auto& [ref, c] : s.contexts) {
    ContextDef& out = defs_.contexts[ref];
    if (c.region >= s.regions.size())
      damaged(global_defs, fmt::format("calling context {} names region {}, which is not defined",
                                       ref, c.region));
    const bool root = c.parent == OTF2_UNDEFINED_CALLING_CONTEXT;
    if (!root && c.parent >= s.contexts.size())
      damaged(global_defs, fmt::format("calling context {} names parent {}, which is not defined",
                                       ref, c.parent));
    out.region = static_cast<std::uint32_t>(c.region);
    out.parent = root ? kNoContext : static_cast<std::uint32_t>(c.parent);
    if (auto p = s.places.find(c.place); p != s.places.end()) {
      out.file = s.str(p->second.file);
      out.line = p->second.line;
    }
  }
  // Each context is walked once: `state` 1 while on the current path, 2 once known to reach a
  // root.
  std::vector<std::uint8_t> state(defs_.contexts.size(), 0);
  std::vector<std::uint32_t> path;
  for (std::uint32_t start = 0; start < defs_.contexts.size(); ++start) {
    path.clear();
    for (std::uint32_t c = start; c != kNoContext && state[c] != 2; c = defs_.contexts[c].parent) {
      if (state[c] == 1)
        damaged(global_defs, fmt::format("calling context {} is its own ancestor", c));
      state[c] = 1;
      path.push_back(c);
    }
    for (const std::uint32_t c : path) state[c] = 2;
  }
}

// The other jobs the property names (archive_schema.hpp): "job=...;relation=...;archive=...;
// first_group=G;ranks=R,R" items separated by spaces. An item it cannot read is left out: its
// processes are then read as ranks without events.
std::vector<JobDef> parse_jobs(const std::string& text) {
  std::vector<JobDef> jobs;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    JobDef job;
    bool has_first = false, ok = true;
    for (std::size_t f = 0; f < item.size() && ok;) {
      std::size_t stop = item.find(';', f);
      if (stop == std::string::npos) stop = item.size();
      const std::string field = item.substr(f, stop - f);
      f = stop + 1;
      const std::size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      auto number = [&](const std::string& v, std::uint32_t& out) {
        char* tail = nullptr;
        const unsigned long n = std::strtoul(v.c_str(), &tail, 10);
        ok = ok && !v.empty() && *tail == '\0' && n < 0xfffffff0ul;
        out = static_cast<std::uint32_t>(n);
      };
      if (key == "job") {
        job.name = value;
      } else if (key == "relation") {
        job.relation = value;
      } else if (key == "archive") {
        job.archive = value == "-" ? "" : value;
      } else if (key == "first_group") {
        number(value, job.first_group);
        has_first = true;
      } else if (key == "ranks") {
        for (std::size_t r = 0; r <= value.size() && ok;) {
          std::size_t comma = value.find(',', r);
          if (comma == std::string::npos) comma = value.size();
          number(value.substr(r, comma - r), job.ranks.emplace_back());
          r = comma + 1;
        }
      }
    }
    if (ok && has_first && !job.name.empty() && !job.ranks.empty()) jobs.push_back(std::move(job));
  }
  return jobs;
}

// The tools' definitions from what OTF2 handed the callbacks: nodes, ranks and their threads,
// regions, communicators, metrics.
// The datatypes' Strings (record/datatype_text.hpp), in archive id order; an inner type
// that is not defined before its user is damage the tools would loop on: it is dropped.
void build_datatypes(ArchiveReader::Impl& s, Definitions& defs_) {
  std::map<std::uint64_t, std::pair<OTF2_StringRef, DatatypeDef>> by_id;
  for (const auto& [ref, text] : s.strings) {
    DatatypeDef d;
    if (trace::parse_datatype_text(text, d)) by_id.emplace(d.id, std::make_pair(ref, std::move(d)));
  }
  std::map<std::uint64_t, std::uint32_t> index;
  for (auto& [id, entry] : by_id) {
    DatatypeDef& d = entry.second;
    const auto at = static_cast<std::uint32_t>(defs_.datatypes.size());
    std::vector<std::uint64_t> inner;
    for (std::uint64_t t : d.types)
      if (const auto it = index.find(t); it != index.end()) inner.push_back(it->second);
    d.types = std::move(inner);
    d.id = at;
    index.emplace(id, at);
    s.setup.datatype_of_string.emplace(entry.first, at);
    defs_.datatypes.push_back(std::move(d));
  }
}

void build_definitions(ArchiveReader::Impl& s, Definitions& defs_, const std::string& global_defs) {
  // Location groups of other jobs' processes: job index and position, by group id. Their
  // locations (one "measurement off" event each) are no ranks of this trace and are not read.
  std::map<OTF2_LocationGroupRef, std::pair<std::uint32_t, std::uint32_t>> other;
  for (std::uint32_t j = 0; j < defs_.jobs.size(); ++j)
    for (std::uint32_t i = 0; i < defs_.jobs[j].ranks.size(); ++i)
      other.emplace(defs_.jobs[j].first_group + i, std::make_pair(j, i));
  // System tree: nodes that hold ranks, ranks by location group id.
  std::map<OTF2_SystemTreeNodeRef, std::uint32_t> node_index;
  for (const auto& [ref, g] : s.groups) {
    if (other.count(ref) > 0) continue;
    auto [it, fresh] =
        node_index.try_emplace(g.parent, static_cast<std::uint32_t>(defs_.nodes.size()));
    if (fresh) {
      auto n_it = s.nodes.find(g.parent);
      defs_.nodes.push_back({n_it == s.nodes.end() ? "node" : s.str(n_it->second.name)});
    }
  }
  std::map<OTF2_LocationGroupRef, std::uint32_t> rank_index;
  for (const auto& [ref, g] : s.groups) {
    if (other.count(ref) > 0) continue;
    rank_index[ref] = static_cast<std::uint32_t>(defs_.ranks.size());
    defs_.ranks.push_back({s.str(g.name), node_index[g.parent], 0});
  }
  // Locations in (rank, id) order; a rank's threads numbered in id order.
  std::vector<std::pair<std::uint32_t, OTF2_LocationRef>> order;
  for (const auto& [ref, l] : s.locations) {
    if (other.count(l.group) > 0) continue;
    auto it = rank_index.find(l.group);
    if (it == rank_index.end())
      damaged(global_defs, fmt::format("location {} belongs to no rank (its location group {} "
                                       "is not defined)",
                                       ref, l.group));
    order.emplace_back(it->second, ref);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [rank, ref] : order) {
    const auto& l = s.locations[ref];
    defs_.locations.push_back({ref, s.str(l.name), rank, defs_.ranks[rank].threads++, l.events});
    defs_.total_events = l.events > ~defs_.total_events ? ~std::uint64_t{0}  // saturates
                                                        : defs_.total_events + l.events;
  }
  // Every rank perusetrace writes has a location for its first thread.
  for (std::size_t r = 0; r < defs_.ranks.size(); ++r)
    if (defs_.ranks[r].threads == 0)
      damaged(global_defs, fmt::format("rank '{}' has no location", defs_.ranks[r].name));

  // Regions, indexed by id.
  std::uint32_t peruse_count = 0;
  defs_.regions.resize(s.regions.size());
  for (const auto& [ref, r] : s.regions) {
    RegionDef& out = defs_.regions[ref];
    out.name = s.str(r.name);
    out.role = role_of(r.role);
    out.sampled = r.paradigm == OTF2_PARADIGM_SAMPLING;
    if (out.name.rfind(kPeruseRegionPrefix, 0) == 0) {
      out.kind = RegionKind::Peruse;
      out.peruse_index = peruse_count++;
      defs_.peruse_events.push_back(
          out.name.substr(std::char_traits<char>::length(kPeruseRegionPrefix)));
    } else if (r.paradigm == OTF2_PARADIGM_USER &&
               out.name.find(trace::kAnnotationSeparator) != std::string::npos) {
      out.kind = RegionKind::Annotation;
      const std::size_t eq = out.name.find(trace::kAnnotationSeparator);
      out.attribute = out.name.substr(0, eq);
      out.value = out.name.substr(eq + 1);
      out.process_scope = s.str(r.description) == trace::kProcessAnnotationDescription;
    } else if (out.name == kTracerRegion) {
      out.kind = RegionKind::Tracer;
    } else if (out.name.rfind("MPI_", 0) == 0 && !out.sampled) {
      out.kind = RegionKind::MpiFunction;
    }
  }

  // Communicators: members as world ranks. A COMM_GROUP lists indices into the COMM_LOCATIONS
  // group, which is world rank order; a Comm of the ViTE layout names a COMM_LOCATIONS group
  // itself, whose members are locations, of the rank their location group stands for.
  defs_.comms.resize(s.comms.size());
  for (const auto& [ref, c] : s.comms) {
    CommDef& out = defs_.comms[ref];
    out.name = s.str(c.name);
    auto g = s.comm_groups.find(c.group);
    if (g == s.comm_groups.end()) continue;
    out.self = g->second.type == OTF2_GROUP_TYPE_COMM_SELF;
    for (std::uint64_t m : g->second.members) {
      auto l = g->second.type == OTF2_GROUP_TYPE_COMM_LOCATIONS ? s.locations.find(m)
                                                                : s.locations.end();
      // Group 0's index of a member is its location group's id (archive_schema.hpp).
      const std::uint64_t group = l == s.locations.end() ? m : l->second.group;
      const auto o = other.find(static_cast<OTF2_LocationGroupRef>(group));
      if (group <= 0xffffffffu && o != other.end()) {
        const auto [job, at] = o->second;
        if (out.job == kNoJob) out.job_ranks = out.world_ranks;
        if (out.job == kNoJob || out.job == job) {
          out.job = job;
          out.world_ranks.push_back(kOtherJobRank);
          out.job_ranks.push_back(defs_.jobs[job].ranks[at]);
          continue;
        }
      }
      out.world_ranks.push_back(static_cast<std::uint32_t>(group));
      if (out.job != kNoJob) out.job_ranks.push_back(out.world_ranks.back());
    }
  }
  // Groups of world ranks (a COMM_GROUP's members index the COMM_LOCATIONS group, which is
  // world rank order), and the windows with their communicators.
  for (const auto& [ref, g] : s.comm_groups)
    if (g.type == OTF2_GROUP_TYPE_COMM_GROUP)
      defs_.groups[ref].assign(g.members.begin(), g.members.end());
  for (const auto& [ref, w] : s.windows) {
    if (ref >= s.windows.size()) continue;  // perusetrace numbers them from 0
    if (defs_.windows.size() <= ref) defs_.windows.resize(ref + 1);
    defs_.windows[ref].name = s.str(w.name);
    defs_.windows[ref].comm = w.comm < defs_.comms.size() ? w.comm : kNoComm;
  }
  build_contexts(s, defs_, global_defs);
  defs_.files.resize(s.files.size());
  for (const auto& [ref, f] : s.files) defs_.files[ref] = {s.str(f.name), f.initial_size};
  defs_.io_handles.resize(s.handles.size());
  for (const auto& [ref, h] : s.handles) {
    if (h.file >= defs_.files.size())
      damaged(global_defs,
              fmt::format("I/O handle {} names file {}, which is not defined", ref, h.file));
    defs_.io_handles[ref] = {
        s.str(h.name), static_cast<std::uint32_t>(h.file),
        h.comm < defs_.comms.size() ? static_cast<std::uint32_t>(h.comm) : kNoComm};
  }
  build_datatypes(s, defs_);
  defs_.metrics.resize(s.metric_members.size());
  s.setup.class_members.assign(s.metric_classes.size(), {});
  for (const auto& [ref, members] : s.metric_classes) {
    for (OTF2_MetricMemberRef member : members) {
      if (member >= s.metric_members.size())
        damaged(global_defs,
                fmt::format("metric class {} names member {}, which is not defined", ref, member));
      s.setup.class_members[ref].push_back(static_cast<std::uint32_t>(member));
    }
  }
  for (const auto& [ref, m] : s.metric_members) {
    MetricDef& out = defs_.metrics[ref];
    const Impl::RawMember& raw = m;
    out.name = s.str(raw.name);
    out.description = s.str(raw.description);
    out.unit = s.str(raw.unit);
    out.mode = raw.mode == OTF2_METRIC_RELATIVE_LAST ? MetricMode::Delta : MetricMode::Value;
    out.annotation = raw.metric_type == OTF2_METRIC_TYPE_USER;
    out.process_scope = out.annotation && out.description == trace::kProcessAnnotationDescription;
    out.type = raw.type == OTF2_TYPE_DOUBLE   ? MetricType::Double
               : raw.type == OTF2_TYPE_UINT64 ? MetricType::Uint64
                                              : MetricType::Int64;
  }
}

}  // namespace

std::int64_t EventSink::rounded_metric(double value) {
  // A double outside int64's range (or NaN) has no integer value: clamp it.
  constexpr double kLimit = 9.2e18;
  return !(value == value) ? 0 : std::llround(std::clamp(value, -kLimit, kLimit));
}

std::string archive_version_problem(const std::string& version, const std::string& anchor,
                                    const std::string& creator) {
  if (version.empty()) return "";
  char* end = nullptr;
  const unsigned long v = std::strtoul(version.c_str(), &end, 10);
  if (*end == '\0' && v >= 1 && v <= trace::kArchiveVersion) return "";
  return fmt::format(
      "{} is an archive of version {} (written by {}); this perusetrace reads archive versions 1 "
      "to {}. Read it with the perusetrace that wrote it, or trace the program again with this "
      "one.",
      anchor, version, creator.empty() ? "an unknown perusetrace" : creator,
      trace::kArchiveVersion);
}

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
  Impl& s = *impl_;
  s.anchor = anchor_;
  s.setup.anchor = anchor_;
  s.setup.defs = &defs_;
  const std::string stem =
      anchor_.size() > 5 && anchor_.compare(anchor_.size() - 5, 5, ".otf2") == 0
          ? anchor_.substr(0, anchor_.size() - 5)
          : anchor_;
  const std::string global_defs = stem + ".def";
  last_otf2_error().clear();
  OTF2_Error_RegisterCallback(quiet_errors, nullptr);
  auto fail = [&](const std::string& what) {
    throw ArchiveError(
        fmt::format("{} is not a readable OTF2 archive ({}{}). Give the traces.otf2 of a complete "
                    "perusetrace trace (an archive is complete once the traced program has left "
                    "MPI_Finalize).",
                    anchor_, what, last_otf2_error().empty() ? "" : ": " + last_otf2_error()));
  };
  if (const std::string problem = check_anchor(anchor_); !problem.empty()) fail(problem);
  s.reader = OTF2_Reader_Open(anchor_.c_str());
  if (s.reader == nullptr) fail("OTF2 cannot open it");
  if (OTF2_Reader_SetSerialCollectiveCallbacks(s.reader) != OTF2_SUCCESS)
    fail("OTF2 cannot set up reading");
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(s.reader, &creator) != OTF2_SUCCESS) fail("it has no anchor data");
  defs_.creator = creator ? creator : "";
  std::free(creator);
  auto property = [&](const char* name) {
    char* value = nullptr;
    std::string text;
    if (OTF2_Reader_GetProperty(s.reader, name, &value) == OTF2_SUCCESS && value != nullptr)
      text = value;
    std::free(value);
    return text;
  };
  if (const std::string problem =
          archive_version_problem(property(trace::kArchiveVersionProperty), anchor_, defs_.creator);
      !problem.empty())
    throw ArchiveError(problem);
  defs_.settings = property(trace::kSettingsProperty);
  defs_.clock_domains = property(trace::kClockDomainsProperty);
  defs_.cvars = property(trace::kCvarsProperty);
  defs_.cvars_differ = property(trace::kCvarsDifferProperty);
  defs_.cvars_set = property(trace::kCvarsSetProperty);
  defs_.jobs = parse_jobs(property(trace::kJobsProperty));
  const std::string cuts = property(trace::kRecordingCutProperty);

  check_file(global_defs, 0, "the global definitions");
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(s.reader);
  if (gdr == nullptr) fail("its global definitions cannot be opened");
  OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
  if (dc == nullptr) throw std::bad_alloc();
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
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(dc, def_context);
  OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(dc, def_place);
  OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(dc, def_interrupt_generator);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(dc, def_rma_win);
  OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(dc, def_io_file);
  OTF2_GlobalDefReaderCallbacks_SetIoFilePropertyCallback(dc, def_io_file_property);
  OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(dc, def_io_handle);
  OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(s.reader, gdr, dc, &s);
  std::uint64_t n = 0;
  if (rc == OTF2_SUCCESS) rc = OTF2_Reader_ReadAllGlobalDefinitions(s.reader, gdr, &n);
  OTF2_GlobalDefReaderCallbacks_Delete(dc);
  if (s.failure) std::rethrow_exception(s.failure);
  if (rc != OTF2_SUCCESS)
    damaged(global_defs, fmt::format("OTF2 cannot read its global definitions ({})",
                                     last_otf2_error().empty() ? OTF2_Error_GetDescription(rc)
                                                               : last_otf2_error()));

  require_perusetrace_marks(s, anchor_, defs_.creator);
  require_dense_ids(s, global_defs);
  build_definitions(s, defs_, global_defs);
  // "RANK=TIME ...", TIME an event timestamp: to ns since the start like every time here.
  std::istringstream items(cuts);
  for (std::string item; items >> item;) {
    int rank = -1;
    unsigned long long at = 0;
    if (std::sscanf(item.c_str(), "%d=%llu", &rank, &at) == 2 && rank >= 0)
      defs_.recording_cuts[rank] = at > defs_.global_offset ? at - defs_.global_offset : 0;
  }
  s.setup.prepare();
  s.strings.clear();
}

ArchiveReader::~ArchiveReader() = default;

void ArchiveReader::set_locations(std::vector<std::uint32_t> only) {
  for (const std::uint32_t i : only)
    if (i >= defs_.locations.size())
      throw std::invalid_argument(fmt::format("set_locations: no location {} in {} (it has {})", i,
                                              anchor_, defs_.locations.size()));
  std::sort(only.begin(), only.end());
  only.erase(std::unique(only.begin(), only.end()), only.end());
  impl_->only = std::move(only);
}

void ArchiveReader::set_reading_threads(unsigned threads) {
  impl_->reading_threads = threads;
}
unsigned ArchiveReader::reading_threads() const {
  return impl_->threads_used;
}

namespace {

constexpr unsigned kMaxReadingThreads = 8;
constexpr std::size_t kBatchesPerThread = 8;

// One reading thread: records in batches sequenced where they are (its order is the archive's
// already), then handed on.
class SequenceInPlace final : public BatchConsumer {
 public:
  SequenceInPlace(EventSequencer& sequencer, BatchConsumer& next)
      : sequencer_(sequencer), next_(next) {}
  EventBatch* consume(EventBatch* full) override {
    sequencer_.sequence(*full);
    return next_.consume(full);
  }

 private:
  EventSequencer& sequencer_;
  BatchConsumer& next_;
};

// The locations each reading thread reads, as location indices: the events shared out as evenly
// as whole locations allow (the largest first, each to the thread with the fewest so far).
std::vector<std::vector<std::uint32_t>> share_locations(const Definitions& defs,
                                                        std::vector<std::uint32_t> order,
                                                        unsigned threads) {
  const std::vector<std::uint32_t> all = order;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return defs.locations[a].events > defs.locations[b].events;
  });
  const std::size_t parts = std::min<std::size_t>(threads, order.size());
  std::vector<std::vector<std::uint32_t>> out(std::max<std::size_t>(parts, 1));
  std::vector<long double> load(out.size(), 0);
  for (const std::uint32_t i : order) {
    const auto least =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[least].push_back(i);
    load[least] += static_cast<long double>(defs.locations[i].events);
  }
  for (auto& part : out) std::sort(part.begin(), part.end());
  // A thread without events would only add a stream to merge.
  std::erase_if(out, [&](const std::vector<std::uint32_t>& part) {
    return std::all_of(part.begin(), part.end(),
                       [&](std::uint32_t i) { return defs.locations[i].events == 0; });
  });
  if (out.empty()) out.emplace_back();
  // Every location is read, those without events too (the decoder checks they have none).
  for (const std::uint32_t i : all)
    if (defs.locations[i].events == 0 &&
        std::none_of(out.begin(), out.end(), [&](const std::vector<std::uint32_t>& part) {
          return std::binary_search(part.begin(), part.end(), i);
        })) {
      out.front().insert(std::lower_bound(out.front().begin(), out.front().end(), i), i);
    }
  return out;
}

// The reading threads' streams; stops and joins them however the merge ends.
class ReadingThreads {
 public:
  // What one thread reads: all events of `locations`, or only `ranges` of its one location.
  struct Work {
    std::vector<std::uint32_t> locations;
    std::vector<EventRange> ranges;
  };
  struct Stream {
    Stream(const DecoderSetup& setup, Work work)
        : queue(kBatchesPerThread),
          decoder(setup, std::move(work.locations)),
          ranges(std::move(work.ranges)) {
      writer.reset(queue.first(), &queue);
    }
    BatchQueue queue;
    EventDecoder decoder;
    std::vector<EventRange> ranges;
    BatchWriter writer;
    std::atomic<std::uint64_t> read{0};
    std::thread thread;
  };
  // Why a reading thread stops early: another one failed, or the sinks did.
  struct Stopped {};

  ReadingThreads(const DecoderSetup& setup, std::vector<Work> works) {
    for (Work& work : works) streams_.push_back(std::make_unique<Stream>(setup, std::move(work)));
    for (auto& stream : streams_) {
      Stream* st = stream.get();
      st->thread = std::thread([st] {
        std::exception_ptr error;
        try {
          auto count = [st](std::uint64_t n) { st->read.store(n, std::memory_order_relaxed); };
          if (st->ranges.empty()) {
            st->decoder.run(st->writer, count);
          } else {
            st->decoder.run_ranges(st->writer, st->ranges, count);
          }
        } catch (...) {
          error = std::current_exception();
        }
        st->queue.close(st->writer.batch(), error);
      });
    }
  }
  ~ReadingThreads() {
    for (auto& st : streams_) st->queue.abort(std::make_exception_ptr(Stopped{}));
    for (auto& st : streams_)
      if (st->thread.joinable()) st->thread.join();
  }
  ReadingThreads(const ReadingThreads&) = delete;
  ReadingThreads& operator=(const ReadingThreads&) = delete;

  std::vector<BatchQueue*> queues() const {
    std::vector<BatchQueue*> out;
    for (const auto& st : streams_) out.push_back(&st->queue);
    return out;
  }
  std::uint64_t read() const {
    std::uint64_t n = 0;
    for (const auto& st : streams_) n += st->read.load(std::memory_order_relaxed);
    return n;
  }

 private:
  std::vector<std::unique_ptr<Stream>> streams_;
};

// A location's events as ranges of whole chunks, from its event file's chunk headers, when they
// number its events 1, 2, ... up to its definition's count without a gap (else empty: the
// location is read from its start, where OTF2 finds whatever damage there is).
std::vector<EventRange> chunk_ranges(const std::vector<EventRange>& chunks, std::uint64_t events) {
  std::uint64_t next = 1;
  for (const EventRange& c : chunks) {
    if (c.first != next || c.count == 0 || c.count > events) return {};
    next += c.count;
  }
  if (next != events + 1) return {};
  return chunks;
}

}  // namespace

void ArchiveReader::read_events(EventSink& sink,
                                const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  Impl& s = *impl_;
  auto incomplete = [&](const std::string& what) {
    throw ArchiveError(fmt::format(
        "{}: {}{}. The archive is incomplete or damaged; trace the "
        "program again.",
        anchor_, what, last_otf2_error().empty() ? "" : " (" + last_otf2_error() + ")"));
  };
  // Names the damaged event file when it can be found, else says what `what` says.
  auto events_damaged = [&](const std::string& what) {
    const std::string where = locate_event_damage(anchor_, defs_, s);
    if (where.empty()) incomplete(what);
    throw ArchiveError(where + ". The archive cannot be read: trace the program again.");
  };
  std::uint64_t event_chunk = 0, definition_chunk = 0;
  if (OTF2_Reader_GetChunkSize(s.reader, &event_chunk, &definition_chunk) != OTF2_SUCCESS ||
      event_chunk == 0)
    incomplete("the anchor file gives no chunk size for the event files");
  // The locations read: all, or set_locations' share.
  std::vector<std::uint32_t> reading = s.only;
  if (reading.empty())
    for (std::uint32_t i = 0; i < defs_.locations.size(); ++i) reading.push_back(i);
  std::vector<std::vector<EventRange>> chunks(defs_.locations.size());
  for (const std::uint32_t i : reading) {
    const LocationDef& l = defs_.locations[i];
    check_file(s.event_file(l.id), event_chunk, "events", &chunks[i]);
    check_file(s.local_definitions_file(l.id), 0, "local definitions");
  }

  // The sinks see the records through a PipelinedSink's own batches when they are given one
  // (no call per event on this side), else each as its callback.
  EventSequencer sequencer(defs_);
  auto* pipeline = dynamic_cast<PipelinedSink*>(&sink);
  ReplayInto replay(sink);
  EventBatch own;
  BatchWriter own_writer(&own, &replay);
  BatchWriter& out = pipeline != nullptr ? pipeline->writer() : own_writer;
  BatchConsumer& next = pipeline != nullptr ? static_cast<BatchConsumer&>(*pipeline)
                                            : static_cast<BatchConsumer&>(replay);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads =
      std::min(s.reading_threads != 0 ? s.reading_threads : cores, kMaxReadingThreads);
  std::uint64_t total = 0;
  for (const std::uint32_t i : reading)  // saturates, as Definitions::total_events does
    total =
        defs_.locations[i].events > ~total ? ~std::uint64_t{0} : total + defs_.locations[i].events;
  // The events of `locations` read on this thread: in the archive's order already.
  auto read_here = [&](std::vector<std::uint32_t> locations) {
    SequenceInPlace in_place(sequencer, next);
    out.reset(out.batch(), &in_place);
    struct Restore {
      BatchWriter& out;
      BatchConsumer& next;
      ~Restore() { out.reset(out.batch(), &next); }
    } restore{out, next};
    EventDecoder decoder(s.setup, std::move(locations));
    decoder.run(out, [&](std::uint64_t n) { progress(n, total); });
    out.flush();
  };
  // Where one location holds every event (a single rank and thread), threads take its chunks
  // in turn; else each reads a share of the locations.
  std::vector<std::uint32_t> with_events, without_events;
  for (const std::uint32_t i : reading)
    (defs_.locations[i].events > 0 ? with_events : without_events).push_back(i);
  std::vector<EventRange> ranges;
  if (threads > 1 && with_events.size() == 1)
    ranges = chunk_ranges(chunks[with_events.front()], defs_.locations[with_events.front()].events);
  if (ranges.size() < 2) ranges.clear();
  std::vector<std::vector<std::uint32_t>> parts;
  if (ranges.empty()) parts = share_locations(defs_, reading, threads);
  s.threads_used = static_cast<unsigned>(
      ranges.empty() ? parts.size() : std::min<std::size_t>(threads, ranges.size()));
  // With reading threads, this thread hands the records on in order: replayed into the sink
  // here, or copied into a PipelinedSink's batches for its thread. When that thread would find
  // no core of its own (the reading threads and this one take them all), this one replays into
  // the pipeline's sink itself: no copy, and one thread fewer to share the cores.
  auto merged_output = [&] {
    MergedOutput merged;
    if (pipeline == nullptr) {
      merged.sink = &sink;
    } else if (s.threads_used + 2 > cores && pipeline->untouched()) {
      merged.sink = &pipeline->next();
    } else {
      merged.out = &out;
    }
    return merged;
  };
  progress(0, total);
  try {
    if (!ranges.empty()) {
      // Locations without events must have none: read before, they give no records.
      if (!without_events.empty()) read_here(without_events);
      std::vector<ReadingThreads::Work> works(s.threads_used);
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        ReadingThreads::Work& work = works[r % works.size()];
        work.locations = {with_events.front()};
        work.ranges.push_back(ranges[r]);
      }
      ReadingThreads reading(s.setup, std::move(works));
      concatenate_ranges(reading.queues(), ranges.size(), sequencer, merged_output(),
                         [&] { progress(std::min(reading.read(), total), total); });
      out.flush();
    } else if (parts.size() == 1) {
      read_here(std::move(parts.front()));
    } else {
      std::vector<ReadingThreads::Work> works;
      for (auto& part : parts) works.push_back({std::move(part), {}});
      ReadingThreads reading(s.setup, std::move(works));
      std::vector<std::uint64_t> ids;
      for (const LocationDef& l : defs_.locations) ids.push_back(l.id);
      merge_streams(reading.queues(), ids, sequencer, merged_output(),
                    [&] { progress(std::min(reading.read(), total), total); });
      out.flush();
    }
  } catch (const EventFilesDamaged& e) {
    // Every reading thread has stopped: the files can be read once more to find the damage.
    events_damaged(e.what());
  }
  progress(total, total);
}

}  // namespace perusetrace::archive
