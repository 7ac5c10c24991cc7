// Where the programs and the library perusetrace starts are: the build tree's when the front end
// runs from it, the installed ones otherwise. The paths come from the build (tools/meson.build).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace perusetrace::tools {

inline bool executable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

// PROGRAM as mpirun will find it: a path, or a name looked up in PATH.
inline std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return executable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    const std::string candidate = dirs.substr(start, colon - start) + "/" + name;
    if (executable(candidate)) return candidate;
    start = colon + 1;
  }
  return "";
}

inline bool in_build_tree() {
  char self[4096] = {0};
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string exe = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : "";
  return exe.rfind(std::string(PERUSETRACE_BUILD_ROOT) + "/", 0) == 0;
}

// The library next to this program: the build tree's, or the installed one.
inline std::string library_path() {
  return in_build_tree() ? PERUSETRACE_BUILD_LIBRARY : PERUSETRACE_INSTALLED_LIBRARY;
}

// The mpirun to start ranks with: MPITRACE_MPIRUN, or the one perusetrace was built with.
inline const char* default_mpirun() {
  const char* chosen = std::getenv("MPITRACE_MPIRUN");
  return chosen ? chosen : PERUSETRACE_MPIRUN;
}

}  // namespace perusetrace::tools
