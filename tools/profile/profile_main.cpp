#include "tools/profile/profile_main.hpp"

#include "tools/common/output_file.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/common/tool_run.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
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
    R"(usage: perusetrace profile ARCHIVE [--json FILE] [--html FILE] [--folded FILE] [--np N]

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
  --np N           run as an MPI job of N analysis ranks (perusetrace-analyze, started with
                   the mpirun perusetrace was built with), each reading a share of the
                   archive's ranks: the same profile, the reading shared out
  --mpirun-arg ARG with --np: one more argument for mpirun (repeatable), e.g. --host
  --analysis-stats FILE  write what each analysis rank read, sent, used (JSON)
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

// Every rank of the analysis group reads its share of the archive's locations (all of them
// alone); their counts fold into rank 0's, which writes the outputs.
int run_profile(const std::string& path, const std::string& json, const std::string& html,
                const std::string& folded, const std::string& stats, bool quiet) {
  tools::AnalysisGroup& group = tools::analysis_group();
  const bool writes = group.rank() == 0;
  std::unique_ptr<archive::ArchiveReader> reader;
  std::unique_ptr<profile::Aggregation> aggregation;
  tools::ShareStats share;
  const std::uint64_t read_before = tools::bytes_read_so_far();
  std::string failure = tools::failure_of([&] {
    reader = std::make_unique<archive::ArchiveReader>(path);
    const archive::Definitions& defs = reader->definitions();
    if (defs.contexts.empty() || defs.sampling_period_ns == 0) return;  // said below, by all
    aggregation = std::make_unique<profile::Aggregation>(defs);
    share = tools::read_share(*reader, *aggregation, group, quiet || !writes, read_before);
  });
  failure = group.agree(failure);
  if (!failure.empty()) throw archive::ArchiveError(failure);
  const archive::Definitions& defs = reader->definitions();
  if (defs.contexts.empty())
    return writes ? no_samples(reader->anchor(), "no calling contexts") : kNoSamples;
  if (defs.sampling_period_ns == 0)
    throw archive::ArchiveError(fmt::format(
        "{} has samples but no sampling period (its interrupt generator is missing or not a "
        "time in ns), so their time is unknown. The archive is damaged: trace the program "
        "again.",
        reader->anchor()));
  std::string counts = aggregation->partial();
  group.reduce(counts, [&](std::string& into, const std::string& from) {
    profile::Aggregation sum(defs);
    sum.add_partial(into);
    sum.add_partial(from);
    into = sum.partial();
  });
  const std::string all_stats = group.gather_stats(tools::stats_json(share, group));
  if (!writes) return 0;
  profile::Aggregation total(defs);
  total.add_partial(counts);
  if (total.samples() == 0) return no_samples(reader->anchor(), "no sample events");
  profile::Profile result = total.finish();
  result.archive = reader->anchor();
  result.creator = defs.creator;
  result.settings = defs.settings;
  result.analysis_ranks = group.size();
  result.parallel = group.parallel();
  profile::write_text(stdout, result);
  return tools::write_output_files(
      "profile", {{json, [&] { return profile::to_json(result); }},
                  {html, [&] { return profile::to_html(result); }},
                  {folded, [&] { return profile::to_folded(result); }},
                  {stats, [&] { return tools::stats_file(all_stats, group.size()); }}});
}

}  // namespace

int profile_main(int argc, char** argv) {
  std::string path, json, html, folded, stats;
  bool quiet = false;
  return tools::run_command("profile", kUsage, argc, argv,
                            {{"", "--json", &json, nullptr},
                             {"", "--html", &html, nullptr},
                             {"", "--folded", &folded, nullptr},
                             {"", "--analysis-stats", &stats, nullptr},
                             {"-q", "--quiet", nullptr, &quiet}},
                            path,
                            [&] { return run_profile(path, json, html, folded, stats, quiet); });
}
