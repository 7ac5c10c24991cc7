// `perusetrace mpit`: what this MPI offers through MPI_T, run as a 1-rank MPI job (the launcher
// starts it). PVARs are listed after MPI_Init, when components have registered theirs.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "lib/mpit_variables.hpp"

namespace mpit = perusetrace::mpit;

namespace {

// Descriptions are written by each MPI's components: some end in newlines, some are empty.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s.empty() ? "-" : s;
}

}  // namespace

int main(int argc, char** argv) {
  bool want_pvars = true, want_cvars = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--pvars") == 0) want_cvars = false;
    if (std::strcmp(argv[i], "--cvars") == 0) want_pvars = false;
  }
  PMPI_Init(&argc, &argv);
  if (!mpit::initialise()) {
    std::fprintf(stderr, "perusetrace mpit: this MPI's tool interface (MPI_T) does not start\n");
    PMPI_Finalize();
    return 1;
  }
  if (want_pvars) {
    const auto pvars = mpit::pvars();
    std::printf(
        "# %zu performance variables (PVARs): name, class, bind, datatype, "
        "read-only, continuous, description\n",
        pvars.size());
    for (const mpit::PvarInfo& p : pvars)
      std::printf("pvar\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.name.c_str(),
                  mpit::class_name(p.var_class), mpit::bind_name(p.bind),
                  mpit::type_name(p.datatype), p.readonly ? "read-only" : "writable",
                  p.continuous ? "continuous" : "startable", one_line(p.description).c_str());
  }
  if (want_cvars) {
    const auto cvars = mpit::cvars();
    std::printf(
        "# %zu control variables (CVARs): name, value, datatype, scope, bind, "
        "description\n",
        cvars.size());
    for (const mpit::CvarInfo& c : cvars) {
      std::string error;
      const std::string value = mpit::read_cvar(c, error);
      std::printf("cvar\t%s\t%s\t%s\t%s\t%s\t%s\n", c.name.c_str(),
                  error.empty() ? value.c_str() : ("(" + error + ")").c_str(),
                  mpit::type_name(c.datatype), mpit::scope_name(c.scope), mpit::bind_name(c.bind),
                  one_line(c.description).c_str());
    }
  }
  PMPI_T_finalize();
  PMPI_Finalize();
  return 0;
}
