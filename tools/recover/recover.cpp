#include "tools/recover/recover.hpp"

#include <fmt/core.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "events/catalogue.hpp"
#include "lib/regions.hpp"
#include "record/journal_format.hpp"
#include "record/record_file.hpp"
#include "tools/recover/journal_reader.hpp"

namespace perusetrace::recover {

namespace {

constexpr const char* kUsage = R"(usage: perusetrace recover DIR [-q]

Makes the OTF2 archive DIR/traces.otf2 of a traced run that did not reach MPI_Finalize (a
crash, MPI_Abort, a killed job, exit() without MPI_Finalize, a full disk), from the journal
its ranks left in DIR/journal. Says, per rank, how the run ended and how much was kept.
  -q   only errors
)";

std::string how_it_ended(const RankJournal& j) {
  if (!j.stopped.empty()) {
    int code = 0;
    if (std::sscanf(j.stopped.c_str(), "signal %d", &code) == 1)
      return fmt::format("killed by signal {} ({})", code, ::strsignal(code));
    if (std::sscanf(j.stopped.c_str(), "MPI_Abort %d", &code) == 1)
      return fmt::format("MPI_Abort with error code {}", code);
    if (j.stopped.rfind("exit", 0) == 0) return "exit() without MPI_Finalize";
    return j.stopped;
  }
  if (j.ended) return "reached MPI_Finalize";
  // With buffer files the kernel kept every committed record; without (MPITRACE_BUFFERS=memory),
  // what the process had not written out died with it.
  const bool buffered = std::any_of(j.buffer_files.begin(), j.buffer_files.end(),
                                    [](const std::string& f) { return !f.empty(); });
  if (buffered)
    return "no word from the rank (killed with SIGKILL, or its node failed): kept every record "
           "it committed";
  return "no word from the rank (killed with SIGKILL, or its node failed): kept up to its last "
         "buffer flush";
}

// A partial archive from an interrupted MPI_Finalize is ours to replace.
void remove_partial_archive(const std::string& dir) {
  std::error_code ignored;
  std::filesystem::remove_all(dir + "/traces", ignored);
  std::filesystem::remove(dir + "/traces.def", ignored);
}

}  // namespace

}  // namespace perusetrace::recover

int recover_main(int argc, char** argv) {
  using namespace perusetrace;
  using namespace perusetrace::recover;
  std::string dir;
  bool quiet = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (arg == "-q") {
      quiet = true;
    } else if (!arg.empty() && arg[0] == '-') {
      fmt::print(stderr, "perusetrace recover: unknown option '{}'\n{}", arg, kUsage);
      return 2;
    } else if (dir.empty()) {
      dir = arg;
    } else {
      fmt::print(stderr, "perusetrace recover: give one trace directory, not '{}' too\n", arg);
      return 2;
    }
  }
  if (dir.empty()) {
    fmt::print(stderr, "perusetrace recover: no trace directory given\n{}", kUsage);
    return 2;
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fmt::print(stderr,
               "perusetrace recover: {} is not a directory. Give the trace directory "
               "(MPITRACE_OUTPUT of the run).\n",
               dir);
    return 1;
  }
  const std::string anchor = dir + "/traces.otf2";
  // The runtime removes the journal only once the archive is whole: an anchor next to a journal
  // belongs to an archive cut short (a full disk at MPI_Finalize), and is rewritten.
  const std::string recovered_mark = journal::directory(dir) + "/recovered";
  if (::stat(anchor.c_str(), &st) == 0 && (::stat(journal::directory(dir).c_str(), &st) != 0 ||
                                           ::stat(recovered_mark.c_str(), &st) == 0)) {
    fmt::print(stderr,
               "perusetrace recover: {} already holds a complete archive ({}): nothing "
               "to recover.\n",
               dir, anchor);
    return 1;
  }

  std::vector<RankJournal> ranks;
  std::vector<std::string> ignored;
  std::string error;
  if (!read_journal(dir, ranks, ignored, error)) {
    fmt::print(stderr, "perusetrace recover: {}\n", error);
    return 1;
  }
  for (const RankJournal& j : ranks) {
    if (!j.has_header) continue;  // no definitions, or damaged ones: said per rank below
    if (j.version != journal::kFormatVersion || j.regions != kRegionCount) {
      fmt::print(stderr,
                 "perusetrace recover: the journal in {} was written by another perusetrace "
                 "(journal format {}, {} regions; this one reads format {} with {} regions). "
                 "Recover it with the perusetrace that traced the run (or, if only the first "
                 "line of {} is damaged, restore it from another rank's file).\n",
                 dir, j.version, j.regions, journal::kFormatVersion, kRegionCount,
                 j.definitions_file);
      return 1;
    }
  }

  trace::ArchiveSpec spec;
  spec.directory = dir;
  spec.size = static_cast<int>(ranks.size());
  spec.regions = region_table();
  spec.peruse_region_base = kPeruseRegionBase;
  spec.otf2_memory_bytes = 2u << 20;
  spec.settings = ranks[0].settings + " (recovered)";
  // The run's settings are all the journal keeps of the layout it asked for.
  if (ranks[0].settings.find("MPITRACE_OTF2_COMMS=vite") != std::string::npos)
    spec.comm_layout = trace::CommLayout::Vite;
  std::vector<trace::OfflineRank> offline(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    offline[r].process = ranks[r].process;
    // The journal holds the rank's own clock; the archive, the run's global one.
    trace::ProcessInfo& p = offline[r].process;
    const OffsetLine& offsets = ranks[r].clock.offsets;
    if (p.start_time > 0) p.start_time = offsets.to_global(p.start_time);
    if (p.end_time > 0) p.end_time = offsets.to_global(p.end_time);
    if (ranks[r].cut_ticks > 0)
      p.cut_time = offsets.to_global(ranks[r].clock.scale.to_ns(ranks[r].cut_ticks));
    if (offline[r].process.host.empty()) offline[r].process.host = "unknown host";
    offline[r].threads = static_cast<std::uint32_t>(ranks[r].record_files.size());
  }

  // One thread's file open at a time, in the order the writer asks for them.
  std::unique_ptr<RecordFile> current;
  int current_rank = -1;
  std::uint32_t current_thread = 0;
  std::vector<std::vector<RecordFile::Counts>> counts(ranks.size());
  std::vector<std::string> unreadable;
  auto finish_current = [&] {
    if (current) counts[current_rank].push_back(current->counts());
    current.reset();
  };
  const trace::RecordSource read = [&](int rank, std::uint32_t thread, Record* out,
                                       std::size_t capacity) -> std::size_t {
    if (rank != current_rank || thread != current_thread || !current) {
      finish_current();
      current_rank = rank;
      current_thread = thread;
      const auto& files = ranks[rank].record_files;
      const auto& buffers = ranks[rank].buffer_files;
      if (thread >= files.size() || (files[thread].empty() && buffers[thread].empty())) return 0;
      current =
          std::make_unique<RecordFile>(kRegionCount, static_cast<std::uint8_t>(kPeruseEventCount));
      current->set_clock(ranks[rank].clock);
      // Nothing is recorded after the rank's last clock point (MPI_Finalize, or its death)
      // but what other threads add while it is taken: a second is ample.
      if (ranks[rank].last_clock_point > 0)
        current->set_time_limit(ranks[rank].last_clock_point + 1'000'000'000);
      std::string why;
      if (!current->open(files[thread], why)) {
        unreadable.push_back(why);
        current.reset();
        return 0;
      }
      if (!buffers[thread].empty() && !current->add_buffer(buffers[thread], why))
        unreadable.push_back(why);
    }
    const std::size_t n = current->read(out, capacity);
    if (n == 0) {
      finish_current();
      current_rank = -1;
    }
    return n;
  };

  remove_partial_archive(dir);
  if (!trace::write_archive_offline(spec, offline, read, error)) {
    fmt::print(stderr,
               "perusetrace recover: writing the archive in {} failed: {} The journal "
               "is unchanged; fix the cause and run recover again.\n",
               dir, error);
    return 1;
  }
  finish_current();

  std::uint64_t kept = 0, dropped = 0, closed = 0;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::uint64_t rank_kept = 0, rank_dropped = 0, rank_closed = 0, rank_buffered = 0, last = 0;
    std::uint64_t first = ~std::uint64_t{0};
    for (const auto& c : counts[r]) {
      rank_kept += c.kept;
      rank_buffered += c.from_buffer;
      rank_dropped +=
          c.dropped + ((c.torn_bytes > 0 || c.torn_records > 0) && !c.torn_in_buffer ? 1 : 0);
      rank_closed += c.closed_regions;
      last = std::max(last, c.last_time);
      if (c.kept > 0) first = std::min(first, c.first_time);
    }
    kept += rank_kept, dropped += rank_dropped, closed += rank_closed;
    if (quiet) continue;
    const RankJournal& j = ranks[r];
    if (j.definitions_file.empty()) {
      fmt::print(
          "rank {}: no definitions file: its records are kept, its communicators are "
          "unknown\n",
          r);
    } else if (!j.has_header) {
      fmt::print(
          "rank {}: {} does not start with the journal's header line, so it is damaged: what "
          "could be read of it is used, its records are kept\n",
          r, j.definitions_file);
    }
    if (!j.have_scale && rank_kept > 0)
      fmt::print(
          "rank {}: its clock points are lost (no 'ticks' line): its records' times are taken "
          "as ns as they are, and may not line up with the other ranks\n",
          r);
    // From MPI_Init, or from the first record when the rank's definitions lost its start.
    const std::uint64_t start =
        j.process.start_time > 0 ? j.clock.offsets.to_global(j.process.start_time) : first;
    const double span = last > start ? static_cast<double>(last - start) / 1e9 : 0.0;
    fmt::print(
        "rank {}: {}; {} thread(s), {} records kept ({} from its buffers) covering {:.3f} s, "
        "{} dropped, {} open MPI calls closed at the last record\n",
        r, how_it_ended(j), j.record_files.size(), rank_kept, rank_buffered, span, rank_dropped,
        rank_closed);
    for (const std::string& p : j.problems)
      fmt::print("rank {}: ignored an unreadable journal line: {}\n", r, p);
    if (j.more_problems > 0)
      fmt::print("rank {}: ignored {} more unreadable lines of {}\n", r, j.more_problems,
                 j.definitions_file);
  }
  if (!quiet)
    for (const std::string& path : ignored)
      fmt::print("ignored {}: not a file of the journal\n", path);
  for (const std::string& why : unreadable) fmt::print(stderr, "perusetrace recover: {}\n", why);
  // The archive is whole now: a second recover must say so, not rewrite it.
  if (FILE* mark = std::fopen(recovered_mark.c_str(), "w")) std::fclose(mark);
  if (!quiet)
    fmt::print(
        "recovered {} records of {} ranks into {} ({} dropped as damaged); the journal in "
        "{} can be deleted\n",
        kept, ranks.size(), anchor, dropped, journal::directory(dir));
  return 0;
}
