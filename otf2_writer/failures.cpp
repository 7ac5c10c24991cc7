// What the writer does when writing fails: it stops (later records are dropped, what was
// written stays), and the user is told once what went wrong and what to do.
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdio>

#include "otf2_writer/internal.hpp"

namespace perusetrace::trace::detail {

void fail(const std::string& what) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.failed.exchange(true)) return;
  if (s.quiet_failures) {
    s.first_failure = what;
  } else {
    std::fprintf(stderr, "perusetrace rank %d: %s\n", s.spec.rank, what.c_str());
  }
}

std::string write_remedy(const std::string& directory) {
  struct statvfs fs;
  const bool full = ::statvfs(directory.c_str(), &fs) == 0 && fs.f_bavail == 0;
  // A directory being removed loses its files and traces/ before itself: with room left on the
  // file system, an archive whose traces/ is missing is going away, not out of space.
  const bool going = !full && ::access((directory + "/traces").c_str(), F_OK) != 0;
  if (going || ::access(directory.c_str(), W_OK | X_OK) != 0)
    return "The output directory " + directory +
           " is gone or no longer writable: set MPITRACE_OUTPUT to a directory that stays for "
           "the whole run.";
  return "Free space in " + directory + " or set MPITRACE_OUTPUT elsewhere.";
}

}  // namespace perusetrace::trace::detail
