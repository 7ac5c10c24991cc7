// Events Open MPI fires back to back: which Peruse event may take the time of the event recorded
// just before it instead of reading the clock.
//
// Read from Open MPI 4.1's ob1 (pml_ob1_recvfrag.c, pml_ob1_recvreq.c). Between a follower
// and the event before it lies a list insertion or removal and nothing else: no search, no lock
// taken, no copy, no wait. A clock read costs more than that work (docs/performance.md), so a
// second read would put the tracer's own cost into the trace, not the MPI's. Events
// on either side of a search, a copy or a wait keep their own read: search begin and removal,
// transfer begin and end, insertion and arrival.
#pragma once

#include <array>
#include <cstdint>

#include "events/catalogue.hpp"
#include "events/selection.hpp"

namespace perusetrace {

constexpr std::uint32_t event_bit(PeruseEvent e) {
  return std::uint32_t{1} << static_cast<unsigned>(e);
}

struct BackToBack {
  PeruseEvent event;
  std::uint32_t after;  // the events it follows back to back; it may take their time
  // Every other event ob1 may fire right before it. All of them must be selected: then the
  // thread's latest record is always the event that came right before, never an older one.
  std::uint32_t also_before;
  // ob1 takes the communicator's matching lock between the two under MPI_THREAD_MULTIPLE,
  // and waiting for it is worth seeing.
  bool lock_between;
  // It may ride in the record of the event before it (carried_followers.hpp) instead of taking a
  // record of its own: ob1 reports both for the same request or message header, and it changes
  // no derived counter, so its fields can be told from that record's.
  bool carried;
};

inline constexpr std::array kBackToBack = {
    // The incoming message's search of the posted queue starts right after it is seen.
    BackToBack{PeruseEvent::SEARCH_POSTED_Q_BEGIN, event_bit(PeruseEvent::MSG_ARRIVED), 0, true,
               true},
    // match_one: the found receive is unlinked, then reported as matched.
    BackToBack{PeruseEvent::MSG_MATCH_POSTED_REQ, event_bit(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q),
               0, false, true},
    // The search ends with the match, or with the message put into the unexpected queue; a
    // matched probe ends it right after removing the probe.
    BackToBack{
        PeruseEvent::SEARCH_POSTED_Q_END,
        event_bit(PeruseEvent::MSG_MATCH_POSTED_REQ) | event_bit(PeruseEvent::MSG_INSERT_IN_UNEX_Q),
        event_bit(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q), false, true},
    // A receive that found its message: matched, the message unlinked, the search over. Not
    // carried: the unlinking changes the unexpected queue's depth, and ob1 reports the search's
    // end for the request where it reports the unlinking for the message header.
    BackToBack{PeruseEvent::MSG_REMOVE_FROM_UNEX_Q, event_bit(PeruseEvent::REQ_MATCH_UNEX), 0,
               false, false},
    BackToBack{PeruseEvent::SEARCH_UNEX_Q_END, event_bit(PeruseEvent::MSG_REMOVE_FROM_UNEX_Q),
               event_bit(PeruseEvent::SEARCH_UNEX_Q_BEGIN), false, false},
    // A receive that found none: the search over, the receive appended to the posted queue (which
    // changes its depth: a record of its own).
    BackToBack{PeruseEvent::REQ_INSERT_IN_POSTED_Q, event_bit(PeruseEvent::SEARCH_UNEX_Q_END), 0,
               false, false},
};

constexpr bool may_follow_back_to_back(PeruseEvent e) {
  for (const auto& b : kBackToBack)
    if (b.event == e) return true;
  return false;
}

// `e` may ride in the record of the event before it.
constexpr bool may_be_carried(PeruseEvent e) {
  for (const auto& b : kBackToBack)
    if (b.event == e) return b.carried;
  return false;
}

constexpr bool carried_events_change_no_counter() {
  for (const auto& b : kBackToBack)
    if (b.carried && counter_of(b.event) >= 0) return false;
  return true;
}
static_assert(carried_events_change_no_counter(),
              "a carried event has no record of its own to hold a counter's value");

// An event that may be carried can follow `e` back to back: its callback remembers what it wrote.
constexpr bool may_carry(PeruseEvent e) {
  for (const auto& b : kBackToBack)
    if (b.carried && (b.after & event_bit(e)) != 0) return true;
  return false;
}

// Per event, the events whose time it takes when one of them is its thread's latest record
// (0: it always reads the clock), for this selection and thread level.
using TimeSources = std::array<std::uint32_t, kPeruseEventCount>;
inline TimeSources time_sources(const EventSet& selected, bool thread_multiple) {
  TimeSources sources{};
  const auto have = static_cast<std::uint32_t>(selected.to_ulong());
  for (const auto& b : kBackToBack) {
    const bool all_selected = ((b.after | b.also_before) & ~have) == 0;
    if (all_selected && !(b.lock_between && thread_multiple))
      sources[static_cast<std::size_t>(b.event)] = b.after;
  }
  return sources;
}

}  // namespace perusetrace
