// libFuzzer target for the readers of untrusted files: `perusetrace report`, `prv`, `export`
// and `profile` on an OTF2 archive, `perusetrace recover` on a journal. The first input byte picks
// a file of a small real trace (or of the journal of a run that died) and the rest replaces it; the
// tool then runs on the damaged copy. Anything but a clean return (an exit code) is a finding:
// AddressSanitizer, UndefinedBehaviorSanitizer, an escaped exception, a hang. Built and run by
// run_fuzz.sh.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "tools/export/export_main.hpp"
#include "tools/profile/profile_main.hpp"
#include "tools/prv/convert.hpp"
#include "tools/recover/recover.hpp"
#include "tools/report/report_main.hpp"

namespace fs = std::filesystem;

namespace {

// Relative to the trace copy (0-4) or the journal copy (5-7).
const char* const kTargets[] = {
    "traces.otf2",
    "traces.def",
    "traces/0.def",
    "traces/0.evt",
    "traces/1.evt",
    "journal/rank-0.defs",
    "journal/rank-0.thread-0.records",
    "journal/rank-1.defs",
};
constexpr std::size_t kTraceFiles = 5;
constexpr std::size_t kTargetCount = sizeof kTargets / sizeof kTargets[0];

fs::path g_work, g_trace, g_died, g_prv_out;

// The copies are only a scratch space: libFuzzer saves a finding's input on its own
// (-artifact_prefix), so nothing in here is worth keeping after the run.
void remove_work() {
  std::error_code ignored;
  fs::remove_all(g_work, ignored);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void spill(const fs::path& p, const char* data, std::size_t size) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
}

int call(int (*main_fn)(int, char**), std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return main_fn(static_cast<int>(args.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* seeds = std::getenv("PERUSETRACE_FUZZ_SEEDS");
  if (seeds == nullptr) seeds = PERUSETRACE_FUZZ_SEEDS;
  std::string work_template = (fs::temp_directory_path() / "perusetrace-fuzz-XXXXXX").string();
  if (::mkdtemp(work_template.data()) == nullptr) {
    std::fprintf(stderr,
                 "archive_fuzz: cannot create %s: %s (set TMPDIR to a writable directory)\n",
                 work_template.c_str(), std::strerror(errno));
    std::exit(1);
  }
  const fs::path work = work_template;
  g_work = work;
  std::atexit(remove_work);
  fs::copy(fs::path(seeds) / "trace", work / "trace", fs::copy_options::recursive);
  fs::copy(fs::path(seeds) / "died", work / "died", fs::copy_options::recursive);
  g_trace = work / "trace";
  g_died = work / "died";
  g_prv_out = work / "prv";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t which = data[0] % kTargetCount;
  const bool trace = which < kTraceFiles;
  const fs::path file = (trace ? g_trace : g_died) / kTargets[which];
  const std::string original = slurp(file);
  spill(file, reinterpret_cast<const char*>(data + 1), size - 1);
  if (trace) {
    const std::string anchor = (g_trace / "traces.otf2").string();
    // The bits above the file's index pick the tool: 0x80 prv, 0x40 profile, 0x20 export.
    if (data[0] & 0x80)
      call(prv_main, {anchor, "-o", g_prv_out.string()});
    else if (data[0] & 0x40)
      call(profile_main, {anchor, "-q", "--json", g_prv_out.string() + ".json", "--folded",
                          g_prv_out.string() + ".folded"});
    else if (data[0] & 0x20)
      call(export_main, {"--perfetto", anchor, "-q", "-o", g_prv_out.string() + ".perfetto.json"});
    else
      call(report_main, {anchor});
  } else {
    call(recover_main, {g_died.string(), "-q"});
    // Back to a journal that has not been recovered, for the next input.
    for (const char* written : {"traces.otf2", "traces.def", "traces", "journal/recovered"})
      fs::remove_all(g_died / written);
  }
  spill(file, original.data(), original.size());
  return 0;
}
