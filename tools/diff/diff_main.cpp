#include "tools/diff/diff_main.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/common/output_file.hpp"
#include "tools/common/tool_run.hpp"
#include "tools/diff/comparison.hpp"
#include "tools/diff/diff_output.hpp"
#include "tools/diff/report_summary.hpp"

namespace {

constexpr const char* kUsage =
    R"(usage: perusetrace diff A B [--json FILE] [--threshold PERCENT] [--min-time DURATION]

Compares the reports of two traces, A before and B after a change (a control variable, the
code, the machine): the time in MPI per function (total over the ranks and mean per rank),
the wait states (late sender, late receiver, wait at barrier, ... per pattern), Peruse's
queue measures (receives in the posted queue, messages in the unexpected queue, requests
complete before their Wait), the bandwidth per message-size class and the message counts, each with
its absolute and relative change. '!' marks a significant change (docs/diff.md).

  A, B           each a trace directory (PROGRAM-trace), its traces.otf2, or a report's JSON
                 (perusetrace report ARCHIVE --json FILE); an archive is analysed as
                 `perusetrace report` does
  --json FILE    also write the comparison as JSON (docs/diff.md)
  --threshold PERCENT
                 a change is significant from this share of A's value on (default 10)
  --min-time DURATION
                 ... and, for times, from this much on, e.g. 500us, 2ms, 1s (default 1ms)
  -q, --quiet    no progress bar
)";

int usage_error(const std::string& why) {
  fmt::print(stderr, "perusetrace diff: {}\n\n{}", why, kUsage);
  return 2;
}

// "2ms", "500us", "1s", "250ns", "0": a duration in ns, or false.
bool parse_duration(const std::string& text, std::uint64_t& ns) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v >= 0) || !std::isfinite(v)) return false;
  const std::string unit = end;
  const double scale = unit == "s"                                ? 1e9
                       : unit == "ms"                             ? 1e6
                       : unit == "us"                             ? 1e3
                       : unit == "ns" || (unit.empty() && v == 0) ? 1
                                                                  : -1;
  if (scale < 0) return false;
  ns = static_cast<std::uint64_t>(std::llround(v * scale));
  return true;
}

}  // namespace

int diff_main(int argc, char** argv) {
  using namespace perusetrace;
  std::vector<std::string> inputs;
  std::string json, threshold, min_time;
  bool quiet = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) return false;
      into = argv[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--json") {
      if (!value(json)) return usage_error("--json needs a file");
    } else if (arg == "--threshold") {
      if (!value(threshold)) return usage_error("--threshold needs a percentage");
    } else if (arg == "--min-time") {
      if (!value(min_time)) return usage_error("--min-time needs a duration");
    } else if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else {
      inputs.push_back(arg);
    }
  }
  if (inputs.size() != 2)
    return usage_error(
        fmt::format("two traces or reports to compare, A and B; {} given", inputs.size()));
  diff::Significance significance;
  if (!threshold.empty()) {
    char* end = nullptr;
    const double pct = std::strtod(threshold.c_str(), &end);
    if (end == threshold.c_str() || *end != '\0' || !(pct >= 0) || !std::isfinite(pct))
      return usage_error(fmt::format(
          "--threshold '{}' is not a percentage of 0 or more, e.g. --threshold 5", threshold));
    significance.relative = pct / 100;
  }
  if (!min_time.empty() && !parse_duration(min_time, significance.min_time_ns))
    return usage_error(fmt::format(
        "--min-time '{}' is not a duration: give a number with ns, us, ms or s, e.g. 2ms",
        min_time));
  return tools::run_tool("diff", [&] {
    archive::ProgressBar bar(quiet);
    const diff::ReportSummary a = diff::load_report(inputs[0], bar);
    bar.restart();
    const diff::ReportSummary b = diff::load_report(inputs[1], bar);
    bar.clear();
    const diff::Comparison c = diff::compare(a, b, significance);
    diff::write_text(stdout, a, b, c);
    if (!json.empty() && !tools::write_output_file("diff", json, diff::to_json(a, b, c))) return 1;
    return 0;
  });
}
