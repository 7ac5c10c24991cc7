// The profile in the collapsed-stack format that flamegraph.pl, inferno and speedscope read:
// one line per call path and state, "frame;frame;...;[state] samples", all ranks summed.
#pragma once

#include <string>

#include "tools/profile/profile_data.hpp"

namespace perusetrace::profile {

std::string to_folded(const Profile& p);

}  // namespace perusetrace::profile
