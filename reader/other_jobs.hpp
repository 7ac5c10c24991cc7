// The other MPI jobs an archive names (Definitions::jobs): where their own archives are, and how
// the tools say what they are.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

// `job`'s archive as a path from where the tool runs, next to `anchor` (this archive's
// traces.otf2): "DIR/spawn-1/traces.otf2", "DIR/../traces.otf2" made "PARENT/traces.otf2" where
// DIR has a parent in the path. "" when the archive does not say where it is.
inline std::string job_archive(const std::string& anchor, const JobDef& job) {
  if (job.archive.empty()) return "";
  const auto slash = anchor.rfind('/');
  std::string dir = slash == std::string::npos ? std::string(".") : anchor.substr(0, slash);
  std::string rest = job.archive;
  // "x/y/../traces.otf2" reads better as "x/traces.otf2" (a path's own ".." parts are kept).
  while (rest.rfind("../", 0) == 0) {
    const auto up = dir.rfind('/');
    const std::string last = up == std::string::npos ? dir : dir.substr(up + 1);
    if (last.empty() || last == "." || last == "..") break;
    dir = up == std::string::npos ? std::string(".")
                                  : (up == 0 ? std::string("/") : dir.substr(0, up));
    rest = rest.substr(3);
  }
  if (rest.rfind("../", 0) == 0 || dir != ".") return (dir == "/" ? "" : dir) + "/" + rest;
  return rest;
}

// The trace directory of an archive path ("DIR/traces.otf2" -> "DIR").
inline std::string trace_directory_of(const std::string& archive) {
  const auto slash = archive.rfind('/');
  return slash == std::string::npos ? std::string(".") : archive.substr(0, slash);
}

inline bool job_archive_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// What JobDef::relation says, for the user.
inline std::string job_relation_text(const std::string& relation) {
  if (relation == "spawned") return "spawned by this job";
  if (relation == "parent") return "the job that spawned this one";
  return "connected to this job";
}

}  // namespace perusetrace::archive
