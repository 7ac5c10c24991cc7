// perusetrace-analyze COMMAND ARGS: a command of perusetrace run as an MPI job, each rank
// reading a share of the archive (tools/common/analysis_group.hpp). `perusetrace COMMAND --np N`
// starts it; a user may start it with the build's mpirun as well.
#include <fmt/core.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/analyze/mpi_group.hpp"
#include "tools/common/tracer_preload.hpp"
#include "tools/profile/profile_main.hpp"
#include "tools/export/export_main.hpp"
#include "tools/prv/convert.hpp"

namespace {

constexpr const char* kUsage =
    "usage: mpirun -np N perusetrace-analyze COMMAND ARCHIVE [OPTIONS]\n"
    "\n"
    "A perusetrace command as an MPI job: each rank reads a share of the archive's ranks and\n"
    "the ranks combine what they found; rank 0 prints and writes the outputs, the same as the\n"
    "command's own. `perusetrace COMMAND --np N ...` starts it. COMMAND: profile, prv, export "
    "(--perfetto).\n";

struct Command {
  const char* name;
  int (*main)(int, char**);
};
constexpr Command kCommands[] = {
    {"profile", profile_main}, {"prv", prv_main}, {"export", export_main}};

// A libperusetrace preloaded into the job (mpirun -x LD_PRELOAD=...) would trace the analysis
// itself: the process starts again without it, before MPI starts.
void run_untraced(char** argv) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::strstr(preload, "libperusetrace") == nullptr) return;
  const std::string kept = perusetrace::tools::preload_without_tracer(preload);
  if (kept.empty()) {
    ::unsetenv("LD_PRELOAD");
  } else {
    ::setenv("LD_PRELOAD", kept.c_str(), 1);
  }
  ::execv("/proc/self/exe", argv);
  fmt::print(stderr, "perusetrace-analyze: cannot start again without libperusetrace: {}\n",
             std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  run_untraced(argv);
  MPI_Init(&argc, &argv);
  int rc = 2;
  {
    perusetrace::analyze::MpiGroup group;
    perusetrace::tools::set_analysis_group(group);
    const Command* command = nullptr;
    for (const Command& c : kCommands)
      if (argc >= 2 && std::strcmp(argv[1], c.name) == 0) command = &c;
    if (command != nullptr) {
      rc = command->main(argc - 2, argv + 2);
    } else if (group.rank() == 0) {
      if (argc >= 2) fmt::print(stderr, "perusetrace-analyze: no command '{}'\n\n", argv[1]);
      fmt::print(stderr, "{}", kUsage);
    }
    // The job's exit code is rank 0's, which alone speaks.
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  std::fflush(stdout);
  MPI_Finalize();
  return rc;
}
