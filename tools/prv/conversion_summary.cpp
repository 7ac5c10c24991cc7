#include "tools/prv/conversion_summary.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>

#include "reader/other_jobs.hpp"
#include "tools/prv/metric_types.hpp"
#include "tools/prv/prv_codes.hpp"

namespace perusetrace::prv {

std::string ConversionCounts::text() const {
  return fmt::format("{} {} {} {} {} {} {} {}", records, latest, matched, unmatched_sends,
                     unmatched_recvs, with_other_jobs, late_physical_sends, clock_breaks);
}

ConversionCounts ConversionCounts::parse(const std::string& text) {
  ConversionCounts c;
  unsigned long long v[8] = {};
  if (std::sscanf(text.c_str(), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                  &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
    throw ConvertError("an analysis rank sent counts that are not eight numbers: '" + text + "'");
  c.records = v[0], c.latest = v[1], c.matched = v[2], c.unmatched_sends = v[3];
  c.unmatched_recvs = v[4], c.with_other_jobs = v[5], c.late_physical_sends = v[6];
  c.clock_breaks = v[7];
  return c;
}

void ConversionCounts::add(const ConversionCounts& o) {
  records += o.records;
  latest = std::max(latest, o.latest);
  matched += o.matched;
  unmatched_sends += o.unmatched_sends;
  unmatched_recvs += o.unmatched_recvs;
  with_other_jobs += o.with_other_jobs;
  late_physical_sends += o.late_physical_sends;
  clock_breaks += o.clock_breaks;
}

ConversionCounts counts_of(const PrvWriter& prv, const archive::MessageMatcher& m) {
  ConversionCounts c;
  c.records = prv.records();
  c.latest = prv.latest_time();
  c.matched = m.matched();
  c.unmatched_sends = m.unmatched_sends();
  c.unmatched_recvs = m.unmatched_recvs();
  c.with_other_jobs = m.with_other_jobs();
  c.late_physical_sends = m.late_physical_sends();
  c.clock_breaks = m.clock_breaks();
  return c;
}

namespace {

// Each MPI job of a run with dynamic processes is an archive, and a Paraver trace, of its own.
void tell_other_jobs(const Definitions& defs, const std::string& anchor, std::uint64_t messages) {
  if (defs.jobs.empty()) return;
  std::string jobs;
  for (const archive::JobDef& job : defs.jobs) {
    const std::string path = archive::job_archive(anchor, job);
    jobs += fmt::format("\n  {} ({}): {}", job.name, archive::job_relation_text(job.relation),
                        path.empty()                        ? "archive not known"
                        : archive::job_archive_exists(path) ? path
                                                            : path + " (not found)");
  }
  fmt::print(stderr,
             "perusetrace prv: this trace is one MPI job of several; {} sends and receives with "
             "the others have their partner in those jobs' own archives and no communication "
             "record here. Convert them on their own:{}\n",
             messages, jobs);
}

}  // namespace

void tell_about_messages(const Definitions& defs, const std::string& anchor,
                         const ConversionCounts& c, bool quiet) {
  if (const std::size_t dropped = mpit_metrics_dropped(defs); dropped > 0)
    fmt::print(stderr,
               "perusetrace prv: the trace has {} more MPI_T values than the {} event types "
               "set aside for them; the last ones are left out. Trace fewer (MPITRACE_PVARS).\n",
               dropped, kTypeMpitLast - kTypeMpitFirst + 1);
  if (c.unmatched_sends + c.unmatched_recvs > 0)
    fmt::print(stderr,
               "perusetrace prv: {} sends and {} receives found no partner in the trace "
               "(cancelled, or the program stopped before they completed); they have no "
               "communication record.\n",
               c.unmatched_sends, c.unmatched_recvs);
  if (!quiet || c.with_other_jobs > 0) tell_other_jobs(defs, anchor, c.with_other_jobs);
  if (c.late_physical_sends > 0)
    fmt::print(stderr,
               "perusetrace prv: {} sends reported REQ_XFER_BEGIN after their message was "
               "received (Open MPI reports an eager send's when the send completes, which a "
               "descheduled sender reaches late); their physical send is the logical one.\n",
               c.late_physical_sends);
}

}  // namespace perusetrace::prv
