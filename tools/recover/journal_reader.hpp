// Reads what the ranks of a run left in its journal (lib/journal.hpp, journal_format.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "otf2_writer/writer.hpp"
#include "record/global_clock.hpp"

namespace perusetrace::recover {

struct RankJournal {
  int rank = -1;
  int size = 0;
  int version = 0;
  int regions = 0;
  std::string settings;
  trace::ProcessInfo process;             // times on the rank's own clock until recover maps them
  GlobalClock clock;                      // the records' ticks to the run's global ns
  bool have_scale = false;                // else the records' ticks are taken for ns
  std::uint64_t last_clock_point = 0;     // ns of the last clock point the rank noted, or 0
  bool ended = false;                     // MPI_Finalize was reached
  std::string stopped;                    // how the program died, when a crash handler could say
  std::uint64_t cut_ticks = 0;            // when the journal reached MPITRACE_MAX_SIZE, or 0
  std::vector<std::string> record_files;  // per thread; "" where a thread left none
  std::vector<std::string> buffer_files;  // per thread, as many as record_files; "": none
  std::vector<std::string> problems;      // lines that could not be read (printable)
  std::uint64_t more_problems = 0;        // unreadable lines beyond those kept in `problems`
  std::string definitions_file;           // "" when the rank left none
  bool has_header = false;                // the definitions file starts as the runtime writes it
};

// Every rank's journal in TRACE_DIR/journal. On failure `error` names the problem and the fix.
// `ignored` gets a line for each file of the journal directory that is not the runtime's.
bool read_journal(const std::string& trace_dir, std::vector<RankJournal>& ranks,
                  std::vector<std::string>& ignored, std::string& error);

}  // namespace perusetrace::recover
