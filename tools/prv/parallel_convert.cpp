#include "tools/prv/parallel_convert.hpp"

#include <fmt/core.h>

#include <chrono>
#include <utility>
#include <memory>
#include <vector>

#include "reader/clock_repair.hpp"
#include "reader/location_share.hpp"
#include "reader/trace_paths.hpp"
#include "tools/common/exchange_rounds.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/parallel_parts.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/prv/conversion_summary.hpp"
#include "tools/prv/paraver_objects.hpp"
#include "tools/prv/pcf_row.hpp"
#include "tools/prv/prv_writer.hpp"
#include "tools/prv/translator.hpp"

namespace perusetrace::prv {

int convert_in_group(const std::string& archive, std::string prefix, bool quiet,
                     std::size_t sort_memory, bool gzip, const std::string& stats) {
  const auto start = std::chrono::steady_clock::now();
  tools::AnalysisGroup& group = tools::analysis_group();
  const unsigned me = group.rank(), parts = group.size();
  const bool writes = me == 0;
  const std::uint64_t read_before = tools::bytes_read_so_far();
  std::unique_ptr<ArchiveReader> reader;
  std::string failure =
      tools::failure_of([&] { reader = std::make_unique<ArchiveReader>(archive); });
  failure = group.agree(failure);
  if (!failure.empty()) throw archive::ArchiveError(failure);
  const Definitions& defs = reader->definitions();
  if (prefix.empty()) prefix = archive::trace_directory(reader->anchor());

  const std::string dir =
      tools::parts_directory(group, prefix + ".prv", "write elsewhere with -o PREFIX");

  const Layout layout = make_layout(defs);
  const std::vector<unsigned> owner = tools::share_owners(defs, parts);
  std::unique_ptr<PrvWriter> out;
  std::unique_ptr<Translator> translator;
  tools::ShareStats share;
  // Each round hands the halves made so far to the ranks converting their receivers and pairs
  // those that came here. A rank whose pass failed still takes part, with nothing to give.
  std::string round_failure;
  const auto round = [&] {
    std::vector<archive::SendHalf> mine;
    if (translator != nullptr) mine = translator->messages().take_remote_sends();
    std::vector<archive::SendHalf> halves;
    const std::string failed =
        tools::failure_of([&] { halves = tools::exchange_halves(group, mine, owner); });
    if (round_failure.empty()) round_failure = failed;
    if (translator != nullptr && round_failure.empty())
      round_failure = tools::failure_of([&] { translator->messages().pair_remote(halves); });
  };
  const unsigned rounds = tools::exchange_rounds(defs);
  std::unique_ptr<tools::RoundSink> in_rounds;
  failure = tools::failure_of([&] {
    // Rank 0's own records go straight into the output, the others' into their parts.
    out = writes ? std::make_unique<PrvWriter>(prefix + (gzip ? ".prv.gz" : ".prv"), sort_memory,
                                               gzip ? 1 : 0)
                 : std::make_unique<PrvWriter>(tools::part_path(dir, me), sort_memory, 0);
    translator = std::make_unique<Translator>(defs, *out, layout.objects);
    translator->share(archive::location_share(defs, me, parts));
    in_rounds = std::make_unique<tools::RoundSink>(*translator, defs.trace_length, rounds, round);
    share = tools::read_share(*reader, *in_rounds, group, quiet || !writes, read_before);
  });
  // The rounds this rank's pass did not reach (all of them, if it could not start), then one
  // more for the sends that complete at the end.
  for (unsigned r = in_rounds != nullptr ? in_rounds->done() : 0; r < rounds; ++r) round();
  if (failure.empty()) failure = tools::failure_of([&] { translator->finish(defs.trace_length); });
  if (!failure.empty()) translator.reset();  // gives nothing more
  round();
  if (failure.empty()) failure = round_failure;
  // A failure ends the run on every rank: each drops its part, then rank 0 removes what is left.
  const auto fail = [&](const std::string& why) {
    translator.reset();
    out.reset();
    group.agree("");  // every rank's writer is gone
    if (writes) tools::remove_parts(dir, parts);
    throw ConvertError(why);
  };
  failure = group.agree(failure);
  if (!failure.empty()) fail(failure);
  ConversionCounts counts;
  failure = tools::failure_of([&] {
    translator->messages().finish_remote();
    if (writes) return;
    out->finish([](std::uint64_t) { return std::string(); }, nullptr);
    counts = counts_of(*out, translator->messages());
    // Its sorting directory lies in the parts' directory, which rank 0 removes when done.
    out.reset();
  });
  failure = group.agree(failure);
  if (writes && failure.empty()) counts = counts_of(*out, translator->messages());
  if (failure.empty() && archive::clock_domains(defs) > 1) {
    // A receive before its send needs the controlled logical clock, a replay over every rank's
    // messages in causal order that moves later events: it runs in one process.
    std::string breaks = std::to_string(counts.clock_breaks);
    group.reduce(breaks, [](std::string& into, const std::string& from) {
      into = std::to_string(std::stoull(into) + std::stoull(from));
    });
    group.broadcast(breaks);
    if (breaks != "0")
      failure = fmt::format(
          "{} messages were received before they were sent: the ranks' {} clocks disagree by "
          "more than measured, and moving those receives after their send (the controlled "
          "logical clock) runs in one process. Convert without --np.",
          breaks, archive::clock_domains(defs));
  }
  if (!failure.empty()) fail(failure);
  // Every part is complete once rank 0 has every rank's counts.
  std::string all = counts.text();
  group.reduce(all, [](std::string& into, const std::string& from) {
    ConversionCounts sum = ConversionCounts::parse(into);
    sum.add(ConversionCounts::parse(from));
    into = sum.text();
  });
  const std::string all_stats = group.gather_stats(tools::stats_json(share, group));
  if (!writes) return 0;
  const ConversionCounts total = ConversionCounts::parse(all);
  failure = tools::failure_of([&] {
    for (unsigned r = 1; r < parts; ++r) out->add_sorted_run(tools::part_path(dir, r));
    const std::uint64_t end = std::max(defs.trace_length, total.latest);
    out->finish([&](std::uint64_t) { return prv_header(defs, layout, end); }, nullptr);
    out.reset();
    tools::remove_parts(dir, parts);
    write_pcf(prefix + ".pcf", defs);
    write_row(prefix + ".row", defs, layout);
  });
  if (!failure.empty()) {
    out.reset();
    tools::remove_parts(dir, parts);
    throw ConvertError(failure);
  }
  tell_about_messages(defs, reader->anchor(), total, quiet);
  if (!quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr,
               "perusetrace prv: {}{}/.pcf/.row: {} records ({} messages) from {} events in "
               "{:.1f} s on {} analysis ranks\n",
               prefix, gzip ? ".prv.gz" : ".prv", total.records, total.matched, defs.total_events,
               seconds, parts);
  }
  if (!stats.empty() &&
      !tools::write_output_file("prv", stats, tools::stats_file(all_stats, group.size())))
    return 1;
  return 0;
}

}  // namespace perusetrace::prv
