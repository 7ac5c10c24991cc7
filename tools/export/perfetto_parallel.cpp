#include "tools/export/perfetto_parallel.hpp"

#include <fmt/core.h>
#include <fcntl.h>
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

// Writes the part at `part` (events, each line starting ",\n" but the first "\n") into the
// output at `path`, from byte `offset` on, after a "," (the events before it need one). Every
// rank places its own part at once; the output exists (rank 0 made it) and keeps its length.
void place_part(const std::string& path, const std::string& part, std::uint64_t offset) {
  const int in = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    throw OutputError(fmt::format("cannot read the part {}: {}", part, std::strerror(errno)));
  const int out = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    const std::string why = std::strerror(errno);
    ::close(in);
    throw OutputError(
        fmt::format("cannot write into {}: {}. Check that every analysis rank can write it (a "
                    "shared file system), or write elsewhere with -o FILE.",
                    path, why));
  }
  std::vector<char> block(1u << 20);
  block[0] = ',';
  std::size_t used = 1;
  std::string failed;
  for (;;) {
    const ssize_t n = ::read(in, block.data() + used, block.size() - used);
    if (n < 0) {
      failed = fmt::format("reading the part {} failed: {}", part, std::strerror(errno));
      break;
    }
    used += static_cast<std::size_t>(n);
    if (used == 0) break;
    if (n == 0 || used == block.size()) {
      if (::pwrite(out, block.data(), used, static_cast<off_t>(offset)) !=
          static_cast<ssize_t>(used)) {
        failed = fmt::format(
            "writing into {} failed: {}. Check that the directory has free "
            "space, or write elsewhere with -o FILE.",
            path, std::strerror(errno));
        break;
      }
      offset += used;
      used = 0;
      if (n == 0) break;
    }
  }
  ::close(in);
  if (::close(out) != 0 && failed.empty())
    failed = fmt::format("writing into {} failed: {}", path, std::strerror(errno));
  if (!failed.empty()) throw OutputError(failed);
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
  // The output: rank 0's opening and events, each other rank's part after them in rank order,
  // the end. Every rank places its own part, at the offset the parts before it end at: all at
  // once, and rank 0 reads none of them.
  const std::uint64_t mine = writes ? out->bytes() : out->bytes() > 0 ? out->bytes() + 1 : 0;
  const std::vector<std::string> sizes =
      group.exchange(std::vector<std::string>(parts, std::to_string(mine)));
  std::uint64_t offset = 0, length = 0;
  for (unsigned r = 0; r < parts; ++r) {
    if (r == me) offset = length;
    length += std::stoull(sizes[r]);
  }
  failure = tools::failure_of([&] {
    if (!writes && mine > 0) place_part(path, tools::part_path(dir, me), offset);
  });
  failure = group.agree(failure);
  if (!failure.empty()) fail(failure);
  const std::string all_stats = group.gather_stats(tools::stats_json(share, group));
  if (!writes) return 0;
  failure = tools::failure_of([&] {
    out->skip(length - mine);
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
