#include "tools/prv/metric_types.hpp"

#include <fmt/core.h>

#include "record/archive_schema.hpp"
#include "tools/prv/prv_codes.hpp"

namespace perusetrace::prv {

namespace {

bool is_mpit(const MetricDef& m) {
  return m.name.rfind(trace::kPvarMetricPrefix, 0) == 0;
}

}  // namespace

std::vector<std::uint64_t> metric_types(const Definitions& defs) {
  std::vector<std::uint64_t> types;
  std::uint64_t next = kTypeMpitFirst, next_set = kTypeAnnotationSetFirst;
  for (const MetricDef& m : defs.metrics) {
    std::uint64_t type = 0;
    if (m.name == "posted queue depth") {
      type = kTypePostedQueue;
    } else if (m.name == "unexpected queue depth") {
      type = kTypeUnexpectedQueue;
    } else if (m.name == "bytes in flight") {
      type = kTypeBytesInFlight;
    } else if (is_mpit(m) && next <= kTypeMpitLast) {
      type = next++;
    } else if (m.annotation && next_set <= kTypeAnnotationSetLast) {
      type = next_set++;
    }
    types.push_back(type);
  }
  return types;
}

std::size_t mpit_metrics_dropped(const Definitions& defs) {
  std::size_t mpit = 0;
  for (const MetricDef& m : defs.metrics) mpit += is_mpit(m);
  const std::size_t room = kTypeMpitLast - kTypeMpitFirst + 1;
  return mpit > room ? mpit - room : 0;
}

std::string annotation_set_label(const MetricDef& m) {
  return fmt::format("annotation {} (the value set; below 0 shown as 0)", m.name);
}

std::string mpit_label(const MetricDef& m) {
  // Paraver's event values are whole and perusetrace's are never negative (prv_check.py).
  std::string how = m.mode == MetricMode::Delta ? "change since the previous read" : "value";
  if (!m.unit.empty()) how += ", " + m.unit;
  if (m.type == MetricType::Double) how += "; doubles rounded to integers";
  return fmt::format("{} ({}; below 0 shown as 0)", m.name, how);
}

}  // namespace perusetrace::prv
