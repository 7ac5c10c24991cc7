// How the archive's system tree becomes Paraver's objects: one node per host, one CPU per
// traced thread on it, task r+1 per MPI rank, thread t+1 per thread of a rank; and the .prv
// header that declares them with the communicators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/prv/prv_archive.hpp"
#include "tools/prv/prv_writer.hpp"

namespace perusetrace::prv {

struct Layout {
  std::vector<PrvObject> objects;        // by location index
  std::vector<std::uint32_t> node_cpus;  // CPUs per node
  std::vector<std::string> cpu_names;    // by global CPU - 1
  std::vector<std::uint32_t> comm_ids;   // Paraver id of each written communicator
};

Layout make_layout(const Definitions& defs);

// "#Paraver (...)" and the "c:" lines, for a trace ending at `end` ns.
std::string prv_header(const Definitions& defs, const Layout& layout, std::uint64_t end);

}  // namespace perusetrace::prv
