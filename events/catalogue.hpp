// The Peruse event catalogue: one table (catalogue.def) read by the callbacks, the OTF2
// writer and the tools, so an event's name and number agree everywhere.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace perusetrace {

enum class PeruseEvent : std::uint8_t {
#define X(name, phase, text) name,
#include "events/catalogue.def"
#undef X
};

enum class EventPhase : std::uint8_t { Request, Message, Search };

struct EventInfo {
  PeruseEvent event;
  std::string_view short_name;  // "REQ_XFER_BEGIN"
  std::string_view full_name;   // "PERUSE_COMM_REQ_XFER_BEGIN", as the MPI spells it
  EventPhase phase;
  std::string_view description;
};

inline constexpr std::array kPeruseEvents = {
#define X(name, phase, text) \
  EventInfo{PeruseEvent::name, #name, "PERUSE_COMM_" #name, EventPhase::phase, text},
#include "events/catalogue.def"
#undef X
};

inline constexpr std::size_t kPeruseEventCount = kPeruseEvents.size();
static_assert(kPeruseEventCount == 17, "Open MPI 4.1 implements 17 communication events");

constexpr const EventInfo& info(PeruseEvent e) {
  return kPeruseEvents[static_cast<std::size_t>(e)];
}

// The derived counter an event changes, as a Metric's number (record/record.hpp: posted
// queue depth 0, unexpected queue depth 1, bytes in flight 2; -1 for none), and how: by one
// request or message, or by the request's bytes, up or down. Its new value rides in the record.
struct CounterChange {
  int counter = -1;
  int sign = 0;
  bool by_bytes = false;
};

constexpr CounterChange counter_change(PeruseEvent e) {
  switch (e) {
    case PeruseEvent::REQ_INSERT_IN_POSTED_Q:
      return {0, +1, false};
    case PeruseEvent::REQ_REMOVE_FROM_POSTED_Q:
      return {0, -1, false};
    case PeruseEvent::MSG_INSERT_IN_UNEX_Q:
      return {1, +1, false};
    case PeruseEvent::MSG_REMOVE_FROM_UNEX_Q:
      return {1, -1, false};
    case PeruseEvent::REQ_XFER_BEGIN:
      return {2, +1, true};
    case PeruseEvent::REQ_XFER_END:
      return {2, -1, true};
    default:
      return {};
  }
}

constexpr int counter_of(PeruseEvent e) {
  return counter_change(e).counter;
}

// Accepts the full name or the name without PERUSE_COMM_, in any letter case.
std::optional<PeruseEvent> find_event(std::string_view name);

}  // namespace perusetrace
