#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "mpi_functions.hpp"
#include "settings.hpp"

using namespace perusetrace;

namespace {
Settings read(const std::map<std::string, std::string>& env) {
  return read_settings([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}
bool traces(const Settings& s, Group g) {
  return s.group_mask >> static_cast<unsigned>(g) & 1u;
}
}  // namespace

TEST_CASE("defaults: on, the message life cycle, every group but the timer") {
  const Settings s = read({});
  CHECK(s.errors.empty());
  CHECK(s.enabled);
  CHECK(s.peruse_events == default_events());
  CHECK_FALSE(s.peruse_events_set);
  CHECK(s.buffer_bytes == 8u << 20);
  CHECK(traces(s, Group::p2p));
  CHECK(traces(s, Group::io));
  CHECK_FALSE(traces(s, Group::timer));
}

TEST_CASE("sizes take plain bytes or K/M/G") {
  std::size_t n = 0;
  CHECK((parse_size("65536", n) && n == 65536));
  CHECK((parse_size("64K", n) && n == 65536));
  CHECK((parse_size("8M", n) && n == 8u << 20));
  CHECK((parse_size("1g", n) && n == 1u << 30));
  CHECK((parse_size("2MiB", n) && n == 2u << 20));
  CHECK_FALSE(parse_size("", n));
  CHECK_FALSE(parse_size("-1M", n));
  CHECK_FALSE(parse_size("8X", n));
  CHECK_FALSE(parse_size("M", n));
  CHECK_FALSE(parse_size("99999999999999999999", n));
  CHECK_FALSE(parse_size("99999999999999G", n));
}

TEST_CASE("groups: lists, all, default; unknown names are refused") {
  std::uint32_t mask = 0;
  std::string error;
  REQUIRE(parse_groups("p2p,coll", mask, error));
  CHECK(mask ==
        ((1u << static_cast<unsigned>(Group::p2p)) | (1u << static_cast<unsigned>(Group::coll))));
  REQUIRE(parse_groups("all", mask, error));
  CHECK(mask >> static_cast<unsigned>(Group::timer) & 1u);
  REQUIRE(parse_groups("default", mask, error));
  CHECK(mask == default_group_mask());
  CHECK_FALSE(parse_groups("p2p,colls", mask, error));
  CHECK_THAT(error, Catch::Contains("MPITRACE_GROUPS") && Catch::Contains("'colls'") &&
                        Catch::Contains("p2p, coll"));
  CHECK_FALSE(parse_groups("", mask, error));
}

TEST_CASE("every bad variable is named with its value and what is allowed") {
  const Settings s = read({{"MPITRACE_ENABLED", "maybe"},
                           {"MPITRACE_BUFFER_SIZE", "-5"},
                           {"MPITRACE_PERUSE_EVENTS", "REQ_BOGUS"},
                           {"MPITRACE_OUTPUT", ""},
                           {"MPITRACE_GROUPS", "nope"}});
  CHECK_THAT(s.errors, Catch::Contains("MPITRACE_ENABLED='maybe'"));
  CHECK_THAT(s.errors,
             Catch::Contains("MPITRACE_BUFFER_SIZE='-5'") && Catch::Contains("64K to 1G"));
  CHECK_THAT(s.errors, Catch::Contains("unknown event 'REQ_BOGUS'"));
  CHECK_THAT(s.errors, Catch::Contains("MPITRACE_OUTPUT is set but empty"));
  CHECK_THAT(s.errors, Catch::Contains("unknown group 'nope'"));
}

TEST_CASE("buffer sizes outside 64K..1G are refused, not clamped") {
  CHECK_THAT(read({{"MPITRACE_BUFFER_SIZE", "1K"}}).errors, Catch::Contains("64K to 1G"));
  CHECK_THAT(read({{"MPITRACE_BUFFER_SIZE", "2G"}}).errors, Catch::Contains("64K to 1G"));
  CHECK(read({{"MPITRACE_BUFFER_SIZE", "64K"}}).buffer_bytes == 65536);
}

TEST_CASE("switching off") {
  CHECK_FALSE(read({{"MPITRACE_ENABLED", "0"}}).enabled);
  CHECK_FALSE(read({{"MPITRACE_ENABLED", "off"}}).enabled);
  CHECK(read({{"MPITRACE_ENABLED", "YES"}}).enabled);
}
