#include "lib/regions.hpp"

namespace perusetrace {

std::vector<trace::RegionInfo> region_table() {
  std::vector<trace::RegionInfo> regions;
  regions.reserve(kRegionCount);
  for (const FunctionInfo& f : kMpiFunctions)
    regions.push_back({f.name, f.role, trace::Paradigm::Mpi, f.collective});
  for (const EventInfo& e : kPeruseEvents)
    regions.push_back({std::string(e.full_name), trace::RegionRole::Artificial,
                       trace::Paradigm::Peruse, trace::CollectiveOp::None});
  regions.push_back({"perusetrace flush", trace::RegionRole::Artificial,
                     trace::Paradigm::Measurement, trace::CollectiveOp::None});
  return regions;
}

}  // namespace perusetrace
