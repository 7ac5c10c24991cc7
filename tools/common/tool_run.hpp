// What every command that reads an archive does around its work: one message with exit code 1
// for an archive it cannot read, or any other failure.
#pragma once

#include <fmt/core.h>

#include <exception>

#include "reader/archive_reader.hpp"
#include "reader/progress_bar.hpp"

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

}  // namespace perusetrace::tools
