// Which locations each process of a parallel analysis reads: whole ranks (a rank's threads
// share its requests and queues, so its analysis needs them together), in world-rank order,
// cut into contiguous blocks of about equal events.
#pragma once

#include <cstdint>
#include <vector>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

// The world ranks of part `part` of `parts` (0 <= part < parts): contiguous, each part's
// events as close to an equal share as whole ranks allow, every rank in exactly one part.
// With more parts than ranks, the parts past the ranks are empty.
std::vector<std::uint32_t> ranks_of_share(const Definitions& defs, unsigned part, unsigned parts);

// Their locations (indices into Definitions::locations), in index order.
std::vector<std::uint32_t> location_share(const Definitions& defs, unsigned part, unsigned parts);

}  // namespace perusetrace::archive
