#include "tools/report/rma_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <string>

namespace perusetrace::report {

namespace {

std::string traffic_text(const RmaTraffic& t) {
  return fmt::format("{:>6} ops ({} put, {} get, {} atomic), {} bytes to target, {} from it",
                     t.operations(), t.puts, t.gets, t.atomics, t.bytes_sent, t.bytes_received);
}

std::string time_text(std::uint64_t calls, std::uint64_t ns) {
  if (calls == 0) return "-";
  return fmt::format("{} x {:.3f} ms", calls, static_cast<double>(ns) / 1e6);
}

}  // namespace

void write_rma_text(std::FILE* out, const Rma& rma) {
  if (!rma.present) return;
  fmt::print(out, "\nOne-sided communication (RMA)\n  per window (communicator):\n");
  std::size_t width = 0;
  for (const RmaWindowStat& w : rma.windows)
    width = std::max(width, w.name.size() + w.comm.size() + 3);
  for (const RmaWindowStat& w : rma.windows)
    fmt::print(out, "    {:<{}} {}\n", fmt::format("{} ({})", w.name, w.comm), width,
               traffic_text(w.traffic));
  fmt::print(out, "  per origin -> target (world ranks):\n");
  if (rma.pairs.empty()) fmt::print(out, "    no operations\n");
  for (const auto& [pair, t] : rma.pairs)
    fmt::print(out, "    {:>5} -> {:<5} {}\n", pair.first, pair.second, traffic_text(t));
  fmt::print(out, "  time in synchronisation calls (calls x time):\n    {:<6}", "rank");
  for (const char* name : kRmaSyncNames) fmt::print(out, " {:>20}", name);
  fmt::print(out, "\n");
  for (std::size_t r = 0; r < rma.sync.size(); ++r) {
    fmt::print(out, "    {:<6}", r);
    for (unsigned k = 0; k < kRmaSyncKinds; ++k)
      fmt::print(out, " {:>20}", time_text(rma.sync[r].calls[k], rma.sync[r].ns[k]));
    fmt::print(out, "\n");
  }
  if (rma.never_completed > 0)
    fmt::print(out,
               "  {} operations never completed in the trace (the run ended inside their "
               "epoch)\n",
               rma.never_completed);
}

}  // namespace perusetrace::report
