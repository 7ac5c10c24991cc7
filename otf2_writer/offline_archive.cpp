// The archive written by one process for all ranks (`perusetrace recover`), with OTF2's serial
// collectives: the same streams, unification and definitions as at MPI_Finalize.
#include <algorithm>
#include <memory>

#include "otf2_writer/internal.hpp"

namespace perusetrace::trace {

using namespace detail;

bool write_archive_offline(const ArchiveSpec& spec, const std::vector<OfflineRank>& ranks,
                           const RecordSource& read, std::string& error) {
  State& s = state();
  s.quiet_failures = true;
  s.archive = create_archive(spec, error);
  if (s.archive == nullptr) return false;
  auto give_up = [&](const std::string& what) {
    error = what;
    s.archive = nullptr;  // after a failed write OTF2 cannot close it safely
    return false;
  };
  OTF2_ErrorCode rc = OTF2_Archive_SetSerialCollectiveCallbacks(s.archive);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenEvtFiles(s.archive);
  if (rc != OTF2_SUCCESS)
    return give_up(std::string("cannot set up the OTF2 archive in ") + spec.directory + ": " +
                   OTF2_Error_GetDescription(rc) + ".");

  std::vector<RankReport> reports(ranks.size());
  constexpr std::size_t kBlock = 1 << 14;
  auto block = std::make_unique_for_overwrite<Record[]>(kBlock);  // filled by `read` before use
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    reports[r] = report_of(ranks[r].process);
    s.handle_opens.clear();
    for (std::uint32_t t = 0; t < std::max<std::uint32_t>(ranks[r].threads, 1); ++t) {
      Location* loc = open_stream(static_cast<int>(r), t);
      if (loc == nullptr) return give_up(s.first_failure);
      std::size_t n = 0;
      RankReport& report = reports[r];
      while (!s.failed && (n = read(static_cast<int>(r), t, block.get(), kBlock)) > 0) {
        encode(*loc, block.get(), n);
        // A rank that died has no end time of its own: its last record is its end; one whose
        // start was lost starts at its first record.
        report.end_time = std::max(report.end_time, block[n - 1].time);
        const std::uint64_t first = block[0].time;
        if (report.start_time == 0 || first < report.start_time) {
          const std::uint64_t earlier = report.start_time == 0 ? 0 : report.start_time - first;
          report.realtime_start -= std::min(report.realtime_start, earlier);
          report.start_time = first;
        }
      }
      close_location(loc);
      report.location_events.push_back(loc->events);
      delete loc;
      if (s.failed) return give_up(s.first_failure);
    }
    reports[r].handle_opens = std::move(s.handle_opens);
  }

  // The same unification as at MPI_Finalize, its tree walked by one process.
  Contribution all;
  std::vector<std::vector<CommId>> ids(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const ProcessInfo& p = ranks[r].process;
    Contribution c = contribution_of(static_cast<int>(r), reports[r], p, ids[r]);
    if (r == 0) {
      all = std::move(c);
    } else {
      merge(all, std::move(c));
    }
  }
  Unified unified = unified_of(std::move(all), spec.size, spec.comm_layout);
  const std::map<std::vector<int>, std::uint64_t> groups = rma_group_ids(unified);
  rc = write_other_job_streams(s.archive, unified, spec.size);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseEvtFiles(s.archive);
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_OpenDefFiles(s.archive);
  if (rc == OTF2_SUCCESS) rc = write_other_job_definitions(s.archive, unified, spec.size);
  std::uint64_t handle_base = 0;
  for (std::size_t r = 0; rc == OTF2_SUCCESS && r < ranks.size(); ++r) {
    const ProcessInfo& process = ranks[r].process;
    unified.comm_map = global_ids_of(ids[r], unified.comm_ids, OTF2_UNDEFINED_COMM);
    unified.handle_map = handle_map_of(process.files, handle_base);
    unified.file_map = global_ids_of(process.file_names, unified.file_ids, OTF2_UNDEFINED_IO_FILE);
    unified.metric_map = metric_map_of(process.metrics, unified.metric_ids);
    unified.context_map = global_ids_of(context_ids_of(process.contexts), unified.context_ids,
                                        OTF2_UNDEFINED_CALLING_CONTEXT);
    unified.region_map = region_map_of(spec, process.annotations, unified.annotation_ids);
    unified.window_map = global_ids_of(window_ids_of(static_cast<int>(r), process, ids[r]),
                                       unified.window_ids, OTF2_UNDEFINED_RMA_WIN);
    unified.group_map = global_ids_of(process.rma_groups, groups, OTF2_UNDEFINED_GROUP);
    unified.datatype_map = global_ids_of(datatype_ids_of(process.datatypes), unified.datatype_ids,
                                         OTF2_UNDEFINED_STRING);
    handle_base += process.files.size();
    for (std::size_t t = 0; t < unified.ranks[r].location_events.size(); ++t) {
      OTF2_DefWriter* defs = OTF2_Archive_GetDefWriter(
          s.archive, location_id(static_cast<int>(r), spec.size, static_cast<std::uint32_t>(t)));
      if (defs == nullptr) {
        rc = OTF2_ERROR_FILE_INTERACTION;
        break;
      }
      write_local_definitions(defs, unified);
      OTF2_Archive_CloseDefWriter(s.archive, defs);
    }
  }
  if (rc == OTF2_SUCCESS) rc = OTF2_Archive_CloseDefFiles(s.archive);
  if (rc == OTF2_SUCCESS) rc = set_unified_properties(s.archive, unified);
  if (rc == OTF2_SUCCESS) {
    OTF2_GlobalDefWriter* global = OTF2_Archive_GetGlobalDefWriter(s.archive);
    if (global == nullptr) {
      rc = OTF2_ERROR_FILE_INTERACTION;
    } else {
      write_global_definitions(global, spec, unified);
    }
  }
  const OTF2_ErrorCode closed = OTF2_Archive_Close(s.archive);
  s.archive = nullptr;
  if (rc == OTF2_SUCCESS) rc = closed;
  if (rc != OTF2_SUCCESS) {
    error = std::string("writing the OTF2 definitions failed: ") + OTF2_Error_GetDescription(rc) +
            ". " + write_remedy(spec.directory);
    return false;
  }
  return true;
}

}  // namespace perusetrace::trace
