#include "tools/mpit/mpit_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "tools/common/build_paths.hpp"

using namespace perusetrace;

namespace {

constexpr const char* kMpitUsage = R"(usage: perusetrace mpit [--pvars | --cvars]

Lists the MPI_T performance variables (PVARs) and control variables (CVARs) of the MPI
perusetrace was built with, from a 1-rank job of its mpirun (MPITRACE_MPIRUN to use another),
with class, binding, type and description: the names MPITRACE_PVARS and MPITRACE_CVARS take
(docs/mpit.md).

  --pvars        only the performance variables
  --cvars        only the control variables
)";

}  // namespace

int mpit_main(int argc, char** argv) {
  const char* mpirun = tools::default_mpirun();
  const std::string helper =
      tools::in_build_tree() ? PERUSETRACE_BUILD_MPIT : PERUSETRACE_INSTALLED_MPIT;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      fmt::print("{}", kMpitUsage);
      return 0;
    }
    if (std::strcmp(argv[i], "--pvars") != 0 && std::strcmp(argv[i], "--cvars") != 0) {
      fmt::print(stderr, "perusetrace mpit: takes --pvars or --cvars, not '{}'\n\n{}", argv[i],
                 kMpitUsage);
      return 2;
    }
  }
  std::vector<std::string> args = {mpirun};
  if (std::strcmp(PERUSETRACE_MPI_FLAVOUR, "openmpi") == 0 && ::geteuid() == 0)
    args.emplace_back("--allow-run-as-root");
  args.insert(args.end(), {"-np", "1", helper});
  args.insert(args.end(), argv, argv + argc);
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  ::execv(raw[0], raw.data());
  fmt::print(stderr, "perusetrace: cannot start {}: {}\n", mpirun, std::strerror(errno));
  return 127;
}
