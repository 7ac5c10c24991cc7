#include "tools/export/perfetto.hpp"

#include <fmt/core.h>

#include <chrono>
#include <string>

#include "reader/archive_reader.hpp"
#include "reader/clock_repair.hpp"
#include "reader/other_jobs.hpp"
#include "reader/progress_bar.hpp"
#include "tools/common/analysis_group.hpp"
#include "tools/export/chrome_trace.hpp"
#include "tools/export/output_stream.hpp"
#include "tools/export/perfetto_parallel.hpp"
#include "tools/export/perfetto_summary.hpp"

namespace perusetrace::exporter {

int export_perfetto(const ExportRequest& request) {
  if (tools::analysis_group().parallel()) return export_perfetto_in_group(request);
  const auto began = std::chrono::steady_clock::now();
  archive::ArchiveReader reader(request.archive);
  const Definitions& defs = reader.definitions();
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
  if (!request.quiet) tell_done(defs, path, trace.counts(), began, out.bytes(), "");
  return 0;
}

}  // namespace perusetrace::exporter
