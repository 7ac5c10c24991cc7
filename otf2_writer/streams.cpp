// What both ways of writing an archive share (MPI_Finalize on every rank, `perusetrace recover`
// in one process): the writer's state, the archive and its settings, one event stream per
// (rank, thread), and each location's local definitions. OTF2's memory: chunk_memory.cpp;
// what a failure tells the user: failures.cpp.
#include <algorithm>
#include <cstdarg>
#include <new>

#include "otf2_writer/internal.hpp"
#include "record/archive_schema.hpp"

#include <otf2/OTF2_Pthread_Locks.h>

namespace perusetrace::trace {

namespace detail {

State& state() {
  static State s;
  return s;
}

std::uint64_t location_id(int rank, int size, std::uint32_t thread_index) {
  // Thread 0 of rank r is location r; further threads follow in blocks of `size`.
  return static_cast<std::uint64_t>(thread_index) * static_cast<std::uint64_t>(size) +
         static_cast<std::uint64_t>(rank);
}

namespace {

// OTF2 would print several lines per failure; the tracer says it once, in its own words.
OTF2_ErrorCode quiet(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code,
                     const char*, va_list) {
  return code;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}

const OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};

// With optimizeSize OTF2 returns no map at all for an identity mapping: none is needed then.
void write_mapping(OTF2_DefWriter* defs, OTF2_MappingType type,
                   const std::vector<std::uint64_t>& map) {
  if (map.empty()) return;
  OTF2_IdMap* id_map = OTF2_IdMap_CreateFromUint64Array(map.size(), map.data(), true);
  if (id_map == nullptr) return;
  OTF2_DefWriter_WriteMappingTable(defs, type, id_map);
  OTF2_IdMap_Free(id_map);
}

}  // namespace

OTF2_Archive* create_archive(const ArchiveSpec& spec, std::string& error) {
  State& s = state();
  s.spec = spec;
  s.failed = false;
  s.locations.clear();
  s.handle_opens.clear();
  OTF2_Error_RegisterCallback(quiet, nullptr);
  OTF2_Archive* archive =
      OTF2_Archive_Open(spec.directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                        4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (archive == nullptr) {
    error = "cannot create the OTF2 archive in " + spec.directory +
            ": check that it exists and is writable, or set MPITRACE_OUTPUT to another place.";
    return nullptr;
  }
  OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(archive, &kFlushCallbacks, nullptr);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetMemoryCallbacks(archive, &kChunkMemory, nullptr);
  if (rc == OTF2_SUCCESS) rc = OTF2_Pthread_Archive_SetLockingCallbacks(archive, nullptr);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_SetCreator(archive, "perusetrace " PERUSETRACE_VERSION);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetDescription(archive, "MPI calls and Open MPI Peruse events");
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetProperty(archive, kSettingsProperty, spec.settings.c_str(), true);
  if (rc != OTF2_SUCCESS) {
    error = std::string("cannot set up the OTF2 archive in ") + spec.directory + ": " +
            OTF2_Error_GetDescription(rc) + ".";
    OTF2_Archive_Close(archive);
    return nullptr;
  }
  return archive;
}

Location* open_stream(int rank, std::uint32_t thread_index) {
  State& s = state();
  if (s.archive == nullptr || s.failed) return nullptr;
  auto* loc = new (std::nothrow) Location{};
  if (loc == nullptr) return nullptr;
  loc->thread_index = thread_index;
  loc->id = location_id(rank, s.spec.size, thread_index);
  loc->writer = OTF2_Archive_GetEvtWriter(s.archive, loc->id);
  loc->attributes = OTF2_AttributeList_New();
  if (loc->writer == nullptr || loc->attributes == nullptr) {
    fail("cannot open the OTF2 event stream of rank " + std::to_string(rank) + " thread " +
         std::to_string(thread_index) + ".");
    if (loc->attributes != nullptr) OTF2_AttributeList_Delete(loc->attributes);
    delete loc;
    return nullptr;
  }
  return loc;
}

void write_local_definitions(OTF2_DefWriter* defs, const Unified& unified) {
  // No ClockOffset definitions: the events' times are already on the global clock
  // (record/global_clock.hpp), and a reader would apply offsets a second time.
  write_mapping(defs, OTF2_MAPPING_COMM, unified.comm_map);
  write_mapping(defs, OTF2_MAPPING_IO_HANDLE, unified.handle_map);
  write_mapping(defs, OTF2_MAPPING_IO_FILE, unified.file_map);
  if (unified.metric_map.size() > kFirstPvarMetric)
    write_mapping(defs, OTF2_MAPPING_METRIC, unified.metric_map);
  write_mapping(defs, OTF2_MAPPING_CALLING_CONTEXT, unified.context_map);
  write_mapping(defs, OTF2_MAPPING_REGION, unified.region_map);
  write_mapping(defs, OTF2_MAPPING_RMA_WIN, unified.window_map);
  write_mapping(defs, OTF2_MAPPING_GROUP, unified.group_map);
  // Event attributes name datatypes by local String refs: the rank's local datatype ids.
  write_mapping(defs, OTF2_MAPPING_STRING, unified.datatype_map);
}

// "a\nb\n" -> "a; b": otf2-print shows a property's first line only. An item's own ';'
// becomes ',' so that the items can be told apart.
std::string one_line_items(const std::string& lines) {
  std::string out;
  for (std::size_t at = 0, end; at < lines.size(); at = end + 1) {
    end = std::min(lines.find('\n', at), lines.size());
    std::string item = lines.substr(at, end - at);
    std::replace(item.begin(), item.end(), ';', ',');
    if (!item.empty()) out += (out.empty() ? "" : "; ") + item;
  }
  return out;
}

OTF2_ErrorCode set_unified_properties(OTF2_Archive* archive, const Unified& unified) {
  OTF2_ErrorCode rc = OTF2_Archive_SetProperty(archive, kArchiveVersionProperty,
                                               std::to_string(kArchiveVersion).c_str(), true);
  if (rc != OTF2_SUCCESS) return rc;
  rc = OTF2_Archive_SetProperty(archive, kClockDomainsProperty,
                                clock_domains_text(unified.ranks).c_str(), true);
  if (unified.ranks.empty()) return rc;
  // MPI_T's control variables: rank 0's, then every other rank's that differ from them.
  std::string differ;
  for (std::size_t r = 1; r < unified.ranks.size(); ++r) {
    const std::string& lines = unified.ranks[r].cvars;
    for (std::size_t at = 0, end; at < lines.size(); at = end + 1) {
      end = std::min(lines.find('\n', at), lines.size());
      differ += std::to_string(r) + ' ' + lines.substr(at, end - at) + '\n';
    }
  }
  const std::pair<const char*, const std::string*> texts[] = {
      {kCvarsProperty, &unified.ranks[0].cvars},
      {kCvarsDifferProperty, &differ},
      {kCvarsSetProperty, &unified.ranks[0].cvars_set}};
  for (const auto& [name, text] : texts)
    if (rc == OTF2_SUCCESS && !text->empty())
      rc = OTF2_Archive_SetProperty(archive, name, one_line_items(*text).c_str(), true);
  if (rc == OTF2_SUCCESS && !unified.jobs.empty())
    rc = OTF2_Archive_SetProperty(archive, kJobsProperty, jobs_text(unified).c_str(), true);
  std::string cuts;
  for (std::size_t r = 0; r < unified.ranks.size(); ++r)
    if (unified.ranks[r].cut_time != 0)
      cuts += (cuts.empty() ? "" : " ") + std::to_string(r) + '=' +
              std::to_string(unified.ranks[r].cut_time);
  if (rc == OTF2_SUCCESS && !cuts.empty())
    rc = OTF2_Archive_SetProperty(archive, kRecordingCutProperty, cuts.c_str(), true);
  return rc;
}

}  // namespace detail

using namespace detail;

void* open_location(std::uint32_t thread_index) noexcept {
  State& s = state();
  Location* loc = open_stream(s.spec.rank, thread_index);
  if (loc == nullptr) return nullptr;
  std::lock_guard lock(s.mutex);
  if (s.locations.size() <= thread_index) s.locations.resize(thread_index + 1, nullptr);
  s.locations[thread_index] = loc;
  return loc;
}

void write(void* location, const Record* records, std::size_t count) noexcept {
  if (location == nullptr || count == 0 || state().failed) return;
  encode(*static_cast<Location*>(location), records, count);
}

void close_location(void* location) noexcept {
  auto* loc = static_cast<Location*>(location);
  if (loc == nullptr || loc->closed) return;
  loc->closed = true;
  // After a failed write OTF2's buffers are in no state to be flushed again: closing the
  // writer would crash the program. The writer is left as it is.
  if (state().failed) return;
  if (end_annotations(*loc) != OTF2_SUCCESS) {
    fail("writing the end of thread " + std::to_string(loc->thread_index) +
         "'s open annotations failed. " + write_remedy(state().spec.directory));
    return;
  }
  OTF2_EvtWriter_GetNumberOfEvents(loc->writer, &loc->events);
  // Closing flushes what OTF2 still holds.
  if (OTF2_Archive_CloseEvtWriter(state().archive, loc->writer) != OTF2_SUCCESS)
    fail("writing the last events of thread " + std::to_string(loc->thread_index) + " failed. " +
         write_remedy(state().spec.directory));
  loc->writer = nullptr;
  OTF2_AttributeList_Delete(loc->attributes);
  loc->attributes = nullptr;
}

bool failed() noexcept {
  return state().failed.load(std::memory_order_relaxed);
}

}  // namespace perusetrace::trace
