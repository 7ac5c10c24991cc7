#include "lib/regions.hpp"

#include <string_view>

#include "record/archive_schema.hpp"

namespace perusetrace {

namespace {
// The tools know a Peruse region by the schema's prefix of the catalogue's full names.
constexpr bool peruse_names_have_the_prefix() {
  for (const EventInfo& e : kPeruseEvents)
    if (!e.full_name.starts_with(trace::kPeruseRegionPrefix)) return false;
  return true;
}
static_assert(peruse_names_have_the_prefix());
}  // namespace

std::vector<trace::RegionInfo> region_table() {
  std::vector<trace::RegionInfo> regions;
  regions.reserve(kRegionCount);
  for (const FunctionInfo& f : kMpiFunctions)
    regions.push_back({f.name, f.role, trace::Paradigm::Mpi, f.collective});
  for (const EventInfo& e : kPeruseEvents)
    regions.push_back({std::string(e.full_name), trace::RegionRole::Artificial,
                       trace::Paradigm::Peruse, trace::CollectiveOp::None});
  regions.push_back({trace::kTracerRegion, trace::RegionRole::Artificial,
                     trace::Paradigm::Measurement, trace::CollectiveOp::None});
  return regions;
}

}  // namespace perusetrace
