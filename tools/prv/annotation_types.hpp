// Which Paraver event type and value show each nested annotation of the archive (its regions
// "ATTRIBUTE=VALUE"), for the records (translator) and their names in the .pcf (pcf_row).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/prv/prv_archive.hpp"

namespace perusetrace::prv {

struct AnnotationTypes {
  struct Attribute {
    std::string name;
    std::uint64_t type;
    std::vector<std::string> values;  // value i + 1
  };
  std::vector<Attribute> attributes;
  // By region id: the attribute's index and the value's number, or kNone for other regions.
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::vector<std::uint32_t> attribute_of_region;
  std::vector<std::uint64_t> value_of_region;
};

AnnotationTypes annotation_types(const Definitions& defs);

}  // namespace perusetrace::prv
