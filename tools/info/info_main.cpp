#include "tools/info/info_main.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/requirements.hpp"
#include "reader/archive_reader.hpp"
#include "reader/clock_repair.hpp"
#include "tools/common/command_line.hpp"
#include "tools/common/tool_run.hpp"

namespace {

constexpr const char* kUsage = R"(usage: perusetrace info ARCHIVE

What a trace holds, from its definitions alone (no event is read, so it answers at once on an
archive of any size): the tool and settings that wrote it, its length and event count, the
ranks per host and their threads, the clocks, the Peruse events and MPI_T variables traced,
communicators, RMA windows, files, datatypes and other MPI jobs.

  ARCHIVE        the trace directory (PROGRAM-trace) or its traces.otf2
)";

using namespace perusetrace;

std::string seconds(std::uint64_t ns) {
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

// "0-3,8" for sorted ranks.
std::string rank_list(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ",") +
           (i == j ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return out;
}

void print_info(const archive::ArchiveReader& reader) {
  const archive::Definitions& d = reader.definitions();
  fmt::print("perusetrace info: {}\n", reader.anchor());
  fmt::print("  written by      {} (archive version {})\n", d.creator, d.archive_version);
  fmt::print("  settings        {}\n", d.settings.empty() ? "(not recorded)" : d.settings);
  fmt::print("  length          {}, {} events\n", seconds(d.trace_length), d.total_events);
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_host;
  std::uint64_t threads = 0;
  for (std::uint32_t r = 0; r < d.ranks.size(); ++r) {
    by_host[d.ranks[r].node].push_back(r);
    threads += d.ranks[r].threads;
  }
  fmt::print("  ranks           {} on {} host{}, {} threads traced\n", d.ranks.size(),
             by_host.size(), by_host.size() == 1 ? "" : "s", threads);
  for (const auto& [node, ranks] : by_host)
    fmt::print("    {:<14}ranks {}\n", node < d.nodes.size() ? d.nodes[node].name : "?",
               rank_list(ranks));
  const std::size_t domains = archive::clock_domains(d);
  fmt::print("  clocks          {} clock domain{}{}\n", domains, domains == 1 ? "" : "s",
             domains == 1 ? " (one clock: no message can appear received before it was sent)"
                          : " (offsets measured at MPI_Init and MPI_Finalize)");
  bool recorded = false;
  std::string events;
  for (const std::string& e : report::selected_events(d.settings, recorded))
    events += (events.empty() ? "" : " ") + e;
  fmt::print("  Peruse events   {}\n", events.empty() ? "none"
                                       : recorded     ? events
                                                      : events + " (settings not recorded)");
  std::size_t pvars = 0;
  for (const archive::MetricDef& m : d.metrics) pvars += m.name.rfind("MPI_T ", 0) == 0;
  fmt::print("  MPI_T values    {}\n",
             pvars == 0 ? std::string("none") : fmt::format("{} variables and places", pvars));
  if (d.sampling_period_ns != 0)
    fmt::print("  sampling        every {} us, {} call-path nodes\n", d.sampling_period_ns / 1000,
               d.contexts.size());
  fmt::print("  communicators   {}\n", d.comms.size());
  if (!d.windows.empty()) fmt::print("  RMA windows     {}\n", d.windows.size());
  if (!d.files.empty()) fmt::print("  files           {}\n", d.files.size());
  if (!d.datatypes.empty()) fmt::print("  datatypes       {}\n", d.datatypes.size());
  for (const archive::JobDef& j : d.jobs)
    fmt::print("  other job       {} ({}), {}\n", j.name, j.relation,
               j.archive.empty() ? std::string("its archive not known") : j.archive);
}

}  // namespace

int info_main(int argc, char** argv) {
  std::string path;
  return tools::run_command("info", kUsage, argc, argv, {}, path, [&] {
    print_info(archive::ArchiveReader(path));
    return 0;
  });
}
