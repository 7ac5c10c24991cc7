// The .pcf (what the states and event values mean, with colours) and the .row (names of the
// nodes, CPUs and threads) that go with a .prv.
#pragma once

#include <string>

#include "tools/prv/prv_archive.hpp"
#include "tools/prv/paraver_objects.hpp"

namespace perusetrace::prv {

void write_pcf(const std::string& path, const Definitions& defs);
void write_row(const std::string& path, const Definitions& defs, const Layout& layout);

}  // namespace perusetrace::prv
