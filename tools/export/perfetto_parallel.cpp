#include "tools/export/perfetto_parallel.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "reader/clock_repair.hpp"
#include "reader/location_share.hpp"
#include "tools/common/exchange_rounds.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/parallel_parts.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/export/chrome_trace.hpp"
#include "tools/export/output_stream.hpp"
#include "tools/export/perfetto_summary.hpp"

namespace perusetrace::exporter {

namespace {

// Appends the part at `path` (events, each line starting ",\n" but the first "\n") to `out`,
// after the events already there.
void append_part(OutputStream& out, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr)
    throw OutputError(fmt::format("cannot read the part {}: {}", path, std::strerror(errno)));
  std::vector<char> block(1u << 20);
  bool first = true;
  for (std::size_t n; (n = std::fread(block.data(), 1, block.size(), f)) > 0;) {
    if (first) out.write(",");  // the metadata events come before: the part's first needs one
    first = false;
    out.write(std::string_view(block.data(), n));
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw OutputError(fmt::format("reading the part {} failed", path));
}

}  // namespace

int export_perfetto_in_group(const ExportRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  tools::AnalysisGroup& group = tools::analysis_group();
  const unsigned me = group.rank(), parts = group.size();
  const bool writes = me == 0;
  const std::uint64_t read_before = tools::bytes_read_so_far();
  if (request.output == "-")
    throw OutputError("--np writes a file, not standard output: give -o FILE");
  std::unique_ptr<archive::ArchiveReader> reader;
  std::string failure = tools::failure_of(
      [&] { reader = std::make_unique<archive::ArchiveReader>(request.archive); });
  failure = group.agree(failure);
  if (!failure.empty()) throw archive::ArchiveError(failure);
  const Definitions& defs = reader->definitions();
  const std::string path =
      request.output.empty() ? default_output(reader->anchor(), ".perfetto.json") : request.output;

  const std::string dir = tools::parts_directory(group, path, "write elsewhere with -o FILE");

  const std::vector<unsigned> owner = tools::share_owners(defs, parts);
  std::unique_ptr<OutputStream> out;
  std::unique_ptr<ChromeTrace> trace;
  tools::ShareStats share;
  // Each round hands the halves made so far to the ranks exporting their receivers and pairs
  // those that came here. A rank whose pass failed still takes part, with nothing to give.
  std::string round_failure;
  const auto round = [&] {
    std::vector<archive::SendHalf> mine;
    if (trace != nullptr) mine = trace->take_remote_sends();
    std::vector<archive::SendHalf> halves;
    const std::string failed =
        tools::failure_of([&] { halves = tools::exchange_halves(group, mine, owner); });
    if (round_failure.empty()) round_failure = failed;
    if (trace != nullptr && round_failure.empty())
      round_failure = tools::failure_of([&] { trace->pair_remote(halves); });
  };
  const unsigned rounds = tools::exchange_rounds(defs);
  std::unique_ptr<tools::RoundSink> in_rounds;
  failure = tools::failure_of([&] {
    out = std::make_unique<OutputStream>(writes ? path : tools::part_path(dir, me));
    trace = std::make_unique<ChromeTrace>(defs, *out);
    std::vector<bool> owned(defs.ranks.size(), false);
    for (const std::uint32_t r : archive::ranks_of_share(defs, me, parts)) owned[r] = true;
    trace->share(std::move(owned), me, parts);
    if (writes) trace->start();
    in_rounds = std::make_unique<tools::RoundSink>(*trace, defs.trace_length, rounds, round);
    share = tools::read_share(*reader, *in_rounds, group, request.quiet || !writes, read_before);
    trace->finish_events();
  });
  // The rounds this rank's pass did not reach (all of them, if it could not start).
  for (unsigned r = in_rounds != nullptr ? in_rounds->done() : 0; r < rounds; ++r) round();
  if (failure.empty()) failure = round_failure;
  const auto fail = [&](const std::string& why) {
    trace.reset();
    out.reset();      // removes what it wrote
    group.agree("");  // every rank's output is gone
    if (writes) tools::remove_parts(dir, parts);
    throw OutputError(why);
  };
  failure = group.agree(failure);
  if (!failure.empty()) fail(failure);
  failure = tools::failure_of([&] {
    trace->finish_remote();
    if (!writes) out->close();
  });
  failure = group.agree(failure);
  if (!failure.empty()) fail(failure);
  std::string counts = counts_text(trace->counts());
  group.reduce(counts, [](std::string& into, const std::string& from) {
    ChromeTrace::Counts sum = parse_counts(into);
    add_counts(sum, parse_counts(from));
    into = counts_text(sum);
  });
  // A receive before its send needs the clock repair, a replay over every rank's messages that
  // moves later events: it runs in one process.
  group.broadcast(counts);
  const ChromeTrace::Counts total = parse_counts(counts);
  if (archive::clock_domains(defs) > 1 && total.clock_breaks > 0)
    fail(fmt::format(
        "{} messages were received before they were sent: the ranks' {} clocks disagree by "
        "more than measured, and moving those receives after their send (the controlled "
        "logical clock) runs in one process. Export without --np.",
        total.clock_breaks, archive::clock_domains(defs)));
  const std::string all_stats = group.gather_stats(tools::stats_json(share, group));
  if (!writes) return 0;
  failure = tools::failure_of([&] {
    for (unsigned r = 1; r < parts; ++r) append_part(*out, tools::part_path(dir, r));
    trace->end(reader->anchor());
    out->close();
  });
  tools::remove_parts(dir, parts);
  if (!failure.empty()) {
    out.reset();
    ::unlink(path.c_str());  // closed already, perhaps: a file without its ids is no trace
    throw OutputError(failure);
  }
  tell_about_messages(defs, reader->anchor(), total);
  if (!request.quiet)
    tell_done(defs, path, total, started, out->bytes(), fmt::format(" ({} analysis ranks)", parts));
  if (!request.analysis_stats.empty() &&
      !tools::write_output_file("export", request.analysis_stats,
                                tools::stats_file(all_stats, parts)))
    return 1;
  return 0;
}

}  // namespace perusetrace::exporter
