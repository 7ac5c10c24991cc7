#include "tools/run/run_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/settings.hpp"
#include "tools/common/build_paths.hpp"

extern char** environ;

using namespace perusetrace;
using perusetrace::tools::executable;
using perusetrace::tools::find_program;
using perusetrace::tools::library_path;

namespace {

// `perusetrace run --help`.
constexpr const char* kRunUsage = R"(usage: perusetrace run [OPTIONS] -np N -- PROGRAM [ARGS...]

Runs PROGRAM on N ranks with libperusetrace preloaded and writes an OTF2 trace.

options (each sets the MPITRACE_ variable of the same meaning; docs/settings.md):
  --events LIST        Peruse events: all, none, or e.g. REQ_XFER_BEGIN:REQ_XFER_END
                       (MPITRACE_PERUSE_EVENTS; default: request and message events)
  -o, --output DIR     trace directory (MPITRACE_OUTPUT; default PROGRAM-trace)
  --groups LIST        MPI function groups to trace, e.g. p2p,coll (MPITRACE_GROUPS)
  --buffer-size SIZE   per-thread buffer, e.g. 8M (MPITRACE_BUFFER_SIZE)
  --sampling PERIOD    sample each thread's MPI state and call stack, e.g. 1ms
                       (MPITRACE_SAMPLING; docs/sampling.md)
  --mode trace|sample  sample: samples only, no call, message or Peruse records
                       (MPITRACE_MODE)
  --ranks LIST         the ranks that collect, e.g. 0,4-7 (MPITRACE_RANKS)
  --pvars LIST         MPI_T performance variables to record: all, or names and globs,
                       e.g. runtime_spc_*,pml_ob1_* (MPITRACE_PVARS; `perusetrace mpit`)
  --pvar-read WHEN     call (every traced MPI call, the default) or a period, e.g. 10ms
                       (MPITRACE_PVAR_READ)
  --cvar NAME=VALUE    set an MPI_T control variable before MPI_Init (repeatable;
                       MPITRACE_CVARS)
  --mca NAME VALUE     an Open MPI MCA parameter for the run, passed to mpirun as
                       --mca NAME VALUE (repeatable): what the report's "what to try"
                       names, e.g. --mca btl_vader_eager_limit 9216
  --mpirun PATH        the mpirun to use (default: the one perusetrace was built with,
                       or MPITRACE_MPIRUN)
  --host LIST          hosts to run on, passed to mpirun (e.g. node1:4,node2:4)
  --hostfile FILE      a host file, passed to mpirun
  --mpirun-arg ARG     one more argument for mpirun (repeatable), e.g. --mpirun-arg=--map-by
                       --mpirun-arg=node
  -np N                number of ranks
  --                   ends the options; PROGRAM and its arguments follow
)";

// The options that set one MPITRACE_ variable for the ranks, as kRunUsage lists them.
constexpr std::pair<std::string_view, const char*> kSettingOptions[] = {
    {"--events", "MPITRACE_PERUSE_EVENTS"},
    {"-o", "MPITRACE_OUTPUT"},
    {"--output", "MPITRACE_OUTPUT"},
    {"--groups", "MPITRACE_GROUPS"},
    {"--buffer-size", "MPITRACE_BUFFER_SIZE"},
    {"--sampling", "MPITRACE_SAMPLING"},
    {"--mode", "MPITRACE_MODE"},
    {"--ranks", "MPITRACE_RANKS"},
    {"--pvars", "MPITRACE_PVARS"},
    {"--pvar-read", "MPITRACE_PVAR_READ"},
};

int run_usage_error(const std::string& why) {
  fmt::print(stderr, "perusetrace run: {}\n\n{}", why, kRunUsage);
  return 2;
}

struct Run {
  std::vector<std::pair<std::string, std::string>> env;  // MPITRACE_* to pass to the ranks
  std::string mpirun;
  std::string ranks;
  std::vector<std::string> hosts;        // mpirun's host options, in its own spelling
  std::vector<std::string> mpirun_args;  // passed on as they are
  std::vector<std::string> command;
};

}  // namespace

int run_main(int argc, char** argv) {
  Run r;
  std::string cvars;
  r.mpirun = tools::default_mpirun();
  int i = 0;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* variable) {
      if (i + 1 >= argc) return false;
      r.env.emplace_back(variable, argv[++i]);
      return true;
    };
    const auto setting = std::find_if(std::begin(kSettingOptions), std::end(kSettingOptions),
                                      [&](const auto& option) { return arg == option.first; });
    bool ok = true;
    if (arg == "--") {
      ++i;
      break;
    } else if (setting != std::end(kSettingOptions)) {
      ok = value(setting->second);
    } else if (arg == "--cvar") {
      ok = i + 1 < argc;
      if (ok) cvars += (cvars.empty() ? "" : ",") + std::string(argv[++i]);
    } else if (arg == "--mca") {
      ok = i + 2 < argc;
      if (ok) {
        r.mpirun_args.insert(r.mpirun_args.end(), {"--mca", argv[i + 1], argv[i + 2]});
        i += 2;
      }
    } else if (arg == "--mpirun") {
      ok = i + 1 < argc;
      if (ok) r.mpirun = argv[++i];
    } else if (arg == "--host" || arg == "--hostfile") {
      ok = i + 1 < argc;
      if (ok) r.hosts.insert(r.hosts.end(), {arg, argv[++i]});
    } else if (arg == "--mpirun-arg" || arg.rfind("--mpirun-arg=", 0) == 0) {
      ok = arg != "--mpirun-arg" || i + 1 < argc;
      if (ok) r.mpirun_args.push_back(arg == "--mpirun-arg" ? argv[++i] : arg.substr(13));
    } else if (arg == "-np" || arg == "-n") {
      ok = i + 1 < argc;
      if (ok) r.ranks = argv[++i];
    } else if (arg == "-h" || arg == "--help") {
      fmt::print("{}", kRunUsage);
      return 0;
    } else {
      return run_usage_error(fmt::format("unknown option '{}' (put the program after --)", arg));
    }
    if (!ok)
      return run_usage_error(arg == "--mca" ? std::string("--mca needs a NAME and a VALUE")
                                            : fmt::format("{} needs a value", arg));
  }
  if (!cvars.empty()) r.env.emplace_back("MPITRACE_CVARS", cvars);
  for (; i < argc; ++i) r.command.emplace_back(argv[i]);
  if (r.command.empty()) return run_usage_error("no program to run: give it after --");
  char* end = nullptr;
  const long ranks = std::strtol(r.ranks.c_str(), &end, 10);
  if (r.ranks.empty() || *end != '\0' || ranks < 1)
    return run_usage_error(
        fmt::format("-np needs a number of ranks of 1 or more, not '{}'", r.ranks));

  // The settings as the ranks will see them: this environment overridden by the options.
  const perusetrace::Settings settings = perusetrace::read_settings([&](const char* name) {
    for (auto it = r.env.rbegin(); it != r.env.rend(); ++it)
      if (it->first == name) return it->second.c_str();
    return static_cast<const char*>(std::getenv(name));
  });
  if (!settings.errors.empty()) {
    fmt::print(stderr, "perusetrace: nothing started, because of the settings:\n{}",
               settings.errors);
    return 2;
  }
  {
    // The launcher's options become variables too; what is left is the user's own.
    const std::string unknown = perusetrace::unknown_variables(environ);
    std::size_t start = 0;
    for (std::size_t end; (end = unknown.find('\n', start)) != std::string::npos; start = end + 1)
      fmt::print(stderr, "perusetrace: {}\n", unknown.substr(start, end - start));
  }
  const std::string program = find_program(r.command[0]);
  if (program.empty())
    return run_usage_error(fmt::format("'{}' is not an executable program", r.command[0]));
  if (!executable(r.mpirun))
    return run_usage_error(
        fmt::format("the mpirun '{}' cannot be run: give one with --mpirun", r.mpirun));
  const std::string library = library_path();
  if (::access(library.c_str(), R_OK) != 0)
    return run_usage_error(
        fmt::format("the tracing library {} is missing: build or install "
                    "perusetrace first",
                    library));

  std::vector<std::string> args = {r.mpirun};
  const bool openmpi = std::strcmp(PERUSETRACE_MPI_FLAVOUR, "openmpi") == 0;
  if (openmpi && ::geteuid() == 0) args.emplace_back("--allow-run-as-root");
  args.insert(args.end(), {"-np", r.ranks});
  // Remote ranks get the settings through -x/-genv below, as local ones do; the library must be
  // at the same path on every host (a shared file system, or the same install).
  for (std::size_t h = 0; h + 1 < r.hosts.size(); h += 2) {
    const bool file = r.hosts[h] == "--hostfile";
    args.insert(args.end(), {openmpi ? r.hosts[h] : (file ? "-f" : "-hosts"), r.hosts[h + 1]});
  }
  args.insert(args.end(), r.mpirun_args.begin(), r.mpirun_args.end());
  auto pass = [&](const std::string& name, const std::string& value) {
    if (openmpi) {
      args.insert(args.end(), {"-x", name + "=" + value});
    } else {
      args.insert(args.end(), {"-genv", name, value});
    }
  };
  // MPITRACE_* set in this environment reach the ranks too; the options win over them.
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (entry.rfind("MPITRACE_", 0) != 0 || eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    bool overridden = false;
    for (const auto& kv : r.env) overridden = overridden || kv.first == name;
    if (!overridden) pass(name, entry.substr(eq + 1));
  }
  for (const auto& [name, value] : r.env) pass(name, value);
  pass("LD_PRELOAD", library);
  args.insert(args.end(), r.command.begin(), r.command.end());

  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  ::execv(raw[0], raw.data());
  fmt::print(stderr, "perusetrace: cannot start {}: {}\n", r.mpirun, std::strerror(errno));
  return 127;
}
