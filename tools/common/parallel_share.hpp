// A command's pass over its share of an archive in an analysis group (analysis_group.hpp): the
// share read, its failures caught for the group to agree on, and what the pass cost, for
// --analysis-stats.
#pragma once

#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include "reader/archive_reader.hpp"
#include "reader/location_share.hpp"
#include "reader/progress_bar.hpp"
#include "tools/common/analysis_group.hpp"

namespace perusetrace::tools {

// "" when `work` returns, else what it threw, worded for the user.
template <typename Work>
std::string failure_of(Work&& work) {
  try {
    work();
  } catch (const archive::ArchiveError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return fmt::format("the analysis failed: {}", e.what());
  }
  return "";
}

struct ShareStats {
  std::uint64_t ranks = 0, locations = 0, events = 0;
  // Read by this process from the archive's opening to the pass's end (/proc/self/io's rchar):
  // the definitions, which every rank reads, and its share's events.
  std::uint64_t bytes_read = 0;
  double pass_cpu_s = 0;  // user and system CPU time at the pass's end
};

// This process's user and system CPU time so far, in s.
inline double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// This process's bytes read so far (0 where /proc does not tell).
inline std::uint64_t bytes_read_so_far() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return 0;
  unsigned long long rchar = 0;
  const int n = std::fscanf(f, "rchar: %llu", &rchar);
  std::fclose(f);
  return n == 1 ? rchar : 0;
}

// Reads the group rank's share of `reader`'s archive (all of it alone) into `sink`;
// `read_before` is bytes_read_so_far() before the reader was made.
inline ShareStats read_share(archive::ArchiveReader& reader, archive::EventSink& sink,
                             AnalysisGroup& group, bool quiet, std::uint64_t read_before) {
  const archive::Definitions& defs = reader.definitions();
  ShareStats s;
  std::vector<std::uint32_t> share;
  if (group.size() > 1) {
    share = archive::location_share(defs, group.rank(), group.size());
    s.ranks = archive::ranks_of_share(defs, group.rank(), group.size()).size();
    // An empty share (more analysis ranks than traced ranks) reads no events.
    if (share.empty()) {
      s.bytes_read = bytes_read_so_far() - read_before;
      s.pass_cpu_s = cpu_seconds();
      return s;
    }
    reader.set_locations(share);
    // The ranks on a host share its cores: decoding threads beyond them only contend.
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    reader.set_reading_threads(std::max(1u, cores / std::max(1u, group.ranks_on_host())));
  } else {
    s.ranks = defs.ranks.size();
    for (std::uint32_t i = 0; i < defs.locations.size(); ++i) share.push_back(i);
  }
  s.locations = share.size();
  for (const std::uint32_t i : share) s.events += defs.locations[i].events;
  archive::ProgressBar progress(quiet);
  reader.read_events(sink, [&](std::uint64_t done, std::uint64_t total) { progress(done, total); });
  progress.clear();
  s.bytes_read = bytes_read_so_far() - read_before;
  s.pass_cpu_s = cpu_seconds();
  return s;
}

// One rank's line of --analysis-stats: its share and what the analysis cost it so far (cpu_s
// includes the time MPI spent waiting for the other ranks, which Open MPI spends polling).
inline std::string stats_json(const ShareStats& s, AnalysisGroup& group) {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  char name[256] = {0};
  ::gethostname(name, sizeof name - 1);
  std::string host;  // a host name's characters need no JSON escape; others are left out
  for (const char* c = name; *c != '\0'; ++c)
    if (std::isalnum(static_cast<unsigned char>(*c)) || *c == '.' || *c == '-' || *c == '_')
      host += *c;
  return fmt::format(
      R"({{"rank":{},"host":{},"traced_ranks":{},"locations":{},"events":{},"bytes_read":{},)"
      R"("bytes_sent":{},"peak_rss_kb":{},"pass_cpu_s":{:.3f},"cpu_s":{:.3f}}})",
      group.rank(), "\"" + host + "\"", s.ranks, s.locations, s.events, s.bytes_read,
      group.bytes_sent(), u.ru_maxrss, s.pass_cpu_s, cpu_seconds());
}

// The --analysis-stats file: every rank's line (gather_stats' array).
inline std::string stats_file(const std::string& ranks, unsigned analysis_ranks) {
  return fmt::format("{{\"analysis_ranks\":{},\"ranks\":{}}}\n", analysis_ranks, ranks);
}

}  // namespace perusetrace::tools
