// The .prv writer's order: records that arrive late (a state written when it ends, a message when
// it is matched) come out sorted by time, ties in the order they came, whether they go through
// sorted runs, stream out as soon as nothing can sort before them, or start streaming and fall
// back to runs when the caller's settled time stops moving.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tools/prv/prv_archive.hpp"
#include "tools/prv/prv_writer.hpp"

namespace {

using perusetrace::prv::PrvObject;
using perusetrace::prv::PrvWriter;

struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/prv-writer-test-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A thread's life as the translator writes it: events at the current time, each state when it
// ends (begun earlier), now and then a message from a send a while back. `settled` tells the
// writer the earliest time still to come, as Translator::settled_before() does.
struct Feed {
  std::uint64_t now = 0;
  std::uint64_t state_since[3] = {0, 0, 0};
  std::uint64_t pending_send = ~std::uint64_t{0};
  std::uint64_t stuck_at = ~std::uint64_t{0};  // a state that never ends, from this time on

  std::uint64_t settled() const {
    std::uint64_t t = pending_send;
    for (std::uint64_t s : state_since) t = std::min(t, s);
    return std::min(t, stuck_at);
  }

  void run(PrvWriter& w, int steps) {
    for (int i = 0; i < steps; ++i) {
      now += 1 + static_cast<std::uint64_t>(i % 3);  // equal times never, but close ones
      const unsigned thread = static_cast<unsigned>(i % 3);
      const PrvObject o{thread + 1, thread + 1, 1};
      const std::pair<std::uint64_t, std::uint64_t> e[] = {
          {50000001, static_cast<std::uint64_t>(i)}};
      w.event(o, now, e, 1);
      w.event(o, now, e, 1);  // a tie: both at `now`, in this order
      if (i % 7 == 0) {
        w.state(o, state_since[thread], now, 1 + static_cast<std::uint32_t>(i % 5));
        state_since[thread] = now;
      }
      if (i % 11 == 0) pending_send = now;
      if (i % 11 == 5) {
        w.comm(PrvObject{1, 1, 1}, pending_send, pending_send, PrvObject{2, 2, 1}, now, now, 8, 7);
        pending_send = ~std::uint64_t{0};
      }
    }
    for (unsigned t = 0; t < 3; ++t)
      w.state(PrvObject{t + 1, t + 1, 1}, state_since[t], now + 1, 1);
  }
};

std::string convert(const std::string& dir, const std::string& name, std::size_t run_bytes,
                    bool streaming, std::uint64_t stuck_at, std::uint64_t* streamed = nullptr,
                    std::size_t* runs = nullptr) {
  const std::string path = dir + "/" + name + ".prv";
  Feed feed;
  feed.stuck_at = stuck_at;
  const int steps = 20000;
  const std::uint64_t end = 2 * 3 * steps;  // past every time the feed makes
  {
    PrvWriter w(path, run_bytes);
    if (streaming) w.stream("#header\n", end, [&feed] { return feed.settled(); });
    feed.run(w, steps);
    if (runs != nullptr) *runs = w.runs();
    w.finish([](std::uint64_t) { return std::string("#header\n"); }, nullptr);
    if (streamed != nullptr) *streamed = w.streamed();
  }
  return read_file(path);
}

// The sixth field of each record line, in order.
std::vector<std::uint64_t> times(const std::string& prv) {
  std::vector<std::uint64_t> out;
  std::istringstream in(prv);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::size_t at = 0;
    for (int colons = 0; colons < 5; ++colons) at = line.find(':', at) + 1;
    out.push_back(std::stoull(line.substr(at, line.find(':', at) - at)));
  }
  return out;
}

}  // namespace

TEST_CASE("records come out sorted, ties in the order they came, on every path") {
  TempDir dir;
  // One run in memory: the reference.
  const std::string reference = convert(dir.path, "one_run", 64u << 20, false, ~0ull);
  const std::vector<std::uint64_t> t = times(reference);
  REQUIRE(t.size() > 40000);
  CHECK(std::is_sorted(t.begin(), t.end()));

  SECTION("spilled to more sorted runs than are merged at once") {
    std::size_t runs = 0;
    CHECK(convert(dir.path, "runs", 16u << 10, false, ~0ull, nullptr, &runs) == reference);
    CHECK(runs > 64);
  }
  SECTION("streamed as soon as settled") {
    std::uint64_t streamed = 0;
    std::size_t runs = 0;
    CHECK(convert(dir.path, "streamed", 64u << 10, true, ~0ull, &streamed, &runs) == reference);
    CHECK(runs == 0);
    CHECK(streamed > t.size() / 2);  // all but the last buffer went out before finish()
  }
  SECTION("streaming, then runs once a state stays open") {
    std::uint64_t streamed = 0;
    std::size_t runs = 0;
    CHECK(convert(dir.path, "fallback", 64u << 10, true, 20000, &streamed, &runs) == reference);
    CHECK(streamed > 0);
    CHECK(runs > 1);
  }
}

TEST_CASE("a record after the end the streamed header gave is an overrun, not a wrong trace") {
  TempDir dir;
  PrvWriter w(dir.path + "/late.prv", 64u << 10);
  w.stream("#header\n", 100, [] { return std::uint64_t{0}; });
  w.state(PrvObject{}, 0, 150, 1);
  CHECK_THROWS_AS(w.finish([](std::uint64_t) { return std::string(); }, nullptr),
                  perusetrace::prv::StreamOverrun);
}

TEST_CASE("a conversion that stops half-way leaves no .prv behind") {
  TempDir dir;
  const std::string path = dir.path + "/stopped.prv";
  {
    PrvWriter w(path, 64u << 10);
    w.stream("#header\n", 1000, [] { return std::uint64_t{500}; });
    w.state(PrvObject{}, 0, 10, 1);
    CHECK(::access(path.c_str(), F_OK) == 0);  // begun
  }  // destroyed without finish(), as when the reader throws
  CHECK(::access(path.c_str(), F_OK) != 0);
}
