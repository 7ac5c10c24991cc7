// Local metric ids (MetricInfo, otf2_writer/writer.hpp) are handed out to MPI_T's values and to
// the annotations' integer values from one counter, so the two never share an id.
#pragma once

#include <atomic>
#include <cstdint>

#include "otf2_writer/writer.hpp"

namespace perusetrace {

inline std::uint32_t next_metric_id() noexcept {
  static std::atomic<std::uint32_t> next{trace::kFirstPvarMetric};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace perusetrace
