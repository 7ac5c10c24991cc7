// Which Peruse events to register: the parsed value of MPITRACE_PERUSE_EVENTS.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "events/catalogue.hpp"

namespace perusetrace {

using EventSet = std::bitset<kPeruseEventCount>;

struct EventSelection {
  EventSet events;
  std::string error;  // empty when the list parsed; otherwise names the bad entry and the fix
  bool ok() const { return error.empty(); }
};

// The default when MPITRACE_PERUSE_EVENTS is unset: every request and message event, which
// shows each message's life cycle; the queue-search events, the most frequent, are left out.
EventSet default_events();

// "all", "none", or names separated by colons (full or short names, any letter case).
EventSelection parse_event_list(std::string_view list);

// Edits between a name as typed (any case) and a known upper-case name: "did you mean" hints.
std::size_t edit_distance(std::string_view typed, std::string_view known);

// "REQ_ACTIVATE:REQ_XFER_BEGIN:..." for messages and the trace's own record of its settings.
std::string format_event_list(const EventSet& events);

}  // namespace perusetrace
