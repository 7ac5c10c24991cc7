#include "reader/location_share.hpp"

#include <algorithm>

namespace perusetrace::archive {

std::vector<std::uint32_t> ranks_of_share(const Definitions& defs, unsigned part, unsigned parts) {
  const auto ranks = static_cast<std::uint32_t>(defs.ranks.size());
  if (parts == 0 || part >= parts || ranks == 0) return {};
  std::vector<long double> events(ranks, 0);
  long double total = 0;
  for (const LocationDef& l : defs.locations)
    if (l.rank < ranks) events[l.rank] += static_cast<long double>(l.events), total += l.events;
  // Part k takes at least one rank, then each next rank whose events lie more before than after
  // the point (k + 1) / parts of the total, leaving a rank for each later part while there are
  // ranks enough.
  std::vector<std::uint32_t> end(parts, ranks);
  long double sum = 0;
  std::uint32_t r = 0;
  for (unsigned k = 0; k + 1 < parts; ++k) {
    const std::uint32_t first = r;
    const long double goal = total * static_cast<long double>(k + 1) / parts;
    const unsigned later = parts - k - 1;
    // With fewer ranks than parts, one rank each: the parts past the ranks get none.
    const std::uint32_t latest = ranks - first > later ? ranks - later : std::min(ranks, first + 1);
    while (r < latest && (r == first || sum + events[r] / 2 <= goal)) sum += events[r++];
    end[k] = r;
  }
  const std::uint32_t from = part == 0 ? 0 : end[part - 1];
  const std::uint32_t to = std::max(from, end[part]);
  std::vector<std::uint32_t> out;
  for (std::uint32_t rank = from; rank < to; ++rank) out.push_back(rank);
  return out;
}

std::vector<std::uint32_t> location_share(const Definitions& defs, unsigned part, unsigned parts) {
  const std::vector<std::uint32_t> ranks = ranks_of_share(defs, part, parts);
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < defs.locations.size(); ++i)
    if (std::binary_search(ranks.begin(), ranks.end(), defs.locations[i].rank)) out.push_back(i);
  return out;
}

}  // namespace perusetrace::archive
