// perusetrace: the command-line front end. Each command lives in a folder of its own under
// tools/; this file only lists them and dispatches.
#include <fmt/core.h>
#include <sys/stat.h>

#include <cstring>
#include <string>

#include "tools/common/parallel_launch.hpp"
#include "tools/diff/diff_main.hpp"
#include "tools/export/export_main.hpp"
#include "tools/info/info_main.hpp"
#include "tools/mpit/mpit_main.hpp"
#include "tools/profile/profile_main.hpp"
#include "tools/prv/convert.hpp"
#include "tools/recover/recover.hpp"
#include "tools/report/report_main.hpp"
#include "tools/run/run_main.hpp"

namespace {

int usage_error(const std::string& why) {
  fmt::print(stderr, "perusetrace: {}\n(perusetrace --help lists the commands)\n", why);
  return 2;
}

// `prv`, `report`, `profile`, `export` and `diff` on a run that died before MPI_Finalize: say what
// to do instead of failing to open an archive that does not exist yet.
bool needs_recovery(const char* command, int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    std::string path = argv[i];
    if (path.empty() || path[0] == '-') continue;
    const std::string anchor = "/traces.otf2";
    if (path.size() >= anchor.size() &&
        path.compare(path.size() - anchor.size(), anchor.size(), anchor) == 0)
      path.resize(path.size() - anchor.size());
    struct stat st;
    if (::stat((path + anchor).c_str(), &st) == 0 ||
        ::stat((path + "/journal").c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      continue;  // a later argument may be the archive (diff takes two)
    fmt::print(stderr,
               "perusetrace {}: {} holds the journal of a run that did not reach MPI_Finalize, "
               "not an archive yet: run `perusetrace recover {}` first.\n",
               command, path, path);
    return true;
  }
  return false;
}

// Every command, once: `perusetrace --help` lists them and main() dispatches by this table.
struct Command {
  const char* name;
  const char* summary;
  int (*main)(int, char**);
  bool reads_archive;     // refused with a word about `recover` on a journal without an archive
  bool parallel = false;  // runs as an MPI job with --np N (tools/analyze)
};

constexpr Command kCommands[] = {
    {"run", "trace a program: run it on N ranks with libperusetrace preloaded", run_main, false},
    {"report", "analyse a trace: time in MPI, messages, wait patterns, queues, protocols",
     report_main, true},
    {"prv", "convert a trace to Paraver (.prv, .pcf, .row)", prv_main, true, true},
    {"profile", "time per call path and MPI state from a sampled trace (MPITRACE_SAMPLING)",
     profile_main, true, true},
    {"export", "write a trace in another tool's format (Perfetto JSON, HDTrace XML)", export_main,
     true, true},
    {"diff", "compare two traces' reports (before and after a change)", diff_main, true},
    {"info", "what a trace holds: settings, ranks per host, clocks, events traced", info_main,
     true},
    {"recover", "build the archive of a run that died before MPI_Finalize", recover_main, false},
    {"mpit", "list the MPI's MPI_T performance and control variables", mpit_main, false},
};

void print_commands() {
  fmt::print(
      "usage: perusetrace COMMAND [ARGS...]   (perusetrace COMMAND --help: its options)\n"
      "       perusetrace --version\n\ncommands:\n");
  for (const Command& c : kCommands) fmt::print("  {:<10}{}\n", c.name, c.summary);
  fmt::print(
      "\nTracing needs no command: preload or link libperusetrace and set MPITRACE_* variables\n"
      "(README.md). `perusetrace run` checks them before any rank starts.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_commands();
    return 2;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_commands();
    return 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    fmt::print("perusetrace {}\n", PERUSETRACE_VERSION);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    if (c.reads_archive && needs_recovery(c.name, argc - 2, argv + 2)) return 1;
    if (c.parallel) {
      if (const int rc = perusetrace::tools::launch_parallel(c.name, argc - 2, argv + 2); rc >= 0)
        return rc;
    } else if (c.reads_archive) {
      for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--np") == 0) {
          fmt::print(
              stderr,
              "perusetrace {}: --np: only `perusetrace profile` and `prv` run as parallel "
              "analyses so far (docs/parallel-analysis.md); run `perusetrace {}` without --np\n",
              c.name, c.name);
          return 2;
        }
    }
    return c.main(argc - 2, argv + 2);
  }
  return usage_error(fmt::format("unknown command '{}'", argv[1]));
}
