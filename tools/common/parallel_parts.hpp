// Where the analysis ranks of a parallel conversion (prv, export --perfetto) put their parts
// of the output before rank 0 joins them: a directory beside the output, which every analysis
// rank must see (a shared file system on a cluster), and which goes when the run ends, done or
// failed. Also which analysis rank converts each traced rank.
#pragma once

#include <fmt/core.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/location_share.hpp"
#include "tools/common/analysis_group.hpp"

namespace perusetrace::tools {

// Collective: rank 0 makes OUTPUT.parts-XXXXXX; every rank gets its path. Throws
// archive::ArchiveError on every rank when it cannot; `fix` says how to write elsewhere.
inline std::string parts_directory(AnalysisGroup& group, const std::string& output,
                                   const char* fix) {
  std::string dir;
  if (group.rank() == 0) {
    std::string pattern = output + ".parts-XXXXXX";
    dir = ::mkdtemp(pattern.data()) != nullptr
              ? pattern
              : "!" + fmt::format(
                          "cannot create the directory {} beside the output: {}. Check "
                          "that it is writable and has free space, or {}.",
                          pattern, std::strerror(errno), fix);
  }
  group.broadcast(dir);
  if (!dir.empty() && dir[0] == '!') throw archive::ArchiveError(dir.substr(1));
  return dir;
}

inline std::string part_path(const std::string& dir, unsigned rank) {
  return fmt::format("{}/part{:06}", dir, rank);
}

// The parts' directory and what is left in it (a failed run's parts).
inline void remove_parts(const std::string& dir, unsigned parts) {
  if (dir.empty()) return;
  for (unsigned r = 0; r < parts; ++r) ::unlink(part_path(dir, r).c_str());
  ::rmdir(dir.c_str());
}

// The analysis rank of `parts` that reads each traced (world) rank.
inline std::vector<unsigned> share_owners(const archive::Definitions& defs, unsigned parts) {
  std::vector<unsigned> owner(defs.ranks.size(), 0);
  for (unsigned p = 0; p < parts; ++p)
    for (const std::uint32_t r : archive::ranks_of_share(defs, p, parts)) owner[r] = p;
  return owner;
}

}  // namespace perusetrace::tools
