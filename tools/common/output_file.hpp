// A tool's output file (--json, --html, --folded), written whole; on failure the tool named
// `who` says what failed and why, and the caller exits with its error code.
#pragma once

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace perusetrace::tools {

inline bool write_output_file(const char* who, const std::string& path,
                              const std::string& content) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    fmt::print(stderr, "perusetrace {}: cannot write {}: {}\n", who, path, std::strerror(errno));
    return false;
  }
  const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  if (std::fclose(f) != 0 || !ok) {
    fmt::print(stderr, "perusetrace {}: writing {} failed: {}\n", who, path, std::strerror(errno));
    return false;
  }
  return true;
}

}  // namespace perusetrace::tools
