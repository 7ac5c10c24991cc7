#include "tools/prv/annotation_types.hpp"

#include <map>

#include "tools/prv/prv_codes.hpp"

namespace perusetrace::prv {

AnnotationTypes annotation_types(const Definitions& defs) {
  AnnotationTypes out;
  out.attribute_of_region.assign(defs.regions.size(), AnnotationTypes::kNone);
  out.value_of_region.assign(defs.regions.size(), 0);
  std::map<std::string, std::uint32_t> index;
  for (std::size_t r = 0; r < defs.regions.size(); ++r) {
    const RegionDef& region = defs.regions[r];
    if (region.kind != RegionKind::Annotation) continue;
    auto [it, fresh] =
        index.try_emplace(region.attribute, static_cast<std::uint32_t>(out.attributes.size()));
    if (fresh) {
      const std::uint64_t type = kTypeAnnotationFirst + out.attributes.size();
      if (type > kTypeAnnotationLast) {  // past the range: not shown
        index.erase(it);
        continue;
      }
      out.attributes.push_back({region.attribute, type, {}});
    }
    AnnotationTypes::Attribute& a = out.attributes[it->second];
    a.values.push_back(region.value);
    out.attribute_of_region[r] = it->second;
    out.value_of_region[r] = a.values.size();
  }
  return out;
}

}  // namespace perusetrace::prv
