// The processes of other MPI jobs in this archive: locations, measured nowhere here, that the
// intercommunicators to those jobs name as members (docs/otf2-mapping.md, "Dynamic processes").
#include <algorithm>

#include "otf2_writer/internal.hpp"
#include "events/value_names.hpp"

namespace perusetrace::trace::detail {

namespace {

const char* relation_name(JobRelation r) {
  return name_in(r, {{JobRelation::Spawned, "spawned"}, {JobRelation::Parent, "parent"}},
                 "connected");
}

}  // namespace

std::uint32_t other_job_processes(const Unified& unified) {
  std::uint32_t n = 0;
  for (const UnifiedJob& job : unified.jobs) n += static_cast<std::uint32_t>(job.ranks.size());
  return n;
}

std::uint64_t other_job_location(const std::vector<RankReport>& ranks, int size, std::uint32_t i) {
  std::size_t threads = 1;
  for (const RankReport& r : ranks) threads = std::max(threads, r.location_events.size());
  return location_id(0, size, static_cast<std::uint32_t>(threads)) + i;
}

OTF2_ErrorCode write_other_job_streams(OTF2_Archive* archive, const Unified& unified, int size) {
  // The archive's first moment (ClockProperties start there): measurement is off on these
  // locations for the whole trace, which says what they are, and makes their streams non-empty.
  std::uint64_t start = UINT64_MAX;
  for (const RankReport& r : unified.ranks) start = std::min(start, r.start_time);
  if (start == UINT64_MAX) start = 0;
  for (std::uint32_t i = 0, n = other_job_processes(unified); i < n; ++i) {
    OTF2_EvtWriter* w =
        OTF2_Archive_GetEvtWriter(archive, other_job_location(unified.ranks, size, i));
    if (w == nullptr) return OTF2_ERROR_FILE_INTERACTION;
    static_assert(kOtherJobEvents == 1);
    OTF2_ErrorCode rc = OTF2_EvtWriter_MeasurementOnOff(w, nullptr, start, OTF2_MEASUREMENT_OFF);
    const OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(archive, w);
    if (rc == OTF2_SUCCESS) rc = closed;
    if (rc != OTF2_SUCCESS) return rc;
  }
  return OTF2_SUCCESS;
}

OTF2_ErrorCode write_other_job_definitions(OTF2_Archive* archive, const Unified& unified,
                                           int size) {
  for (std::uint32_t i = 0, n = other_job_processes(unified); i < n; ++i) {
    OTF2_DefWriter* d =
        OTF2_Archive_GetDefWriter(archive, other_job_location(unified.ranks, size, i));
    if (d == nullptr) return OTF2_ERROR_FILE_INTERACTION;
    if (const OTF2_ErrorCode rc = OTF2_Archive_CloseDefWriter(archive, d); rc != OTF2_SUCCESS)
      return rc;
  }
  return OTF2_SUCCESS;
}

std::string jobs_text(const Unified& unified) {
  std::string text;
  for (const UnifiedJob& job : unified.jobs) {
    if (!text.empty()) text += ' ';
    text += "job=" + job.name + ";relation=" + relation_name(job.relation) +
            ";archive=" + (job.archive.empty() ? "-" : job.archive) +
            ";first_group=" + std::to_string(job.first) + ";ranks=";
    for (std::size_t i = 0; i < job.ranks.size(); ++i)
      text += (i ? "," : "") + std::to_string(job.ranks[i]);
  }
  return text;
}

}  // namespace perusetrace::trace::detail
