// The profile as text on the terminal: time per state, the call paths and call sites that
// stall most, the functions with the most time, the ranks that stall most.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/profile/profile_data.hpp"

namespace perusetrace::profile {

void write_text(std::FILE* out, const Profile& p);

// A frame path for people: "main > solve > MPI_Recv", its outer frames cut to "... >" past
// `frames` frames.
std::string path_text(const Profile& p, std::uint32_t node, std::size_t frames = 4);

}  // namespace perusetrace::profile
