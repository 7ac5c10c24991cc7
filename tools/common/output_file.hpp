// A tool's output file (--json, --html, --folded), written whole; on failure the tool named
// `who` says what failed and why, and the caller exits with its error code.
#pragma once

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
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

// A file the command writes only when asked for one (`path` not empty); its content is made
// only then, an HTML page being far more work than the text the command prints anyway.
struct OutputFile {
  const std::string& path;
  std::function<std::string()> content;
};

// Writes every file asked for, each even when one before it failed. Returns the command's exit
// code: 1 when any failed, else 0.
inline int write_output_files(const char* who, std::initializer_list<OutputFile> files) {
  bool ok = true;
  for (const OutputFile& f : files)
    if (!f.path.empty()) ok = write_output_file(who, f.path, f.content()) && ok;
  return ok ? 0 : 1;
}

}  // namespace perusetrace::tools
