#include <catch2/catch.hpp>

#include <iterator>
#include <vector>

#include "events/back_to_back.hpp"

using namespace perusetrace;

namespace {
std::uint32_t source(const TimeSources& s, PeruseEvent e) {
  return s[static_cast<std::size_t>(e)];
}
EventSet all_events() {
  return EventSet{}.set();
}

// The event sequences of the Open MPI Peruse paper (its listings of an early receiver and of a
// late receiver, as Open MPI 4.1's ob1 fires them, which tests/common/trace_checks.py also checks
// in real traces): an independent account of which events come right after which.
constexpr PeruseEvent kEarlyReceiver[] = {PeruseEvent::REQ_ACTIVATE,
                                          PeruseEvent::SEARCH_UNEX_Q_BEGIN,
                                          PeruseEvent::SEARCH_UNEX_Q_END,
                                          PeruseEvent::REQ_INSERT_IN_POSTED_Q,
                                          PeruseEvent::MSG_ARRIVED,
                                          PeruseEvent::SEARCH_POSTED_Q_BEGIN,
                                          PeruseEvent::REQ_REMOVE_FROM_POSTED_Q,
                                          PeruseEvent::MSG_MATCH_POSTED_REQ,
                                          PeruseEvent::SEARCH_POSTED_Q_END,
                                          PeruseEvent::REQ_XFER_BEGIN,
                                          PeruseEvent::REQ_XFER_CONTINUE,
                                          PeruseEvent::REQ_XFER_END,
                                          PeruseEvent::REQ_COMPLETE};
constexpr PeruseEvent kLateReceiver[] = {
    PeruseEvent::MSG_ARRIVED,          PeruseEvent::SEARCH_POSTED_Q_BEGIN,
    PeruseEvent::MSG_INSERT_IN_UNEX_Q, PeruseEvent::SEARCH_POSTED_Q_END,
    PeruseEvent::REQ_ACTIVATE,         PeruseEvent::SEARCH_UNEX_Q_BEGIN,
    PeruseEvent::REQ_MATCH_UNEX,       PeruseEvent::MSG_REMOVE_FROM_UNEX_Q,
    PeruseEvent::SEARCH_UNEX_Q_END,    PeruseEvent::REQ_COMPLETE};

bool adjacent_in_the_paper(PeruseEvent before, PeruseEvent after) {
  for (const auto& sequence : {std::begin(kEarlyReceiver), std::begin(kLateReceiver)}) {
    const auto* end =
        sequence == std::begin(kEarlyReceiver) ? std::end(kEarlyReceiver) : std::end(kLateReceiver);
    for (const auto* e = sequence; e + 1 < end; ++e)
      if (e[0] == before && e[1] == after) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a follower takes the time only of events the paper shows right before it") {
  const TimeSources s = time_sources(all_events(), false);
  for (const EventInfo& follower : kPeruseEvents) {
    const std::uint32_t sources = source(s, follower.event);
    for (const EventInfo& before : kPeruseEvents) {
      if ((sources & event_bit(before.event)) == 0) continue;
      INFO(before.short_name << " -> " << follower.short_name);
      CHECK(adjacent_in_the_paper(before.event, follower.event));
    }
  }
}

TEST_CASE("every event right before a follower in the paper is one it follows or expects") {
  const TimeSources s = time_sources(all_events(), false);
  for (const auto& sequence :
       {std::vector<PeruseEvent>(std::begin(kEarlyReceiver), std::end(kEarlyReceiver)),
        std::vector<PeruseEvent>(std::begin(kLateReceiver), std::end(kLateReceiver))}) {
    for (std::size_t i = 1; i < sequence.size(); ++i) {
      if (!may_follow_back_to_back(sequence[i])) continue;
      INFO(info(sequence[i - 1]).short_name << " -> " << info(sequence[i]).short_name);
      const bool source_of_time = (source(s, sequence[i]) & event_bit(sequence[i - 1])) != 0;
      const bool expected_before = [&] {
        for (const auto& b : kBackToBack)
          if (b.event == sequence[i]) return (b.also_before & event_bit(sequence[i - 1])) != 0;
        return false;
      }();
      CHECK((source_of_time || expected_before));
    }
  }
}

TEST_CASE("events on either side of a search, a copy or a wait read the clock") {
  const TimeSources s = time_sources(all_events(), false);
  for (PeruseEvent e :
       {PeruseEvent::REQ_ACTIVATE, PeruseEvent::MSG_ARRIVED, PeruseEvent::REQ_REMOVE_FROM_POSTED_Q,
        PeruseEvent::REQ_MATCH_UNEX, PeruseEvent::MSG_INSERT_IN_UNEX_Q,
        PeruseEvent::SEARCH_UNEX_Q_BEGIN, PeruseEvent::REQ_XFER_BEGIN,
        PeruseEvent::REQ_XFER_CONTINUE, PeruseEvent::REQ_XFER_END, PeruseEvent::REQ_COMPLETE,
        PeruseEvent::REQ_NOTIFY}) {
    INFO(info(e).short_name);
    CHECK(source(s, e) == 0);
    CHECK_FALSE(may_follow_back_to_back(e));
  }
}

TEST_CASE("under MPI_THREAD_MULTIPLE the wait for the matching lock keeps its own time") {
  const TimeSources s = time_sources(all_events(), true);
  CHECK(source(s, PeruseEvent::SEARCH_POSTED_Q_BEGIN) == 0);
  CHECK(source(s, PeruseEvent::MSG_MATCH_POSTED_REQ) != 0);
}

TEST_CASE("a follower reads the clock unless every event that may come before it is recorded") {
  EventSet selected = all_events();
  selected.reset(static_cast<std::size_t>(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q));
  const TimeSources s = time_sources(selected, false);
  // Without the removal a matched probe's search end could meet an older match as the
  // latest record, and the match has nothing left to follow.
  CHECK(source(s, PeruseEvent::SEARCH_POSTED_Q_END) == 0);
  CHECK(source(s, PeruseEvent::MSG_MATCH_POSTED_REQ) == 0);
  CHECK(source(s, PeruseEvent::SEARCH_POSTED_Q_BEGIN) != 0);

  // The default selection leaves the searches out: a receive's insertion into the posted
  // queue has no search end to follow; the match of a posted receive and the unlinking of a
  // found message still follow theirs.
  const TimeSources d = time_sources(default_events(), false);
  CHECK(source(d, PeruseEvent::REQ_INSERT_IN_POSTED_Q) == 0);
  CHECK(source(d, PeruseEvent::MSG_MATCH_POSTED_REQ) ==
        event_bit(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q));
  CHECK(source(d, PeruseEvent::MSG_REMOVE_FROM_UNEX_Q) == event_bit(PeruseEvent::REQ_MATCH_UNEX));
}
