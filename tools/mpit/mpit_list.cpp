// `perusetrace mpit`: what this MPI offers through MPI_T, run as a 1-rank MPI job (the launcher
// starts it). PVARs are listed after MPI_Init, when components have registered theirs.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

// A comment line counting the variables and naming the columns, then a tab-separated line each.
template <typename Info, typename Columns>
void print_variables(const char* what, const std::vector<Info>& variables, Columns columns) {
  std::printf("# %zu %s\n", variables.size(), what);
  for (const Info& v : variables) {
    const char* separator = "";
    for (const std::string& column : columns(v)) {
      std::printf("%s%s", separator, column.c_str());
      separator = "\t";
    }
    std::printf("\n");
  }
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
  if (want_pvars)
    print_variables(
        "performance variables (PVARs): name, class, bind, datatype, read-only, "
        "continuous, description",
        mpit::pvars(), [](const mpit::PvarInfo& p) -> std::vector<std::string> {
          return {"pvar",
                  p.name,
                  mpit::class_name(p.var_class),
                  mpit::bind_name(p.bind),
                  mpit::type_name(p.datatype),
                  p.readonly ? "read-only" : "writable",
                  p.continuous ? "continuous" : "startable",
                  one_line(p.description)};
        });
  if (want_cvars)
    print_variables("control variables (CVARs): name, value, datatype, scope, bind, description",
                    mpit::cvars(), [](const mpit::CvarInfo& c) -> std::vector<std::string> {
                      std::string error;
                      const std::string value = mpit::read_cvar(c, error);
                      return {"cvar",
                              c.name,
                              error.empty() ? value : "(" + error + ")",
                              mpit::type_name(c.datatype),
                              mpit::scope_name(c.scope),
                              mpit::bind_name(c.bind),
                              one_line(c.description)};
                    });
  PMPI_T_finalize();
  PMPI_Finalize();
  return 0;
}
