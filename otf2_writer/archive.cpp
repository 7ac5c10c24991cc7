// The archive's life: open (collective), one event stream per (rank, thread) with bounded
// memory that flushes to disk while the program runs, and a collective close that unifies and
// writes the definitions.
#include <mpi.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "internal.hpp"
#include "clock.hpp"

// The tracer sits on PMPI: OTF2's MPI collectives must not go through our own wrappers.
#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>
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

void fail(const std::string& what) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.failed.exchange(true)) return;
  std::fprintf(stderr, "perusetrace rank %d: %s\n", s.spec.rank, what.c_str());
}

namespace {

// OTF2 asks for chunks one at a time; past the per-buffer budget we return nothing, which makes
// OTF2 flush the buffer to disk and hand all its chunks back through free_all.
struct ChunkList {
  void* head = nullptr;
  std::size_t count = 0;
};

void* allocate_chunk(void*, OTF2_FileType type, OTF2_LocationRef, void** per_buffer,
                     std::uint64_t chunk_size) {
  auto* list = static_cast<ChunkList*>(*per_buffer);
  if (list == nullptr) {
    list = new (std::nothrow) ChunkList{};
    if (list == nullptr) return nullptr;
    *per_buffer = list;
  }
  const std::size_t budget = state().spec.otf2_memory_bytes / chunk_size;
  if (type == OTF2_FILETYPE_EVENTS && list->count >= (budget < 2 ? 2 : budget)) return nullptr;
  // Each chunk carries a link to the previous one in front of the part OTF2 uses.
  auto* raw = static_cast<void**>(std::malloc(chunk_size + sizeof(void*)));
  if (raw == nullptr) return nullptr;
  raw[0] = list->head;
  list->head = raw;
  ++list->count;
  return raw + 1;
}

void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* list = static_cast<ChunkList*>(*per_buffer);
  if (list == nullptr) return;
  while (list->head != nullptr) {
    void** chunk = static_cast<void**>(list->head);
    list->head = chunk[0];
    std::free(chunk);
  }
  list->count = 0;
  if (final) {
    delete list;
    *per_buffer = nullptr;
  }
}

// OTF2 would print several lines per failure; the tracer says it once, in its own words.
OTF2_ErrorCode quiet(void*, const char*, std::uint64_t, const char*, OTF2_ErrorCode code,
                     const char*, va_list) {
  return code;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}

const OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};
const OTF2_MemoryCallbacks kMemoryCallbacks = {allocate_chunk, free_chunks};

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
}  // namespace detail

using namespace detail;

bool open_archive(const ArchiveSpec& spec, std::string& error) {
  State& s = state();
  s.spec = spec;
  OTF2_Error_RegisterCallback(quiet, nullptr);
  s.archive = OTF2_Archive_Open(spec.directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (s.archive == nullptr) {
    error = "cannot create the OTF2 archive in " + spec.directory +
            ": check that its parent directory exists and is writable, or set MPITRACE_OUTPUT "
            "to another place.";
    return false;
  }
  OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(s.archive, &kFlushCallbacks, nullptr);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetMemoryCallbacks(s.archive, &kMemoryCallbacks, nullptr);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_MPI_Archive_SetCollectiveCallbacks(s.archive, MPI_COMM_WORLD, MPI_COMM_NULL);
  if (rc == OTF2_SUCCESS) rc = OTF2_Pthread_Archive_SetLockingCallbacks(s.archive, nullptr);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetCreator(s.archive, "perusetrace " PERUSETRACE_VERSION);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetDescription(s.archive, "MPI calls and Open MPI Peruse events");
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Archive_SetProperty(s.archive, "PERUSETRACE::SETTINGS", spec.settings.c_str(), true);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenEvtFiles(s.archive);
  if (rc != OTF2_SUCCESS) {
    error = std::string("cannot set up the OTF2 archive in ") + spec.directory + ": " +
            OTF2_Error_GetDescription(rc) +
            ". Check free space and permissions there, or set MPITRACE_OUTPUT elsewhere.";
    OTF2_Archive_Close(s.archive);
    s.archive = nullptr;
    return false;
  }
  return true;
}

void* open_location(std::uint32_t thread_index) noexcept {
  State& s = state();
  if (s.archive == nullptr || s.failed) return nullptr;
  auto* loc = new (std::nothrow) Location{};
  if (loc == nullptr) return nullptr;
  loc->thread_index = thread_index;
  loc->id = location_id(s.spec.rank, s.spec.size, thread_index);
  loc->writer = OTF2_Archive_GetEvtWriter(s.archive, loc->id);
  loc->attributes = OTF2_AttributeList_New();
  if (loc->writer == nullptr || loc->attributes == nullptr) {
    fail("cannot open the OTF2 event stream of thread " + std::to_string(thread_index) +
         "; this thread is not traced.");
    delete loc;
    return nullptr;
  }
  std::lock_guard lock(s.mutex);
  if (s.locations.size() <= thread_index) s.locations.resize(thread_index + 1, nullptr);
  s.locations[thread_index] = loc;
  return loc;
}

void write(void* location, const Record* records, std::size_t count) noexcept {
  State& s = state();
  if (location == nullptr || count == 0 || s.failed) return;
  // Files already open keep accepting writes after their directory is removed, and the trace
  // would vanish without a word: look once per drain (a buffer's worth of records).
  if (::access(s.spec.directory.c_str(), W_OK | X_OK) != 0) {
    fail("the output directory " + s.spec.directory +
         " is gone or no longer writable. Tracing stops here and the program goes on; set "
         "MPITRACE_OUTPUT to a directory that stays for the whole run.");
    return;
  }
  encode(*static_cast<Location*>(location), records, count);
}

void close_location(void* location) noexcept {
  auto* loc = static_cast<Location*>(location);
  if (loc == nullptr || loc->closed) return;
  loc->closed = true;
  // After a failed write OTF2's buffers are in no state to be flushed again: closing the
  // writer would crash the program. The writer is left as it is.
  if (state().failed) return;
  OTF2_EvtWriter_GetNumberOfEvents(loc->writer, &loc->events);
  // Closing flushes what OTF2 still holds; later records of this thread have nowhere to go.
  if (OTF2_Archive_CloseEvtWriter(state().archive, loc->writer) != OTF2_SUCCESS)
    fail("writing the last events of thread " + std::to_string(loc->thread_index) +
         " failed (disk full or output directory gone?). Free space there or set "
         "MPITRACE_OUTPUT elsewhere.");
  loc->writer = nullptr;
  OTF2_AttributeList_Delete(loc->attributes);
  loc->attributes = nullptr;
}

bool close_archive(const ProcessInfo& process, std::string& error) {
  State& s = state();
  if (s.archive == nullptr) return false;
  // Every step below is collective: all ranks go on only if none of them failed to write.
  int failed = s.failed ? 1 : 0, any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed) {
    error = "the trace in " + s.spec.directory +
            " is incomplete: writing failed on at least one rank (see above), so its "
            "definitions were not written.";
    s.archive = nullptr;  // OTF2 cannot close it safely after the failure: left as it is
    return false;
  }

  RankReport mine;
  mine.host = process.host;
  mine.start_time = process.start_time;
  mine.end_time = process.end_time;
  mine.realtime_start = process.realtime_start;
  {
    std::lock_guard lock(s.mutex);
    for (Location* loc : s.locations) mine.location_events.push_back(loc ? loc->events : 0);
  }
  if (mine.location_events.empty()) mine.location_events.push_back(0);

  const Unified unified = unify(process, mine);

  OTF2_ErrorCode rc = OTF2_Archive_CloseEvtFiles(s.archive);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenDefFiles(s.archive);
  // Every location gets its local definitions: the communicator mapping and clock offsets.
  for (std::size_t t = 0; rc == OTF2_SUCCESS && t < mine.location_events.size(); ++t) {
    OTF2_DefWriter* defs = OTF2_Archive_GetDefWriter(
        s.archive, location_id(s.spec.rank, s.spec.size, static_cast<std::uint32_t>(t)));
    if (defs == nullptr) break;
    write_mapping(defs, OTF2_MAPPING_COMM, unified.comm_map);
    write_mapping(defs, OTF2_MAPPING_IO_HANDLE, unified.handle_map);
    for (std::size_t i = 0; i < process.clock_offsets.size(); ++i) {
      OTF2_DefWriter_WriteClockOffset(defs, process.clock_offsets[i].first,
                                      process.clock_offsets[i].second,
                                      process.clock_offset_errors[i]);
    }
    OTF2_Archive_CloseDefWriter(s.archive, defs);
  }
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseDefFiles(s.archive);
  if (rc == OTF2_SUCCESS && s.spec.rank == 0) {
    OTF2_GlobalDefWriter* global = OTF2_Archive_GetGlobalDefWriter(s.archive);
    if (global == nullptr) {
      rc = OTF2_ERROR_FILE_INTERACTION;
    } else {
      write_global_definitions(global, s.spec, unified);
    }
  }
  const OTF2_ErrorCode closed = OTF2_Archive_Close(s.archive);
  s.archive = nullptr;
  if (rc == OTF2_SUCCESS) rc = closed;
  if (rc != OTF2_SUCCESS) {
    error = std::string("closing the OTF2 archive failed: ") + OTF2_Error_GetDescription(rc) +
            ". Check free space in " + s.spec.directory + ".";
    return false;
  }
  return !s.failed;
}

bool failed() noexcept {
  return state().failed.load(std::memory_order_relaxed);
}

}  // namespace perusetrace::trace
