#include "reader/event_sequencer.hpp"

#include <limits>
#include <optional>
#include <utility>

namespace perusetrace::archive {

namespace {

// What `pending` holds under `key`, taken out of it: a begin's datatypes wait there for the
// completion that names the same request.
template <class Map>
std::optional<typename Map::mapped_type> take(Map& pending, const typename Map::key_type& key) {
  const auto it = pending.find(key);
  if (it == pending.end()) return std::nullopt;
  std::optional<typename Map::mapped_type> value = std::move(it->second);
  pending.erase(it);
  return value;
}

}  // namespace

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
      const auto io = take(pending_io_, {rank, r.y});
      found_send_ = io ? io->datatype : kNoDatatype;
      if (io) found_write_ = io->write;
      break;
    }
    case RecordKind::Collective: {
      const auto types = take(pending_collectives_, {rank, std::uint64_t{r.c} << 32 | r.d});
      found_send_ = types ? types->first : kNoDatatype;
      found_receive_ = types ? types->second : kNoDatatype;
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
