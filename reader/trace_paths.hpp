// Where a tool puts its output by default: next to the trace directory, named after it.
#pragma once

#include <unistd.h>

#include <string>

namespace perusetrace::archive {

// The directory holding the archive `anchor` (DIR/traces.otf2), without a trailing slash; the
// working directory's absolute path when the anchor has no directory part.
inline std::string trace_directory(const std::string& anchor) {
  const auto slash = anchor.rfind('/');
  std::string dir = slash == std::string::npos ? std::string(".") : anchor.substr(0, slash);
  if (dir.empty()) dir = "/";
  if (dir == ".") {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) dir = cwd;
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace perusetrace::archive
