// What every command that reads an archive does around its work: one message with exit code 1
// for an archive it cannot read, or any other failure.
#pragma once

#include <fmt/core.h>

#include <exception>
#include <initializer_list>
#include <string>
#include <utility>

#include "reader/archive_reader.hpp"
#include "reader/progress_bar.hpp"
#include "tools/common/analysis_group.hpp"
#include "tools/common/command_line.hpp"

namespace perusetrace::tools {

// Runs `work` (returning the exit code); an archive it cannot read, or any other failure,
// becomes one line "perusetrace TOOL: ..." and exit code 1. In a parallel analysis the ranks
// agree on their failures first (AnalysisGroup::agree), so rank 0 alone says it, once.
template <typename Work>
int run_tool(const char* tool, Work&& work) {
  std::string message;
  try {
    return work();
  } catch (const archive::ArchiveError& e) {
    message = fmt::format("perusetrace {}: {}\n", tool, e.what());
  } catch (const std::exception& e) {
    message = fmt::format("perusetrace {}: the {} failed: {}\n", tool, tool, e.what());
  }
  if (analysis_group().rank() == 0) fmt::print(stderr, "{}", message);
  return 1;
}

// A command that reads one archive, whole: its command line (parse_command_line), then `work`
// under run_tool.
template <typename Work>
int run_command(const char* command, const char* usage, int argc, char** argv,
                std::initializer_list<Option> options, std::string& archive, Work&& work) {
  const int rc = parse_command_line(command, usage, argc, argv, options, archive);
  return rc >= 0 ? rc : run_tool(command, std::forward<Work>(work));
}

}  // namespace perusetrace::tools
