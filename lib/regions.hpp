// Region ids, the same on every rank: the MPI functions of the wrapper spec, then the Peruse
// events (each a zero-length region, see docs/otf2-mapping.md), then the tracer's own flush.
#pragma once

#include <cstdint>
#include <vector>

#include "events/catalogue.hpp"
#include "lib/mpi_functions.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

inline constexpr std::uint16_t kPeruseRegionBase = static_cast<std::uint16_t>(Fn::Count);
inline constexpr std::uint16_t kFlushRegion =
    static_cast<std::uint16_t>(kPeruseRegionBase + kPeruseEventCount);
inline constexpr std::uint16_t kRegionCount = kFlushRegion + 1;

std::vector<trace::RegionInfo> region_table();

}  // namespace perusetrace
