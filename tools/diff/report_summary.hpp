// What `perusetrace diff` compares of a report: read from a report's JSON (docs/report-schema.md)
// whether the report was written by `report --json` earlier or made from an archive just now, so
// that both kinds of input are compared by one reading.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/common/tool_run.hpp"
#include "tools/diff/json_value.hpp"

namespace perusetrace::diff {

struct FunctionTime {
  std::uint64_t ns = 0, calls = 0;  // summed over the ranks
};

struct PatternTotals {
  bool available = false;
  std::uint64_t count = 0;
  double total_ns = 0;
};

struct InsideTotals {
  std::uint64_t count = 0;
  double ns = 0;
};

struct SizeClassTotals {
  std::string label;
  std::uint64_t messages = 0, bytes = 0;
  std::uint64_t measured = 0;  // receives with a physical duration
  double bandwidth = 0;        // their bytes over their physical time, bytes/s
};

struct ReportSummary {
  std::string source;   // as given on the command line
  std::string archive;  // the report's archive
  std::size_t ranks = 0;
  std::uint64_t trace_ns = 0, events = 0;
  std::uint64_t mpi_ns = 0;  // outermost MPI calls, summed over the ranks
  std::map<std::string, FunctionTime> functions;
  // Peruse's measures of messages and requests (no process's lost time).
  PatternTotals posted_queue, posted_queue_in_collectives, unexpected_queue, complete_before_wait;
  // The wait states by pattern key (late_sender, wait_at_nxn, ...); absent in older reports.
  std::map<std::string, PatternTotals> waits;
  std::vector<std::string> wait_order;             // the keys in the report's order
  std::map<std::string, std::string> wait_titles;  // key -> "Late sender", ...
  bool messages_available = false;
  std::vector<SizeClassTotals> size_classes;
  std::uint64_t p2p_messages = 0, p2p_bytes = 0;  // the MPI send records (the report's matrix)
  std::uint64_t requests[2][2] = {};  // Peruse requests [send, receive][eager, rendezvous]
  // Inside MPI (absent in older reports): the costs "what to try" names.
  bool inside_available = false;
  InsideTotals handshakes;     // rendezvous handshakes, both placements
  InsideTotals copies;         // eager messages copied twice, and the copies' time
  InsideTotals deep_searches;  // posted-queue searches past 64 or more receives
};

// Reads `path`: a report JSON file (`perusetrace report --json`), or an archive (a trace
// directory or its traces.otf2), which is analysed as `perusetrace report` does. Throws
// archive::ArchiveError naming what is wrong with the input.
ReportSummary load_report(const std::string& path, archive::ProgressBar& bar);

// The summary of a report's parsed JSON; `source` names it in errors.
ReportSummary summarize(const JsonValue& report, const std::string& source);

}  // namespace perusetrace::diff
