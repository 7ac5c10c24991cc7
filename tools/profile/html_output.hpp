// The profile as one self-contained HTML page: an icicle view of the call paths (root on top),
// coloured by the MPI state that dominates each frame, zoomed by clicking, for all ranks or one.
// Inline SVG and script only: it opens from a file, without a network.
#pragma once

#include <string>

#include "tools/profile/profile_data.hpp"

namespace perusetrace::profile {

std::string to_html(const Profile& p);

}  // namespace perusetrace::profile
