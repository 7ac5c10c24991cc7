// The .prv header, as Paraver reads it (bsc-performance-tools/paraver-kernel,
// src/processmodel.cpp: the application list) and Extrae's merger writes it
// (bsc-performance-tools/extrae, src/merger/paraver/paraver_generator.c, Paraver_WriteHeader:
// date, END_ns, nodes with their CPUs, the tasks, the communicator count and "c:" lines):
//   #Paraver (dd/mm/yyyy at hh:mm):END_ns:NODES(CPUS_1,...,CPUS_N):APPLS:
//     TASKS(THREADS_1:NODE_1,...,THREADS_T:NODE_T),COMMUNICATORS
// then one line per communicator of the application:
//   c:APPL:COMM_ID:NTASKS:TASK_1:...:TASK_N          (tasks 1-based)
#include "tools/prv/paraver_objects.hpp"

#include <fmt/format.h>

#include <ctime>
#include <vector>

namespace perusetrace::prv {

Layout make_layout(const Definitions& defs) {
  Layout l;
  l.objects.resize(defs.locations.size());
  l.node_cpus.assign(defs.nodes.size(), 0);
  std::uint32_t cpu = 0;
  // CPUs numbered node by node; within a node by rank, then thread.
  for (std::uint32_t node = 0; node < defs.nodes.size(); ++node) {
    for (std::size_t i = 0; i < defs.locations.size(); ++i) {
      const LocationDef& loc = defs.locations[i];
      if (defs.ranks[loc.rank].node != node) continue;
      ++cpu;
      ++l.node_cpus[node];
      l.objects[i] = {cpu, loc.rank + 1, loc.thread + 1};
      l.cpu_names.push_back(fmt::format("{}.{}", l.node_cpus[node], defs.nodes[node].name));
    }
  }
  for (std::size_t c = 0; c < defs.comms.size(); ++c)
    if (!defs.comms[c].world_ranks.empty()) l.comm_ids.push_back(static_cast<std::uint32_t>(c));
  return l;
}

std::string prv_header(const Definitions& defs, const Layout& layout, std::uint64_t end) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::string h = fmt::format("#Paraver ({:02}/{:02}/{:04} at {:02}:{:02}):{}_ns:{}(", tm.tm_mday,
                              tm.tm_mon + 1, tm.tm_year + 1900, tm.tm_hour, tm.tm_min, end,
                              layout.node_cpus.size());
  for (std::size_t n = 0; n < layout.node_cpus.size(); ++n)
    h += fmt::format("{}{}", n ? "," : "", layout.node_cpus[n]);
  h += fmt::format("):1:{}(", defs.ranks.size());
  for (std::size_t r = 0; r < defs.ranks.size(); ++r)
    h += fmt::format("{}{}:{}", r ? "," : "", defs.ranks[r].threads, defs.ranks[r].node + 1);
  h += fmt::format("),{}\n", layout.comm_ids.size());
  for (std::uint32_t c : layout.comm_ids) {
    // Paraver's tasks are this job's ranks: another job's members (an intercommunicator of
    // MPI_Comm_spawn) are tasks of its own trace.
    std::vector<std::uint32_t> tasks;
    for (std::uint32_t r : defs.comms[c].world_ranks)
      if (r < defs.ranks.size()) tasks.push_back(r + 1);
    h += fmt::format("c:1:{}:{}", c + 1, tasks.size());
    for (std::uint32_t t : tasks) h += fmt::format(":{}", t);
    h += '\n';
  }
  return h;
}

}  // namespace perusetrace::prv
