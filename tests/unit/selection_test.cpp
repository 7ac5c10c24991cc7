#include <catch2/catch.hpp>

#include "events/selection.hpp"

using namespace perusetrace;

namespace {
bool has(const EventSet& s, PeruseEvent e) {
  return s.test(static_cast<std::size_t>(e));
}
}  // namespace

TEST_CASE("the paper's event list parses, with and without the prefix") {
  const auto full = parse_event_list(
      "PERUSE_COMM_REQ_XFER_BEGIN:PERUSE_COMM_REQ_XFER_END:PERUSE_COMM_REQ_XFER_CONTINUE:"
      "PERUSE_COMM_REQ_NOTIFY");
  REQUIRE(full.ok());
  CHECK(full.events.count() == 4);
  CHECK(has(full.events, PeruseEvent::REQ_XFER_CONTINUE));
  const auto bare = parse_event_list("REQ_XFER_BEGIN:REQ_XFER_END:REQ_XFER_CONTINUE:REQ_NOTIFY");
  REQUIRE(bare.ok());
  CHECK(bare.events == full.events);
  CHECK(format_event_list(bare.events) ==
        "REQ_XFER_BEGIN:REQ_XFER_CONTINUE:REQ_XFER_END:REQ_NOTIFY");
}

TEST_CASE("all and none") {
  CHECK(parse_event_list("all").events.all());
  CHECK(parse_event_list("ALL").events.all());
  const auto none = parse_event_list("none");
  REQUIRE(none.ok());
  CHECK(none.events.none());
  CHECK(format_event_list(none.events) == "none");
}

TEST_CASE("the default shows the message life cycle without queue searches") {
  const EventSet d = default_events();
  CHECK(has(d, PeruseEvent::REQ_ACTIVATE));
  CHECK(has(d, PeruseEvent::REQ_XFER_BEGIN));
  CHECK(has(d, PeruseEvent::REQ_XFER_END));
  CHECK(has(d, PeruseEvent::MSG_ARRIVED));
  CHECK(has(d, PeruseEvent::MSG_INSERT_IN_UNEX_Q));
  CHECK_FALSE(has(d, PeruseEvent::SEARCH_POSTED_Q_BEGIN));
  CHECK(d.count() == 13);
}

TEST_CASE("an unknown name is refused with its position, a suggestion and the valid names") {
  const auto r = parse_event_list("REQ_XFER_BEGIN:REQ_XFER_BEGNI:REQ_NOTIFY");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error, Catch::Contains("unknown event 'REQ_XFER_BEGNI'"));
  CHECK_THAT(r.error, Catch::Contains("entry 2"));
  CHECK_THAT(r.error, Catch::Contains("Did you mean REQ_XFER_BEGIN?"));
  CHECK_THAT(r.error, Catch::Contains("SEARCH_UNEX_Q_END"));
  CHECK_THAT(r.error, Catch::Contains("MPITRACE_PERUSE_EVENTS"));
}

TEST_CASE("a name far from every event gets no suggestion") {
  const auto r = parse_event_list("bogus");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error, !Catch::Contains("Did you mean"));
}

TEST_CASE("empty values and empty entries are errors, not silent defaults") {
  CHECK_THAT(parse_event_list("").error, Catch::Contains("empty"));
  CHECK_THAT(parse_event_list("REQ_NOTIFY:").error, Catch::Contains("entry 2 is empty"));
  CHECK_THAT(parse_event_list(":REQ_NOTIFY").error, Catch::Contains("entry 1 is empty"));
  CHECK_THAT(parse_event_list("REQ_NOTIFY::MSG_ARRIVED").error, Catch::Contains("entry 2"));
}
