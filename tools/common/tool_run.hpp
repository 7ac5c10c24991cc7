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
#include "tools/common/command_line.hpp"

namespace perusetrace::tools {

// Runs `work` (returning the exit code); an archive it cannot read, or any other failure,
// becomes one line "perusetrace TOOL: ..." and exit code 1.
template <typename Work>
int run_tool(const char* tool, Work&& work) {
  try {
    return work();
  } catch (const archive::ArchiveError& e) {
    fmt::print(stderr, "perusetrace {}: {}\n", tool, e.what());
  } catch (const std::exception& e) {
    fmt::print(stderr, "perusetrace {}: the {} failed: {}\n", tool, tool, e.what());
  }
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
