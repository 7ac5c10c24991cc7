#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "events/catalogue.hpp"

using namespace perusetrace;

TEST_CASE("the catalogue lists Open MPI's 17 events in peruse.h order") {
  // peruse.h numbers REQ_ACTIVATE 0 ... SEARCH_UNEX_Q_END 16; the table keeps that order.
  CHECK(static_cast<int>(PeruseEvent::REQ_ACTIVATE) == 0);
  CHECK(static_cast<int>(PeruseEvent::REQ_XFER_CONTINUE) == 5);
  CHECK(static_cast<int>(PeruseEvent::MSG_ARRIVED) == 9);
  CHECK(static_cast<int>(PeruseEvent::SEARCH_UNEX_Q_END) == 16);
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kPeruseEventCount; ++i) {
    const auto& e = kPeruseEvents[i];
    CHECK(static_cast<std::size_t>(e.event) == i);
    CHECK(e.full_name == "PERUSE_COMM_" + std::string(e.short_name));
    CHECK_FALSE(e.description.empty());
    names.insert(e.short_name);
  }
  CHECK(names.size() == kPeruseEventCount);
}

TEST_CASE("events are found by full or short name in any letter case") {
  CHECK(find_event("PERUSE_COMM_REQ_XFER_BEGIN") == PeruseEvent::REQ_XFER_BEGIN);
  CHECK(find_event("REQ_XFER_BEGIN") == PeruseEvent::REQ_XFER_BEGIN);
  CHECK(find_event("req_xfer_begin") == PeruseEvent::REQ_XFER_BEGIN);
  CHECK(find_event("peruse_comm_msg_arrived") == PeruseEvent::MSG_ARRIVED);
  CHECK_FALSE(find_event("XFER_BEGIN").has_value());
  CHECK_FALSE(find_event("PERUSE_COMM_").has_value());
  CHECK_FALSE(find_event("").has_value());
}

TEST_CASE("phases group the events") {
  CHECK(info(PeruseEvent::REQ_NOTIFY).phase == EventPhase::Request);
  CHECK(info(PeruseEvent::MSG_INSERT_IN_UNEX_Q).phase == EventPhase::Message);
  CHECK(info(PeruseEvent::SEARCH_POSTED_Q_BEGIN).phase == EventPhase::Search);
}
