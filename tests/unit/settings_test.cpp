#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "lib/mpi_functions.hpp"
#include "lib/settings.hpp"

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

TEST_CASE("sampling periods: 100us to 1s with a unit; faster, slower or garbage are refused") {
  CHECK(read({}).sampling_period_ns == 0);
  CHECK(read({{"MPITRACE_SAMPLING", "1ms"}}).sampling_period_ns == 1'000'000);
  CHECK(read({{"MPITRACE_SAMPLING", "500us"}}).sampling_period_ns == 500'000);
  CHECK(read({{"MPITRACE_SAMPLING", "100us"}}).sampling_period_ns == 100'000);
  CHECK(read({{"MPITRACE_SAMPLING", "1s"}}).sampling_period_ns == 1'000'000'000);
  CHECK(read({{"MPITRACE_SAMPLING", "off"}}).sampling_period_ns == 0);
  for (const char* v : {"50us", "99us", "2s", "1", "fast", "1 ms", "ms", ""}) {
    INFO("MPITRACE_SAMPLING='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_SAMPLING", v}}).errors,
               Catch::Contains(std::string("MPITRACE_SAMPLING='") + v + "'") &&
                   Catch::Contains("100us to 1s"));
  }
}

TEST_CASE("the journal's limit: auto by default, off, or a size of 1M and more") {
  CHECK(read({}).max_size_auto);
  CHECK(read({{"MPITRACE_MAX_SIZE", "AUTO"}}).max_size_auto);
  const Settings off = read({{"MPITRACE_MAX_SIZE", "off"}});
  CHECK_FALSE(off.max_size_auto);
  CHECK(off.max_journal_bytes == 0);
  const Settings twenty = read({{"MPITRACE_MAX_SIZE", "20G"}});
  CHECK_FALSE(twenty.max_size_auto);
  CHECK(twenty.max_journal_bytes == 20ull << 30);
  CHECK(read({{"MPITRACE_MAX_SIZE", "2T"}}).max_journal_bytes == 2ull << 40);
  CHECK(read({{"MPITRACE_MAX_SIZE", "1M"}}).errors.empty());
  for (const char* v : {"512K", "lots", "-1G", "1 G", ""}) {
    INFO("MPITRACE_MAX_SIZE='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_MAX_SIZE", v}}).errors,
               Catch::Contains(std::string("MPITRACE_MAX_SIZE='") + v + "'") &&
                   Catch::Contains("1M and more"));
  }
}

TEST_CASE("the sampling clock: the threads' CPU time unless MPITRACE_SAMPLING_CLOCK=wall") {
  CHECK_FALSE(read({}).sampling_wall_clock);
  CHECK_FALSE(read({{"MPITRACE_SAMPLING_CLOCK", "CPU"}}).sampling_wall_clock);
  CHECK(read({{"MPITRACE_SAMPLING_CLOCK", "wall"}}).sampling_wall_clock);
  CHECK(read({{"MPITRACE_SAMPLING_CLOCK", "wall"}}).errors.empty());
  CHECK_THAT(read({{"MPITRACE_SAMPLING_CLOCK", "monotonic"}}).errors,
             Catch::Contains("MPITRACE_SAMPLING_CLOCK='monotonic'") && Catch::Contains("cpu") &&
                 Catch::Contains("wall"));
}

TEST_CASE("sample-only mode and rank selection") {
  const Settings sample = read({{"MPITRACE_MODE", "sample"}});
  CHECK(sample.sample_only);
  CHECK(sample.sampling_period_ns == 1'000'000);  // sampling on by default in that mode
  CHECK(read({{"MPITRACE_MODE", "sample"}, {"MPITRACE_SAMPLING", "500us"}}).sampling_period_ns ==
        500'000);
  CHECK_THAT(read({{"MPITRACE_MODE", "sample"}, {"MPITRACE_SAMPLING", "off"}}).errors,
             Catch::Contains("would record nothing"));
  CHECK_THAT(read({{"MPITRACE_MODE", "profile"}}).errors,
             Catch::Contains("MPITRACE_MODE='profile'") && Catch::Contains("Allowed: trace"));
  const Settings ranks = read({{"MPITRACE_RANKS", "0,4-7"}});
  CHECK(rank_selected(ranks, 0));
  CHECK_FALSE(rank_selected(ranks, 1));
  CHECK(rank_selected(ranks, 5));
  CHECK_FALSE(rank_selected(ranks, 8));
  CHECK(rank_selected(read({}), 123));
  for (const char* v : {"", "a", "3-1", "-2", "1,,x", "0-", "1.5"}) {
    INFO("MPITRACE_RANKS='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_RANKS", v}}).errors,
               Catch::Contains(std::string("MPITRACE_RANKS='") + v + "'"));
  }
}

TEST_CASE("MPI_T settings: PVAR lists, read times, CVAR assignments") {
  CHECK(read({{"MPITRACE_PVARS", "all"}}).pvars == std::vector<std::string>{"*"});
  CHECK(read({{"MPITRACE_PVARS", "a_*,,b"}}).pvars == std::vector<std::string>{"a_*", "b"});
  CHECK(read({{"MPITRACE_PVARS", "none"}}).pvars.empty());
  CHECK(read({{"MPITRACE_PVAR_READ", "10ms"}}).pvar_period_ns == 10'000'000);
  CHECK(read({{"MPITRACE_PVAR_READ", "call"}}).pvar_period_ns == 0);
  for (const char* v : {"often", "10", "0ms", ""})
    CHECK_THAT(read({{"MPITRACE_PVAR_READ", v}}).errors,
               Catch::Contains(std::string("MPITRACE_PVAR_READ='") + v + "'"));
  const Settings s = read({{"MPITRACE_CVARS", "a=1,b=x=y"}});
  REQUIRE(s.cvars.size() == 2);
  CHECK(s.cvars[1] == std::pair<std::string, std::string>{"b", "x=y"});
  CHECK_THAT(read({{"MPITRACE_CVARS", "a=1,=2"}}).errors,
             Catch::Contains("MPITRACE_CVARS item '=2' is not NAME=VALUE"));
}

TEST_CASE("switching off") {
  CHECK_FALSE(read({{"MPITRACE_ENABLED", "0"}}).enabled);
  CHECK_FALSE(read({{"MPITRACE_ENABLED", "off"}}).enabled);
  CHECK(read({{"MPITRACE_ENABLED", "YES"}}).enabled);
}

TEST_CASE("MPITRACE_* variables nothing reads are named, with the closest known one") {
  const char* env[] = {"PATH=/bin",
                       "MPITRACE_BUFER_SIZE=4M",
                       "MPITRACE_OUTPUT=x",
                       "mpitrace_groups=p2p",
                       "MPITRACE_OMPI_TARBALL=/t.tar.xz",
                       "MPITRACE_WHATEVER=1",
                       "MPITRACE_",
                       nullptr};
  const std::string out = unknown_variables(env);
  CHECK_THAT(out, Catch::Contains("MPITRACE_BUFER_SIZE is not a perusetrace setting") &&
                      Catch::Contains("did you mean MPITRACE_BUFFER_SIZE?"));
  CHECK_THAT(out, !Catch::Contains("MPITRACE_OUTPUT ") && !Catch::Contains("OMPI_TARBALL"));
  CHECK_THAT(out, !Catch::Contains("mpitrace_groups"));  // not MPITRACE_: not ours to judge
  CHECK_THAT(out, Catch::Contains("MPITRACE_WHATEVER is not") && Catch::Contains("Settings:"));
  CHECK(std::count(out.begin(), out.end(), '\n') == 3);
  const char* clean[] = {"MPITRACE_ENABLED=1", nullptr};
  CHECK(unknown_variables(clean).empty());
  CHECK(unknown_variables(nullptr).empty());
}

TEST_CASE("garbage values are refused with the value quoted, never clamped or defaulted") {
  for (const char* v : {"", " 8M", "8M ", "8 M", "-1", "0", "1e6", "8T", "0x100000", "NaN"}) {
    const Settings s = read({{"MPITRACE_BUFFER_SIZE", v}});
    INFO("MPITRACE_BUFFER_SIZE='" << v << "'");
    CHECK_THAT(s.errors, Catch::Contains(std::string("MPITRACE_BUFFER_SIZE='") + v + "'"));
    CHECK(s.buffer_bytes == 8u << 20);
  }
  for (const char* v : {"", "2", "y", "enabled", " on"}) {
    INFO("MPITRACE_ENABLED='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_ENABLED", v}}).errors, Catch::Contains("is not a switch"));
  }
  for (const char* v : {"", ":", "REQ_XFER_BEGIN:", "::all", "REQ XFER BEGIN"}) {
    INFO("MPITRACE_PERUSE_EVENTS='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_PERUSE_EVENTS", v}}).errors,
               Catch::Contains("MPITRACE_PERUSE_EVENTS"));
  }
  for (const char* v : {"", "rdtsc", "TSC ", "1"}) {
    INFO("MPITRACE_CLOCK='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_CLOCK", v}}).errors,
               Catch::Contains(std::string("MPITRACE_CLOCK='") + v + "'") &&
                   Catch::Contains("Allowed: auto"));
  }
  CHECK(read({{"MPITRACE_CLOCK", "Monotonic"}}).clock == ClockChoice::Monotonic);
  CHECK(read({{"MPITRACE_CLOCK", "tsc"}}).clock == ClockChoice::Tsc);
  for (const char* v : {"", "score-p", "vite2"}) {
    INFO("MPITRACE_OTF2_COMMS='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_OTF2_COMMS", v}}).errors,
               Catch::Contains(std::string("MPITRACE_OTF2_COMMS='") + v + "'") &&
                   Catch::Contains("Allowed: otf2"));
  }
  CHECK_FALSE(read({}).vite_comms);
  CHECK(read({{"MPITRACE_OTF2_COMMS", "ViTE"}}).vite_comms);
  CHECK_FALSE(read({{"MPITRACE_OTF2_COMMS", "otf2"}}).vite_comms);
  for (const char* v : {"", ",", "p2p,", "p2p coll"}) {
    INFO("MPITRACE_GROUPS='" << v << "'");
    CHECK_THAT(read({{"MPITRACE_GROUPS", v}}).errors, Catch::Contains("MPITRACE_GROUPS"));
  }
}
