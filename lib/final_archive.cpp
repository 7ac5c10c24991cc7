#include "lib/final_archive.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "events/catalogue.hpp"
#include "lib/calling_contexts.hpp"
#include "lib/journal.hpp"
#include "lib/regions.hpp"
#include "lib/sampler.hpp"
#include "lib/world.hpp"
#include "record/journal_format.hpp"
#include "record/record_file.hpp"

namespace perusetrace {

namespace {

// OTF2 reports success even when its buffered writes met a full disk (an empty anchor file was
// seen on a full tmpfs), so the journal is removed only if the files look whole and the file
// system still had room after the last of them. A directory removed while the archive was
// written (the anchor file gone, or the directory) is told apart from a full one: the advice
// differs.
bool archive_fits(const FinalArchive& run, std::string& error) {
  struct statvfs fs;
  const std::string anchor = run.directory + "/traces.otf2";
  struct stat st;
  const bool anchor_there = run.rank != 0 || ::stat(anchor.c_str(), &st) == 0;
  const bool anchor_ok = anchor_there && (run.rank != 0 || st.st_size > 0);
  const bool room = ::statvfs(run.directory.c_str(), &fs) != 0 || fs.f_bavail > 0;
  if (anchor_ok && room) return true;
  if (!anchor_there || ::access(run.directory.c_str(), W_OK | X_OK) != 0)
    error = "the output directory " + run.directory +
            " (or the archive in it) was removed while the archive was written: set "
            "MPITRACE_OUTPUT to a directory that stays for the whole run.";
  else
    error = "the file system of " + run.directory +
            " was full when the archive was written, so it may be cut short.";
  return false;
}

// What the user can still do with the records when the archive failed.
std::string what_is_kept(const FinalArchive& run) {
  const std::string journal = journal::directory(run.directory);
  if (::access(journal.c_str(), R_OK | X_OK) != 0)
    return " The records were in " + journal + ", which is gone too: this run's trace is lost.";
  return " The records are kept in " + journal +
         ": once the cause is fixed, `perusetrace recover " + run.directory +
         "` makes the archive from them.";
}

}  // namespace

void write_final_archive(const FinalArchive& run, trace::ProcessInfo process, std::uint32_t threads,
                         const GlobalClock& clock) {
  trace::ArchiveSpec spec;
  spec.directory = run.directory;
  spec.rank = run.rank;
  spec.size = run.size;
  spec.regions = region_table();
  spec.peruse_region_base = kPeruseRegionBase;
  spec.otf2_memory_bytes = 2u << 20;
  spec.settings = run.settings;
  spec.sampling_period_ns = sampling::period_ns();
  spec.sampling_wall_clock = sampling::wall_clock();
  spec.comm_layout = run.comm_layout;
  spec.quiet_failures = journal::failed();
  std::string error;
  const bool opened = trace::open_archive(spec, error);
  if (!all_ranks(opened)) {
    if (!opened)
      std::fprintf(stderr, "perusetrace rank %d: %s%s\n", run.rank, error.c_str(),
                   what_is_kept(run).c_str());
    return;
  }
  constexpr std::size_t kBlock = 1 << 14;
  static Record block[kBlock];  // finalize runs once, on one thread
  static Record merged[kBlock];
  // The samples' stacks need this process's symbols; built only when there are samples.
  std::unique_ptr<Symbolizer> symbols;
  std::unique_ptr<CallingContexts> contexts;
  if (sampling::enabled()) {
    symbols = std::make_unique<Symbolizer>();
    contexts = std::make_unique<CallingContexts>(
        *symbols, reinterpret_cast<std::uint64_t>(&write_final_archive));
  }
  for (std::uint32_t t = 0; t < threads; ++t) {
    void* location = trace::open_location(t);
    RecordFile file(kRegionCount, static_cast<std::uint8_t>(kPeruseEventCount));
    file.set_clock(clock);
    std::optional<SampleStream> samples;
    if (contexts) samples.emplace(journal::samples_file(t), clock, *contexts);
    std::string ignored;  // a thread whose journal file could not be created has no records
    if (location != nullptr && file.open(journal::records_file(t), ignored)) {
      // Samples go between the records by time.
      std::size_t m = 0;
      auto put = [&](const Record& r) {
        merged[m++] = r;
        if (m == kBlock) trace::write(location, merged, m), m = 0;
      };
      std::size_t n = 0;
      while ((n = file.read(block, kBlock)) > 0) {
        if (!samples || !samples->more()) {
          trace::write(location, block, n);
          continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
          while (samples->more() && samples->peek().time <= block[i].time) put(samples->take());
          put(block[i]);
        }
      }
      while (samples && samples->more()) put(samples->take());
      if (m > 0) trace::write(location, merged, m);
    }
    // The archive's time span holds every event, whatever rounding the clock's maps did.
    const RecordFile::Counts& c = file.counts();
    if (c.kept > 0 && c.first_time < process.start_time) {
      process.realtime_start -= std::min(process.realtime_start, process.start_time - c.first_time);
      process.start_time = c.first_time;
    }
    if (c.kept > 0) process.end_time = std::max(process.end_time, c.last_time);
    trace::close_location(location);
  }
  if (contexts) process.contexts = contexts->contexts();
  bool ok = trace::close_archive(process, error);
  if (ok) ok = archive_fits(run, error);
  if (!error.empty() && (ok || run.rank == 0))
    std::fprintf(stderr, "perusetrace rank %d: %s%s\n", run.rank, error.c_str(),
                 ok ? "" : what_is_kept(run).c_str());
  if (all_ranks(ok)) journal::remove(threads);
  if (run.rank == 0 && ok) {
    std::fprintf(stderr, "perusetrace: trace %s in %s/traces.otf2\n",
                 run.stopped ? "written incompletely" : "written", run.directory.c_str());
  }
}

}  // namespace perusetrace
