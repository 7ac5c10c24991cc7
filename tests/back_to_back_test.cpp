#include <catch2/catch.hpp>

#include "events/back_to_back.hpp"

using namespace perusetrace;

namespace {
std::uint32_t source(const TimeSources& s, PeruseEvent e) {
  return s[static_cast<std::size_t>(e)];
}
EventSet all_events() {
  return EventSet{}.set();
}
}  // namespace

TEST_CASE("with every event selected, each follower takes the time of the events it follows") {
  const TimeSources s = time_sources(all_events(), false);
  CHECK(source(s, PeruseEvent::SEARCH_POSTED_Q_BEGIN) == event_bit(PeruseEvent::MSG_ARRIVED));
  CHECK(source(s, PeruseEvent::MSG_MATCH_POSTED_REQ) ==
        event_bit(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q));
  CHECK(source(s, PeruseEvent::SEARCH_POSTED_Q_END) ==
        (event_bit(PeruseEvent::MSG_MATCH_POSTED_REQ) |
         event_bit(PeruseEvent::MSG_INSERT_IN_UNEX_Q)));
  CHECK(source(s, PeruseEvent::MSG_REMOVE_FROM_UNEX_Q) == event_bit(PeruseEvent::REQ_MATCH_UNEX));
  CHECK(source(s, PeruseEvent::SEARCH_UNEX_Q_END) ==
        event_bit(PeruseEvent::MSG_REMOVE_FROM_UNEX_Q));
  CHECK(source(s, PeruseEvent::REQ_INSERT_IN_POSTED_Q) ==
        event_bit(PeruseEvent::SEARCH_UNEX_Q_END));
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
