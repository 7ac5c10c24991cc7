#include "tools/export/perfetto.hpp"

#include <fmt/core.h>

#include <chrono>
#include <string>

#include "reader/archive_reader.hpp"
#include "reader/clock_repair.hpp"
#include "reader/other_jobs.hpp"
#include "reader/progress_bar.hpp"
#include "tools/common/analysis_group.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/export/chrome_trace.hpp"
#include "tools/export/output_stream.hpp"
#include "tools/export/perfetto_parallel.hpp"
#include "tools/export/perfetto_summary.hpp"

namespace perusetrace::exporter {

// In one process, or as the one rank of `--np 1` (its halves would only travel to itself).
int export_perfetto(const ExportRequest& request) {
  tools::AnalysisGroup& group = tools::analysis_group();
  if (group.size() > 1) return export_perfetto_in_group(request);
  const auto began = std::chrono::steady_clock::now();
  const std::uint64_t read_before = tools::bytes_read_so_far();
  archive::ArchiveReader reader(request.archive);
  const Definitions& defs = reader.definitions();
  tools::ShareStats share;  // for --analysis-stats
  share.ranks = defs.ranks.size();
  share.locations = defs.locations.size();
  share.events = defs.total_events;
  const std::string path =
      request.output.empty() ? default_output(reader.anchor(), ".perfetto.json") : request.output;
  archive::ProgressBar bar(request.quiet);
  auto progress = [&](std::uint64_t done, std::uint64_t total) { bar(done, total); };
  // Hosts whose clocks still disagree: receives before their send move after it first, as the
  // report and the Paraver converter do (reader/clock_repair.hpp).
  archive::ClockRepair repair(defs);
  if (archive::clock_domains(defs) > 1) {
    archive::ArchiveReader first(request.archive);
    first.read_events(repair, progress);
    repair.finish();
    bar.restart();
  }
  OutputStream out(path);
  ChromeTrace trace(defs, out);
  archive::RepairedSink repaired(repair.shifts(), trace);
  archive::EventSink& sink =
      repair.repaired() > 0 ? static_cast<archive::EventSink&>(repaired) : trace;
  trace.start();
  reader.read_events(sink, progress);
  share.bytes_read = tools::bytes_read_so_far() - read_before;
  share.pass_cpu_s = tools::cpu_seconds();
  trace.finish(reader.anchor());
  out.close();
  bar.clear();

  tell_about_messages(defs, reader.anchor(), trace.counts());
  if (repair.repaired() > 0)
    fmt::print(stderr,
               "perusetrace export: {} of {} messages were received before they were sent: the "
               "hosts' clocks disagree by more than measured. {} receives, each with the later "
               "events of its thread, were moved to just after their send (largest move "
               "{:.3f} us).\n",
               repair.backwards(), repair.messages(), repair.repaired(),
               static_cast<double>(repair.max_shift()) / 1e3);
  if (!request.quiet)
    tell_done(defs, path, trace.counts(), began, out.bytes(),
              group.parallel() ? " (1 analysis rank)" : "");
  if (!request.analysis_stats.empty() &&
      !tools::write_output_file(
          "export", request.analysis_stats,
          tools::stats_file(group.gather_stats(tools::stats_json(share, group)), 1)))
    return 1;
  return 0;
}

}  // namespace perusetrace::exporter
