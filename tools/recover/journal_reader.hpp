// Reads what the ranks of a run left in its journal (lib/journal.hpp, journal_format.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clock.hpp"
#include "writer.hpp"

namespace perusetrace::recover {

struct RankJournal {
  int rank = -1;
  int size = 0;
  int version = 0;
  int regions = 0;
  std::string settings;
  trace::ProcessInfo process;
  TickScale scale;                        // the records' ticks to ns
  bool ended = false;                     // MPI_Finalize was reached
  std::string stopped;                    // how the program died, when a crash handler could say
  std::vector<std::string> record_files;  // per thread; "" where a thread left none
  std::vector<std::string> problems;      // lines that could not be read
};

// Every rank's journal in TRACE_DIR/journal. On failure `error` names the problem.
bool read_journal(const std::string& trace_dir, std::vector<RankJournal>& ranks,
                  std::string& error);

}  // namespace perusetrace::recover
