#include "tools/profile/profile_main.hpp"

#include "tools/common/output_file.hpp"
#include "tools/common/tool_run.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "reader/archive_reader.hpp"
#include "tools/common/command_line.hpp"
#include "tools/profile/aggregation.hpp"
#include "tools/profile/folded_output.hpp"
#include "tools/profile/html_output.hpp"
#include "tools/profile/json_output.hpp"
#include "tools/profile/text_output.hpp"

namespace {

constexpr const char* kUsage =
    R"(usage: perusetrace profile ARCHIVE [--json FILE] [--html FILE] [--folded FILE]

A sampling profile of a trace taken with MPITRACE_SAMPLING (e.g. 1ms): per call path, per
function and per MPI call site, the time outside MPI, working in MPI and stalled in MPI (on a
message, a transfer, a collective, I/O), per rank and summed. A sample stands for one sampling
period of its thread's time.

  ARCHIVE          the trace directory (PROGRAM-trace) or its traces.otf2
  --json FILE      also write the profile as JSON (docs/profile-schema.md)
  --html FILE      also write a self-contained interactive icicle view (click to zoom)
  --folded FILE    also write collapsed stacks for flamegraph.pl, inferno or speedscope:
                   "frame;...;MPI_Recv;[stall message] SAMPLES" per line, all ranks summed
  -q, --quiet      no progress bar
)";

// Exit codes: 1 the archive cannot be read or a file not written, 2 the command line is wrong
// or the archive holds no samples (nothing to profile: it was traced without sampling).
constexpr int kNoSamples = 2;

using namespace perusetrace;

int no_samples(const std::string& anchor, const char* why) {
  fmt::print(stderr,
             "perusetrace profile: {} holds no samples ({}): it was traced without sampling. "
             "Trace the program again with MPITRACE_SAMPLING set, e.g. MPITRACE_SAMPLING=1ms.\n",
             anchor, why);
  return kNoSamples;
}

int run_profile(const std::string& path, const std::string& json, const std::string& html,
                const std::string& folded, bool quiet) {
  archive::ArchiveReader reader(path);
  const archive::Definitions& defs = reader.definitions();
  if (defs.contexts.empty()) return no_samples(reader.anchor(), "no calling contexts");
  if (defs.sampling_period_ns == 0)
    throw archive::ArchiveError(fmt::format(
        "{} has samples but no sampling period (its interrupt generator is missing or not a "
        "time in ns), so their time is unknown. The archive is damaged: trace the program "
        "again.",
        reader.anchor()));
  profile::Aggregation aggregation(defs);
  archive::ProgressBar progress(quiet);
  reader.read_events(aggregation,
                     [&](std::uint64_t done, std::uint64_t total) { progress(done, total); });
  progress.clear();
  if (aggregation.samples() == 0) return no_samples(reader.anchor(), "no sample events");
  profile::Profile result = aggregation.finish();
  result.archive = reader.anchor();
  result.creator = defs.creator;
  result.settings = defs.settings;
  profile::write_text(stdout, result);
  return tools::write_output_files("profile",
                                   {{json, [&] { return profile::to_json(result); }},
                                    {html, [&] { return profile::to_html(result); }},
                                    {folded, [&] { return profile::to_folded(result); }}});
}

}  // namespace

int profile_main(int argc, char** argv) {
  std::string path, json, html, folded;
  bool quiet = false;
  return tools::run_command("profile", kUsage, argc, argv,
                            {{"", "--json", &json, nullptr},
                             {"", "--html", &html, nullptr},
                             {"", "--folded", &folded, nullptr},
                             {"-q", "--quiet", nullptr, &quiet}},
                            path, [&] { return run_profile(path, json, html, folded, quiet); });
}
