// The archive written by the ranks themselves at MPI_Finalize: opened and closed collectively
// over MPI_COMM_WORLD, each rank writing its own locations and rank 0 the global definitions.
#include <mpi.h>

#include "otf2_writer/internal.hpp"

// The tracer sits on PMPI: OTF2's MPI collectives must not go through our own wrappers.
#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>

namespace perusetrace::trace {

using namespace detail;

bool open_archive(const ArchiveSpec& spec, std::string& error) {
  State& s = state();
  s.quiet_failures = spec.quiet_failures;
  s.archive = create_archive(spec, error);
  if (s.archive == nullptr) return false;
  OTF2_ErrorCode rc =
      OTF2_MPI_Archive_SetCollectiveCallbacks(s.archive, MPI_COMM_WORLD, MPI_COMM_NULL);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenEvtFiles(s.archive);
  if (rc != OTF2_SUCCESS) {
    error = std::string("cannot set up the OTF2 archive in ") + spec.directory + ": " +
            OTF2_Error_GetDescription(rc) + ". Check free space and permissions there.";
    OTF2_Archive_Close(s.archive);
    s.archive = nullptr;
    return false;
  }
  return true;
}

bool close_archive(const ProcessInfo& process, std::string& error) {
  State& s = state();
  if (s.archive == nullptr) return false;
  // Every step below is collective: all ranks go on only if none of them failed to write.
  int failed = s.failed ? 1 : 0, any_failed = 0;
  PMPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_failed) {
    error = "writing the OTF2 archive in " + s.spec.directory +
            " failed on at least one rank (see above), so its definitions were not written.";
    s.archive = nullptr;  // OTF2 cannot close it safely after the failure: left as it is
    return false;
  }

  RankReport mine = report_of(process);
  {
    std::lock_guard lock(s.mutex);
    for (Location* loc : s.locations) mine.location_events.push_back(loc ? loc->events : 0);
  }
  if (mine.location_events.empty()) mine.location_events.push_back(0);
  mine.handle_opens = s.handle_opens;

  const Unified unified = unify(process, mine);

  // Rank 0 alone knows the other jobs' processes; their streams are empty.
  OTF2_ErrorCode rc =
      s.spec.rank == 0 ? write_other_job_streams(s.archive, unified, s.spec.size) : OTF2_SUCCESS;
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseEvtFiles(s.archive);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenDefFiles(s.archive);
  if (rc == OTF2_SUCCESS && s.spec.rank == 0)
    rc = write_other_job_definitions(s.archive, unified, s.spec.size);
  // Every location gets its local definitions: the communicator mapping and clock offsets.
  for (std::size_t t = 0; rc == OTF2_SUCCESS && t < mine.location_events.size(); ++t) {
    OTF2_DefWriter* defs = OTF2_Archive_GetDefWriter(
        s.archive, location_id(s.spec.rank, s.spec.size, static_cast<std::uint32_t>(t)));
    if (defs == nullptr) break;
    write_local_definitions(defs, unified);
    OTF2_Archive_CloseDefWriter(s.archive, defs);
  }
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseDefFiles(s.archive);
  if (rc == OTF2_SUCCESS && s.spec.rank == 0) rc = set_unified_properties(s.archive, unified);
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
            ". " + write_remedy(s.spec.directory);
    return false;
  }
  return !s.failed;
}

}  // namespace perusetrace::trace
