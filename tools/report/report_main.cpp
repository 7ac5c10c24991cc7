#include "tools/report/report_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "analysis/archive_analysis.hpp"
#include "analysis/report_json.hpp"
#include "tools/common/command_line.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/tool_run.hpp"
#include "tools/report/html_output.hpp"
#include "tools/report/text_output.hpp"
#include "tools/report/timeline_builder.hpp"
#include "tools/report/timeline_data.hpp"

namespace {

constexpr const char* kUsage =
    R"(usage: perusetrace report ARCHIVE [--by ATTRIBUTE[,ATTRIBUTE]] [--json FILE] [--html FILE]

Analyses an OTF2 trace written by perusetrace and prints, first, what matters most; the wait
states (time in MPI calls spent waiting for another process: late sender, late receiver,
wait at barrier and N x N, ...) with the delays that caused them and the critical path; the
time in MPI per rank and function, the message matrix and the traffic within and between
hosts; and per message, per queue and per collective what its Peruse events show. Analyses whose Peruse events were not traced name the
setting to use. Traces that have them also get sections for one-sided communication (per
window and origin/target pair, time in synchronisation), MPI-IO (per file and rank),
datatypes (bytes per type, contiguous or packed), MPI_T values (their changes per rank and
MPI function, the control variables that differ or were set), spawned jobs and annotations
(docs/report.md).

  ARCHIVE        the trace directory (PROGRAM-trace) or its traces.otf2
  --by ATTRS     also the time in MPI per function, the messages and bytes sent and the
                 receives' posted-queue time per context: the values of these annotation attributes
                 (perusetrace/annotate.h) in force on the thread: NAME for the
                 program's own attribute, MODULE:NAME for a module's
  --json FILE    also write the report as JSON (docs/report-schema.md)
  --html FILE    also write one self-contained HTML page: an interactive timeline (MPI
                 calls, Peruse events, messages, queue depths; zoom and pan) with the
                 wait-state and queue tables that jump to each occurrence, and plots
  -q, --quiet    no progress bar
)";

using namespace perusetrace;

int run_report(const std::string& path, const std::string& by, const std::string& json,
               const std::string& html, bool quiet) {
  archive::ProgressBar bar(quiet);
  std::optional<report::timeline::TimelineBuilder> builder;  // the page's, only for --html
  report::ObserverFactory observe;
  if (!html.empty())
    observe = [&](const archive::Definitions& defs, const report::Report& report) {
      return &builder.emplace(defs, report);
    };
  const report::Report result = report::analyse_archive(path, by, bar, observe);
  const report::timeline::Timeline timeline =
      builder ? builder->take() : report::timeline::Timeline{};
  report::write_text(stdout, result);
  return tools::write_output_files("report",
                                   {{json, [&] { return report::to_json(result); }},
                                    {html, [&] { return report::to_html(result, timeline); }}});
}

}  // namespace

int report_main(int argc, char** argv) {
  std::string path, by, json, html;
  bool quiet = false;
  return tools::run_command("report", kUsage, argc, argv,
                            {{"", "--by", &by, nullptr},
                             {"", "--json", &json, nullptr},
                             {"", "--html", &html, nullptr},
                             {"-q", "--quiet", nullptr, &quiet}},
                            path, [&] { return run_report(path, by, json, html, quiet); });
}
