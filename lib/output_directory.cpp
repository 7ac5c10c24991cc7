#include "lib/output_directory.hpp"

#include <errno.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <vector>

#include "lib/journal.hpp"
#include "lib/world.hpp"
#include "record/clock.hpp"
#include "record/journal_format.hpp"

extern char* program_invocation_short_name;  // glibc

namespace perusetrace {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string choose_directory(const Settings& s, const std::string& spawned, std::string& why) {
  if (!spawned.empty()) return journal::create_directories(spawned, why) ? spawned : "";
  std::string base =
      s.output.empty() ? std::string(program_invocation_short_name) + "-trace" : s.output;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  std::string dir = base;
  for (int n = 1; exists(dir) && n < 10000; ++n) dir = base + "." + std::to_string(n);
  if (dir != base) {
    std::fprintf(stderr, "perusetrace: %s already exists; writing this trace to %s instead.\n",
                 base.c_str(), dir.c_str());
  }
  const std::string parent = parent_of(dir);
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    why = "cannot write the trace to " + dir + ": " + parent + " " +
          (errno == ENOENT ? "does not exist" : "is not writable") +
          ". Set MPITRACE_OUTPUT to a directory path in a writable place.";
    return "";
  }
  if (!journal::create_directories(dir, why)) return "";
  return dir;
}

// Ranks on different hosts may see different files under one path (a node-local scratch
// directory): each checks that it sees the token rank 0 left in the directory it chose. A trace
// with the other hosts' ranks missing would look whole; the run goes untraced instead, saying
// which hosts and what to set.
bool same_directory_everywhere(const std::string& dir, int rank, int size) {
  const std::string path = dir + "/.perusetrace-run";
  std::string token;
  if (rank == 0) {
    token = std::to_string(realtime_ns()) + "-" + std::to_string(::getpid()) + "-" + host_name();
    FILE* f = std::fopen(path.c_str(), "w");
    const bool written = f != nullptr && std::fputs(token.c_str(), f) >= 0;
    if (f == nullptr || std::fclose(f) != 0 || !written) token.clear();
  }
  // Rank 0 could not leave its token (a full disk, say): nothing to compare, and opening the
  // journal there says what is wrong.
  token = broadcast(token);
  if (token.empty()) {
    if (rank == 0) std::remove(path.c_str());
    return true;
  }
  char seen[256] = {0};
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    if (std::fgets(seen, sizeof seen, f) == nullptr) seen[0] = '\0';
    std::fclose(f);
  }
  const bool mine = token == seen;
  const bool all = all_ranks(mine);
  if (!all) {
    // Only now, and only the hosts that cannot see it, travel to rank 0.
    char host[64] = {0};
    if (!mine) std::snprintf(host, sizeof host, "%s", host_name().c_str());
    std::vector<char> hosts(rank == 0 ? sizeof host * size : 0);
    PMPI_Gather(host, sizeof host, MPI_CHAR, hosts.data(), sizeof host, MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank == 0) {
      std::set<std::string> unseen;
      int ranks = 0;
      for (int r = 0; r < size; ++r) {
        const std::string h(&hosts[static_cast<std::size_t>(r) * sizeof host]);
        if (!h.empty()) ++ranks, unseen.insert(h);
      }
      std::string names;
      for (const std::string& h : unseen) names += (names.empty() ? " " : ", ") + h;
      std::fprintf(stderr,
                   "perusetrace: the trace directory %s is not the same directory on every host: "
                   "%d rank(s) on%s do not see what rank 0 (on %s) wrote there (a node-local "
                   "disk?). Set MPITRACE_OUTPUT to a directory on a file system every host "
                   "shares. The program runs untraced.\n",
                   dir.c_str(), ranks, names.c_str(), host_name().c_str());
    }
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::remove(path.c_str());
    if (!all) {
      ::rmdir(journal::directory(dir).c_str());
      ::rmdir(dir.c_str());
    }
  }
  return all;
}

}  // namespace perusetrace
