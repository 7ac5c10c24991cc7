#include "reader/event_sequencer.hpp"

#include <limits>

namespace perusetrace::archive {

std::uint64_t ticks_to_ns(std::uint64_t ticks, std::uint64_t resolution) {
  if (resolution == 1'000'000'000u) return ticks;
  const long double ns =
      static_cast<long double>(ticks) * 1e9L / static_cast<long double>(resolution);
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  return ns >= static_cast<long double>(kMax) ? kMax : static_cast<std::uint64_t>(ns);
}

EventSequencer::EventSequencer(const Definitions& defs)
    : defs_(defs),
      offset_(defs.global_offset),
      resolution_(defs.timer_resolution),
      exact_ns_(defs.timer_resolution == 1'000'000'000u),
      peruse_memory_(defs.locations.size()) {}

void EventSequencer::complete_peruse(EventRecord& r) {
  PeruseFields f = peruse_fields(r);
  peruse_memory_[r.loc].complete(f, r.aux);
  store_peruse(r, f);
}

void EventSequencer::datatypes(EventRecord& r) {
  const std::uint32_t rank = defs_.locations[r.loc].rank;
  switch (r.kind) {
    case RecordKind::IoBegin:
      if (r.c != kNoDatatype)
        pending_io_[{rank, r.y}] = {r.c, static_cast<IoMode>(r.flag) == IoMode::Write};
      r.c = 0;
      break;
    case RecordKind::CollectiveRequest:
      if (r.a != kNoDatatype || r.b != kNoDatatype) pending_collectives_[{rank, r.x}] = {r.a, r.b};
      r.a = r.b = 0;
      break;
    case RecordKind::IoComplete: {
      found_send_ = kNoDatatype;
      const auto it = pending_io_.find({rank, r.y});
      if (it != pending_io_.end()) {
        found_send_ = it->second.datatype;
        found_write_ = it->second.write;
        pending_io_.erase(it);
      }
      break;
    }
    case RecordKind::Collective: {
      found_send_ = found_receive_ = kNoDatatype;
      const auto it = pending_collectives_.find({rank, std::uint64_t{r.c} << 32 | r.d});
      if (it != pending_collectives_.end()) {
        found_send_ = it->second.first;
        found_receive_ = it->second.second;
        pending_collectives_.erase(it);
      }
      break;
    }
    case RecordKind::DatatypeUse: {
      const auto use = static_cast<DatatypeUse>(r.flag);
      const std::uint32_t type =
          use == DatatypeUse::CollectiveReceive ? found_receive_ : found_send_;
      if (type == kNoDatatype) {
        r.kind = RecordKind::Nothing;
      } else {
        r.a = type;
        if (use == DatatypeUse::FileRead || use == DatatypeUse::FileWrite)
          r.flag = static_cast<std::uint8_t>(found_write_ ? DatatypeUse::FileWrite
                                                          : DatatypeUse::FileRead);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace perusetrace::archive
