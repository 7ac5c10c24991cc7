#include <catch2/catch.hpp>

#include "events/back_to_back.hpp"
#include "record/carried_followers.hpp"

using namespace perusetrace;

namespace {

constexpr auto kArrived = static_cast<std::uint8_t>(PeruseEvent::MSG_ARRIVED);
constexpr auto kRemoved = static_cast<std::uint8_t>(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q);
constexpr auto kMatch = static_cast<std::uint8_t>(PeruseEvent::MSG_MATCH_POSTED_REQ);
constexpr auto kSearchBegin = static_cast<std::uint8_t>(PeruseEvent::SEARCH_POSTED_Q_BEGIN);
constexpr auto kSearchEnd = static_cast<std::uint8_t>(PeruseEvent::SEARCH_POSTED_Q_END);

int g_comm, g_other_comm, g_type;  // addresses stand in for a registry entry and a datatype

// A receive's removal from the posted queue (request 0x5000, 4 ints from rank 1, tag 7) and
// what its callback remembers; the match that ob1 fires next has the same arguments.
struct Removal {
  PeruseArgs args{&g_comm, 0x5000, &g_type, 4, 1, 7, 1};
  Record record{1000, RecordKind::Peruse, kRemoved, 1, 3, 1, 7, 16, 42, 0};
  LatestPeruse latest{&record, 1000, args, kRemoved};
};

std::uint32_t sources_of(PeruseEvent e) {
  return time_sources(EventSet{}.set(), false)[static_cast<std::size_t>(e)];
}

}  // namespace

TEST_CASE("a record carries up to two events in order and keeps its operation") {
  Record r{};
  r.region = 1;
  CHECK(carry_peruse(r, kMatch, false));
  CHECK(carry_peruse(r, kSearchEnd, true));
  CHECK_FALSE(carry_peruse(r, kSearchBegin, false));
  CHECK(peruse_operation(r) == 1);
  CarriedPeruse c{};
  REQUIRE(carried_peruse(r, 0, c));
  CHECK((c.event == kMatch && !c.without_request));
  REQUIRE(carried_peruse(r, 1, c));
  CHECK((c.event == kSearchEnd && c.without_request));
  CHECK(last_peruse_event(r).event == kSearchEnd);
  Record plain{};
  plain.event = kArrived;
  CHECK_FALSE(carried_peruse(plain, 0, c));
  CHECK(last_peruse_event(plain).event == kArrived);
}

TEST_CASE("the match rides in the removal's record with its request; the search end without") {
  Removal m;
  REQUIRE(carry_follower(&m.record, m.latest, kMatch, m.args,
                         sources_of(PeruseEvent::MSG_MATCH_POSTED_REQ)));
  CHECK(m.latest.last_event == kMatch);
  // The search's end is reported for the message header: no request, no data.
  const PeruseArgs header{&g_comm, 0, nullptr, 0, 1, 7, 1};
  REQUIRE(carry_follower(&m.record, m.latest, kSearchEnd, header,
                         sources_of(PeruseEvent::SEARCH_POSTED_Q_END)));
  CarriedPeruse c{};
  REQUIRE(carried_peruse(m.record, 0, c));
  CHECK((c.event == kMatch && !c.without_request));
  REQUIRE(carried_peruse(m.record, 1, c));
  CHECK((c.event == kSearchEnd && c.without_request));
  CHECK(m.record.time == 1000);
}

TEST_CASE("an event whose fields would differ takes a record of its own") {
  // Each change of the match's arguments away from the removal's.
  struct Change {
    const char* what;
    void (*apply)(PeruseArgs&);
  };
  const Change changes[] = {
      {"another communicator", [](PeruseArgs& a) { a.comm = &g_other_comm; }},
      {"another peer (a receive from any source, matched by rank 1's message)",
       [](PeruseArgs& a) { a.peer = 2; }},
      {"another tag", [](PeruseArgs& a) { a.tag = 8; }},
      {"another operation", [](PeruseArgs& a) { a.operation = 0; }},
      {"another request", [](PeruseArgs& a) { a.unique_id = 0x6000; }},
      {"other data", [](PeruseArgs& a) { a.count = 5; }},
      {"no request but data",
       [](PeruseArgs& a) {
         a.unique_id = 0;
         a.count = 4;
       }},
  };
  for (const Change& change : changes) {
    DYNAMIC_SECTION(change.what) {
      Removal m;
      PeruseArgs a = m.args;
      change.apply(a);
      CHECK_FALSE(carry_follower(&m.record, m.latest, kMatch, a,
                                 sources_of(PeruseEvent::MSG_MATCH_POSTED_REQ)));
      CHECK(m.record.region == 1);
      CHECK(m.latest.last_event == kRemoved);
    }
  }
}

TEST_CASE("only an event that may take the time of the last one the record holds is carried") {
  Removal m;
  // The search's end follows the match, not the removal itself.
  const PeruseArgs header{&g_comm, 0, nullptr, 0, 1, 7, 1};
  CHECK_FALSE(carry_follower(&m.record, m.latest, kSearchEnd, header,
                             sources_of(PeruseEvent::SEARCH_POSTED_Q_END)));
  // A selection or thread level that gives the event a clock read of its own.
  CHECK_FALSE(carry_follower(&m.record, m.latest, kMatch, m.args, 0));
  CHECK(m.record.region == 1);
}

TEST_CASE("a record that is no longer the one remembered carries nothing") {
  Removal m;
  const std::uint32_t sources = sources_of(PeruseEvent::MSG_MATCH_POSTED_REQ);
  SECTION("another record was written since") {
    Record later = m.record;
    CHECK_FALSE(carry_follower(&later, m.latest, kMatch, m.args, sources));
  }
  SECTION("a drain reused the slot: same place, later time") {
    m.record.time = 5000;
    CHECK_FALSE(carry_follower(&m.record, m.latest, kMatch, m.args, sources));
  }
  SECTION("no record") {
    CHECK_FALSE(carry_follower(nullptr, m.latest, kMatch, m.args, sources));
  }
}

TEST_CASE("a record carries no more than two events") {
  Removal m;
  m.record.region = static_cast<std::uint16_t>(m.record.region | 0xfff0);  // both slots taken
  CHECK_FALSE(carry_follower(&m.record, m.latest, kMatch, m.args,
                             sources_of(PeruseEvent::MSG_MATCH_POSTED_REQ)));
}

TEST_CASE("carried events are the search's and the match's, never one that changes a counter") {
  CHECK(may_be_carried(PeruseEvent::SEARCH_POSTED_Q_BEGIN));
  CHECK(may_be_carried(PeruseEvent::MSG_MATCH_POSTED_REQ));
  CHECK(may_be_carried(PeruseEvent::SEARCH_POSTED_Q_END));
  CHECK_FALSE(may_be_carried(PeruseEvent::MSG_REMOVE_FROM_UNEX_Q));
  CHECK_FALSE(may_be_carried(PeruseEvent::REQ_INSERT_IN_POSTED_Q));
  CHECK_FALSE(may_be_carried(PeruseEvent::REQ_COMPLETE));
  CHECK(may_carry(PeruseEvent::MSG_ARRIVED));
  CHECK(may_carry(PeruseEvent::REQ_REMOVE_FROM_POSTED_Q));
  CHECK(may_carry(PeruseEvent::MSG_MATCH_POSTED_REQ));
  CHECK(may_carry(PeruseEvent::MSG_INSERT_IN_UNEX_Q));
  CHECK_FALSE(may_carry(PeruseEvent::REQ_COMPLETE));
  for (const auto& e : kPeruseEvents)
    if (may_be_carried(e.event)) CHECK(counter_of(e.event) < 0);
}
