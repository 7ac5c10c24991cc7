#include "tools/prv/convert.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "lib/settings.hpp"
#include "reader/clock_repair.hpp"
#include "reader/trace_paths.hpp"
#include "tools/common/analysis_group.hpp"
#include "tools/common/command_line.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/prv/conversion_summary.hpp"
#include "tools/prv/metric_types.hpp"
#include "tools/prv/parallel_convert.hpp"
#include "tools/prv/paraver_objects.hpp"
#include "tools/prv/pcf_row.hpp"
#include "tools/prv/prv_archive.hpp"
#include "tools/prv/prv_codes.hpp"
#include "tools/prv/prv_writer.hpp"
#include "tools/prv/translator.hpp"

namespace {

constexpr const char* kUsage =
    R"(usage: perusetrace prv ARCHIVE [-o PREFIX] [--gzip] [--sort-memory SIZE] [--np N]

Converts an OTF2 trace written by perusetrace to Paraver: PREFIX.prv (records sorted by
time), PREFIX.pcf (state and event labels) and PREFIX.row (node, CPU and thread names).

  ARCHIVE        the trace directory (PROGRAM-trace) or its traces.otf2
  -o PREFIX      output prefix (default: the trace directory's name, next to it)
  --gzip         write PREFIX.prv.gz (zlib's fastest level), which Paraver reads as it is:
                 about a sixth of the size, for a slower conversion
  -q, --quiet    no progress bar and no summary
  --sort-memory SIZE
                 records held in memory before they are sorted (default 16M, at least 64K):
                 those no later record can precede are written out; when too few can (a
                 state that stays open, clocks repaired), the buffer is spilled to a
                 temporary file beside the output and merged at the end. Peak memory is
                 about 1.6 times this plus 20 MiB (per analysis rank with --np)
  --np N         run as an MPI job of N analysis ranks (perusetrace-analyze, started with the
                 mpirun perusetrace was built with), each converting a share of the archive's
                 ranks; rank 0 merges their sorted parts into the one .prv: the same records
  --mpirun-arg ARG with --np: one more argument for mpirun (repeatable), e.g. --host
  --analysis-stats FILE  write what each analysis rank read, sent, used (JSON)
)";

constexpr std::size_t kDefaultSortMemory = 16u << 20;
constexpr std::size_t kMinSortMemory = 64u << 10;

using namespace perusetrace::prv;

// A progress bar on stderr, only when it is a terminal.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled && ::isatty(2) == 1) {}
  void show(const char* phase, std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || total == 0) return;
    const int percent = static_cast<int>(std::min<std::uint64_t>(100, done * 100 / total));
    if (percent == last_ && phase == phase_) return;
    last_ = percent;
    phase_ = phase;
    const int width = 40, filled = percent * width / 100;
    fmt::print(stderr, "\r{:<8} [{}{}] {:3}%", phase, std::string(filled, '#'),
               std::string(width - filled, ' '), percent);
    std::fflush(stderr);
  }
  void done() {
    if (enabled_ && last_ >= 0) fmt::print(stderr, "\r{:60}\r", "");
  }

 private:
  bool enabled_;
  int last_ = -1;
  const char* phase_ = nullptr;
};

// In one process, or as the one rank of `--np 1`: streamed, with the clock repair where needed.
int convert(const std::string& archive, std::string prefix, bool quiet, std::size_t sort_memory,
            bool gzip, const std::string& stats) {
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t read_before = perusetrace::tools::bytes_read_so_far();
  ArchiveReader reader(archive);
  const Definitions& defs = reader.definitions();
  if (prefix.empty()) prefix = perusetrace::archive::trace_directory(reader.anchor());
  const Layout layout = make_layout(defs);

  Progress progress(!quiet);
  perusetrace::tools::ShareStats share;  // for --analysis-stats
  share.ranks = defs.ranks.size();
  share.locations = defs.locations.size();
  share.events = defs.total_events;
  // Ranks on several clocks: a first pass finds receives that came before their send.
  perusetrace::archive::ClockRepair repair(defs);
  if (perusetrace::archive::clock_domains(defs) > 1) {
    ArchiveReader first(archive);
    first.read_events(repair, [&](std::uint64_t done, std::uint64_t total) {
      progress.show("clocks", done, total);
    });
    repair.finish();
  }
  // Without clock repair, events come in time order and the trace's end is known: records go
  // out as soon as nothing still to come can sort before them, and the .prv is written once.
  // Repair moves events later, past what the reader has handed over: those runs sort at the end.
  // An archive whose clock properties end before its last event (damaged) overruns the streamed
  // header's end: it is converted again, through sorted runs, with the end it really has.
  std::optional<PrvWriter> writer;
  std::optional<Translator> translating;
  bool first = true;
  for (bool stream = repair.repaired() == 0;; stream = false) {
    translating.reset();
    writer.reset();  // removes an overrun attempt's output
    // zlib's fastest level: the .prv's repetitive text compresses well at it, and the slower
    // levels would make the conversion wait on the compressor.
    PrvWriter& prv =
        writer.emplace(prefix + (gzip ? ".prv.gz" : ".prv"), sort_memory, gzip ? 1 : 0);
    Translator& translator = translating.emplace(defs, prv, layout.objects);
    if (stream)
      prv.stream(prv_header(defs, layout, defs.trace_length), defs.trace_length,
                 [&translator] { return translator.settled_before(); });
    perusetrace::archive::RepairedSink repaired(repair.shifts(), translator);
    EventSink& sink = repair.repaired() > 0 ? static_cast<EventSink&>(repaired) : translator;
    std::optional<ArchiveReader> again;  // a reader reads its events once
    ArchiveReader& source = first ? reader : again.emplace(archive);
    first = false;
    source.read_events(sink, [&](std::uint64_t done, std::uint64_t total) {
      progress.show("reading", done, total);
    });
    translator.finish(defs.trace_length);
    share.bytes_read = perusetrace::tools::bytes_read_so_far() - read_before;
    share.pass_cpu_s = perusetrace::tools::cpu_seconds();
    const std::uint64_t end = std::max(defs.trace_length, prv.latest_time());
    try {
      prv.finish(
          [&](std::uint64_t) { return prv_header(defs, layout, end); },
          [&](std::uint64_t done, std::uint64_t total) { progress.show("sorting", done, total); });
      break;
    } catch (const StreamOverrun&) {
      if (!stream) throw;
    }
  }
  progress.done();
  const PrvWriter& prv = *writer;
  const Translator& translator = *translating;
  write_pcf(prefix + ".pcf", defs);
  write_row(prefix + ".row", defs, layout);

  if (repair.repaired() > 0)
    fmt::print(stderr,
               "perusetrace prv: {} of {} messages were received before they were sent (by up "
               "to {:.3f} us, rank {} -> {}): the hosts' clocks disagree by more than measured. "
               "{} receives, each with the later events of its thread, were moved to just after "
               "their send (a controlled logical clock; the largest move {:.3f} us).\n",
               repair.backwards(), repair.messages(), static_cast<double>(repair.worst_gap()) / 1e3,
               repair.worst_sender(), repair.worst_receiver(), repair.repaired(),
               static_cast<double>(repair.max_shift()) / 1e3);
  const auto& m = translator.messages();
  tell_about_messages(defs, reader.anchor(), counts_of(prv, m), quiet);
  if (!quiet) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr,
               "perusetrace prv: {}{}/.pcf/.row: {} records ({} messages) from {} "
               "events in {:.1f} s\n",
               prefix, gzip ? ".prv.gz" : ".prv", prv.records(), m.matched(), defs.total_events,
               seconds);
  }
  perusetrace::tools::AnalysisGroup& group = perusetrace::tools::analysis_group();
  if (!stats.empty() &&
      !perusetrace::tools::write_output_file(
          "prv", stats,
          perusetrace::tools::stats_file(
              group.gather_stats(perusetrace::tools::stats_json(share, group)), 1)))
    return 1;
  return 0;
}

}  // namespace

int prv_main(int argc, char** argv) {
  std::string archive, prefix, sort_memory_text, stats;
  bool quiet = false, gzip = false;
  const int rc =
      perusetrace::tools::parse_command_line("prv", kUsage, argc, argv,
                                             {{"-o", "--output", &prefix, nullptr},
                                              {"-q", "--quiet", nullptr, &quiet},
                                              {"", "--gzip", nullptr, &gzip},
                                              {"", "--sort-memory", &sort_memory_text, nullptr},
                                              {"", "--analysis-stats", &stats, nullptr}},
                                             archive);
  if (rc >= 0) return rc;
  std::size_t sort_memory = kDefaultSortMemory;
  if (!sort_memory_text.empty() &&
      (!perusetrace::parse_size(sort_memory_text, sort_memory) || sort_memory < kMinSortMemory)) {
    fmt::print(stderr,
               "perusetrace prv: --sort-memory '{}' is not a size of at least 64K; give bytes "
               "or a number with K, M or G, e.g. --sort-memory 256M\n",
               sort_memory_text);
    return 2;
  }
  if (!prefix.empty() && prefix.back() == '/') {
    fmt::print(stderr,
               "perusetrace prv: -o takes a file prefix (PREFIX.prv is written), not a "
               "directory: '{}'\n",
               prefix);
    return 2;
  }
  // In a parallel conversion the ranks have agreed on a failure: rank 0 alone says it.
  const bool speaks = perusetrace::tools::analysis_group().rank() == 0;
  try {
    // One analysis rank converts as one process does.
    if (perusetrace::tools::analysis_group().size() > 1)
      return perusetrace::prv::convert_in_group(archive, prefix, quiet, sort_memory, gzip, stats);
    return convert(archive, prefix, quiet, sort_memory, gzip, stats);
  } catch (const ConvertError& e) {
    if (speaks) fmt::print(stderr, "perusetrace prv: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    if (speaks) fmt::print(stderr, "perusetrace prv: conversion failed: {}\n", e.what());
    return 1;
  }
}
