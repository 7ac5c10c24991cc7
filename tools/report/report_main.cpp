#include "tools/archive/output_file.hpp"
#include "tools/archive/tool_run.hpp"
#include "tools/report/report_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "tools/archive/command_line.hpp"
#include "tools/report/analysis.hpp"
#include "tools/report/context_analysis.hpp"
#include "tools/archive/archive_reader.hpp"
#include "tools/archive/clock_repair.hpp"
#include "tools/report/html_output.hpp"
#include "tools/report/json_output.hpp"
#include "tools/report/mpit_analysis.hpp"
#include "tools/report/text_output.hpp"

namespace {

constexpr const char* kUsage =
    R"(usage: perusetrace report ARCHIVE [--by ATTRIBUTE[,ATTRIBUTE]] [--json FILE] [--html FILE]

Analyses an OTF2 trace written by perusetrace and prints, per rank, per message, per wait
pattern (late sender, late receiver, late wait), per queue and per collective, what its
Peruse events show. Analyses whose Peruse events were not traced name the setting to use.
A trace with MPI_T values (MPITRACE_PVARS) also gets their changes per rank and per MPI
function, and the control variables that differ between ranks or were set.

  ARCHIVE        the trace directory (PROGRAM-trace) or its traces.otf2
  --by ATTRS     also the time in MPI per function, the messages and bytes sent and the
                 late-sender time per context: the values of these annotation attributes
                 (perusetrace/annotate.h) in force on the thread: NAME for the
                 program's own attribute, MODULE:NAME for a module's
  --json FILE    also write the report as JSON (docs/report-schema.md)
  --html FILE    also write one self-contained HTML page with plots
  -q, --quiet    no progress bar
)";

using namespace perusetrace;

bool write_file(const std::string& path, const std::string& content) {
  return archive::write_output_file("report", path, content);
}

int run_report(const std::string& path, const std::string& by, const std::string& json,
               const std::string& html, bool quiet) {
  archive::ArchiveReader reader(path);
  report::Report result;
  result.archive = reader.anchor();
  report::Analysis peruse_analysis(reader.definitions(), result);
  report::MpitAnalysis mpit_analysis(reader.definitions(), result);
  report::ContextAnalyses context_analysis(reader.definitions(), by, result);
  archive::TeeSink first_two(peruse_analysis, mpit_analysis);
  archive::TeeSink analysis(first_two, context_analysis);
  archive::ProgressBar bar(quiet);
  auto progress = [&](std::uint64_t done, std::uint64_t total) { bar(done, total); };
  // The clock condition is counted by the controlled logical clock's replay
  // (archive/clock_repair.hpp). On several clocks it runs as a first pass and the analysis sees
  // backwards receives moved after their send; on one clock nothing needs moving, and it reads
  // along with the analysis.
  archive::ClockRepair repair(reader.definitions());
  const bool several_clocks = archive::clock_domains(reader.definitions()) > 1;
  if (several_clocks) {
    archive::ArchiveReader first(path);
    first.read_events(repair, progress);
    repair.finish();
    bar.restart();
  }
  archive::RepairedSink repaired(repair.shifts(), analysis);
  archive::TeeSink counted(repair, analysis);
  archive::EventSink& sink = !several_clocks         ? static_cast<archive::EventSink&>(counted)
                             : repair.repaired() > 0 ? static_cast<archive::EventSink&>(repaired)
                                                     : analysis;
  reader.read_events(sink, progress);
  if (!several_clocks) repair.finish();
  bar.clear();
  peruse_analysis.finish();
  const bool moved = several_clocks && repair.repaired() > 0;
  result.clock = {repair.messages(),
                  repair.backwards(),
                  repair.worst_gap(),
                  repair.worst_sender(),
                  repair.worst_receiver(),
                  moved ? repair.repaired() : 0,
                  moved ? repair.max_shift() : 0};
  report::write_text(stdout, result);
  bool ok = true;
  if (!json.empty()) ok = write_file(json, report::to_json(result)) && ok;
  if (!html.empty()) ok = write_file(html, report::to_html(result)) && ok;
  return ok ? 0 : 1;
}

}  // namespace

int report_main(int argc, char** argv) {
  std::string path, by, json, html;
  bool quiet = false;
  const int rc = perusetrace::archive::parse_command_line("report", kUsage, argc, argv,
                                                          {{"", "--by", &by, nullptr},
                                                           {"", "--json", &json, nullptr},
                                                           {"", "--html", &html, nullptr},
                                                           {"-q", "--quiet", nullptr, &quiet}},
                                                          path);
  if (rc >= 0) return rc;
  return archive::run_tool("report", [&] { return run_report(path, by, json, html, quiet); });
}
