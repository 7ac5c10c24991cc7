#include "tools/report/io_text.hpp"

#include <fmt/core.h>

#include <string>

namespace perusetrace::report {

namespace {

std::string ms(std::uint64_t ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

std::string traffic(const IoTraffic& t) {
  return fmt::format("{}/{}", t.operations, t.bytes);
}

}  // namespace

void write_io_text(std::FILE* out, const Io& io) {
  if (!io.present) return;
  fmt::print(out,
             "\nMPI-IO per file and rank (operations/bytes transferred; an operation's time runs "
             "from its begin to its completion; in calls: calls x time of the MPI calls that did "
             "the file's I/O)\n");
  for (const IoFileStat& f : io.files) {
    fmt::print(out, "  {} (initial size {})\n", f.name,
               f.initial_size == kIoUnknownSize ? std::string("unknown: never opened")
                                                : fmt::format("{} bytes", f.initial_size));
    fmt::print(out,
               "    {:<5} {:>13} {:>13} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>5} {:>4} "
               "{:>6} {:>6} {:>5}  {}\n",
               "rank", "read", "written", "op time", "independ.", "collective", "indep. nb",
               "coll. nb", "sync time", "syncs", "seek", "resize", "delete", "open", "in calls");
    for (std::size_t r = 0; r < f.ranks.size(); ++r) {
      const IoRankStat& s = f.ranks[r];
      if (!s.used) continue;
      fmt::print(out,
                 "    {:<5} {:>13} {:>13} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>5} {:>4} "
                 "{:>6} {:>6} {:>5}  {} x {}\n",
                 r, traffic(s.reads), traffic(s.writes), ms(s.reads.ns + s.writes.ns),
                 traffic(s.kinds[kIoIndependent]), traffic(s.kinds[kIoCollective]),
                 traffic(s.kinds[kIoIndependentNonblocking]),
                 traffic(s.kinds[kIoCollectiveNonblocking]), ms(s.flushes.ns), s.flushes.operations,
                 s.seeks, s.resizes, s.deletes, s.opens, s.calls, ms(s.call_ns));
      if (s.unfinished > 0)
        fmt::print(out, "          {} operations never completed in the trace\n", s.unfinished);
    }
  }
  fmt::print(out, "  MPI_File_* calls per rank (calls x time):");
  for (std::size_t r = 0; r < io.ranks.size(); ++r)
    fmt::print(out, "{} rank {}: {} x {}", r ? "," : "", r, io.ranks[r].calls, ms(io.ranks[r].ns));
  fmt::print(out, "\n");
}

}  // namespace perusetrace::report
