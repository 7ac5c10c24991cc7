// `perusetrace COMMAND --np N ...`: the command's analysis as an MPI job of N ranks of
// perusetrace-analyze (tools/analyze), started with the mpirun perusetrace was built with. The
// job is never traced: a libperusetrace in LD_PRELOAD is left out of its environment.
#pragma once

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/common/build_paths.hpp"
#include "tools/common/tracer_preload.hpp"

namespace perusetrace::tools {

// The analyzer program: the build tree's, or the installed one.
inline std::string analyzer_path() {
  return in_build_tree() ? PERUSETRACE_BUILD_ANALYZE : PERUSETRACE_INSTALLED_ANALYZE;
}

// Returns -1 when argv (the command's arguments) has no --np: the command runs here. Otherwise
// starts the job in place of this process, or returns the exit code of a wrong --np or
// --mpirun-arg (2) or of an mpirun that cannot start (127).
inline int launch_parallel(const char* command, int argc, char** argv) {
  std::string np;
  std::vector<std::string> mpirun_args, rest;
  bool asked = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--np" || arg == "--mpirun-arg") {
      if (i + 1 >= argc) {
        fmt::print(stderr, "perusetrace {}: {} needs a value\n", command, arg);
        return 2;
      }
      if (arg == "--np") {
        asked = true;
        np = argv[++i];
      } else {
        mpirun_args.emplace_back(argv[++i]);
      }
    } else {
      rest.push_back(arg);
    }
  }
  if (!asked) {
    if (!mpirun_args.empty()) {
      fmt::print(stderr, "perusetrace {}: --mpirun-arg goes with --np N\n", command);
      return 2;
    }
    return -1;
  }
  char* end = nullptr;
  const long ranks = std::strtol(np.c_str(), &end, 10);
  if (np.empty() || *end != '\0' || ranks < 1 || ranks > 1'000'000) {
    fmt::print(stderr,
               "perusetrace {}: --np takes the number of analysis ranks, 1 or more, not '{}'\n",
               command, np);
    return 2;
  }
  const std::string mpirun = default_mpirun();
  const bool openmpi = std::strcmp(PERUSETRACE_MPI_FLAVOUR, "openmpi") == 0;
  std::vector<std::string> args = {mpirun};
  if (openmpi && ::geteuid() == 0) args.emplace_back("--allow-run-as-root");
  // More analysis ranks than cores is slower, not wrong: the analysis is the same.
  if (openmpi) args.emplace_back("--oversubscribe");
  args.insert(args.end(), {"-np", np});
  args.insert(args.end(), mpirun_args.begin(), mpirun_args.end());
  args.insert(args.end(), {analyzer_path(), command});
  args.insert(args.end(), rest.begin(), rest.end());
  const std::string preload = preload_without_tracer(std::getenv("LD_PRELOAD"));
  if (preload.empty()) {
    ::unsetenv("LD_PRELOAD");
  } else {
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
  }
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  ::execv(raw[0], raw.data());
  fmt::print(stderr, "perusetrace {}: cannot start {}: {}\n", command, mpirun,
             std::strerror(errno));
  return 127;
}

}  // namespace perusetrace::tools
