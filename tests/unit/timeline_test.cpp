// The report's HTML timeline in C++ (tools/report/timeline_*): the summary's dominant states,
// counts and counter maxima at every level, the detail kept around a window once the trace has
// more items than a page holds whole, and the second thread the report's analyses run on.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reader/pipelined_sink.hpp"
#include "tools/report/timeline_detail.hpp"
#include "tools/report/timeline_summary.hpp"

using namespace perusetrace;
using namespace perusetrace::report::timeline;
using archive::CallKind;

namespace {

// 16384 finest buckets of exactly 100 ns each.
constexpr std::uint64_t kSpan = 16384 * 100;

std::uint8_t encoded(CallKind kind, int fifteenths) {
  return static_cast<std::uint8_t>(static_cast<int>(kind) | (fifteenths << 4));
}

Item marker(std::uint64_t t, std::uint64_t id) {
  Item item;
  item.type = ItemType::Marker;
  item.t0 = item.t1 = t;
  item.id = id;
  return item;
}

}  // namespace

TEST_CASE("the summary keeps each bucket's dominant state and its share of MPI, per level") {
  SummaryBuilder summary(kSpan, 2);  // the second row never has an event
  REQUIRE(summary.buckets() == 16384);
  // A row's events come in time order.
  summary.state(0, 0, CallKind::OutsideMpi);
  summary.state(0, 25, CallKind::WaitMessage);  // bucket 0: 75 of 100 ns waiting
  summary.state(0, 100, CallKind::OutsideMpi);
  summary.counter(0, 0, 120, 3);  // from bucket 1 on: 3, then 1 from 450 (bucket 4)
  summary.event(0, 150);
  summary.state(0, 160, CallKind::Collective);  // bucket 1: 60 outside, 40 collective
  summary.event(0, 199);
  summary.state(0, 200, CallKind::OutsideMpi);
  summary.counter(0, 0, 450, 1);
  summary.state(0, 1000, CallKind::OutsideMpi);  // the row's last event: bucket 10
  Timeline tl;
  summary.finish(tl);
  const RowSummary& row = tl.summary[0];
  CHECK(row.states[0] == encoded(CallKind::WaitMessage, 11));  // 0.75 of 15
  CHECK(row.states[1] == encoded(CallKind::OutsideMpi, 6));    // 0.4 of 15
  CHECK(row.states[2] == encoded(CallKind::OutsideMpi, 0));
  CHECK(row.states[9] == encoded(CallKind::OutsideMpi, 0));
  CHECK(row.states[11] == kNoState);  // after the row's last event
  // Level 1 (200 ns): 85 outside, 75 waiting, 40 collective; 115 of 200 in MPI.
  CHECK(row.states[16384] == encoded(CallKind::OutsideMpi, 9));
  CHECK(row.events[1] == 2);
  CHECK(row.events[0] == 0);
  const std::vector<double>& depth = row.counters[0];
  CHECK(depth[0] == 0);
  CHECK(depth[1] == 3);
  CHECK(depth[3] == 3);
  CHECK(depth[4] == 3);  // it held 3 until 450
  CHECK(depth[5] == 1);
  CHECK(depth[10] == 1);
  CHECK(depth[11] == 0);  // past the row's end
  CHECK(row.counters[1].empty());
  CHECK(std::all_of(tl.summary[1].states.begin(), tl.summary[1].states.end(),
                    [](std::uint8_t s) { return s == kNoState; }));

  // Cut to 4096 buckets of 400 ns: the coarser levels are kept exactly; counts add up and
  // counters keep their highest value.
  coarsen(tl, 4096);
  CHECK(tl.buckets == 4096);
  CHECK(tl.levels == 13);
  CHECK(tl.summary[0].states.size() == 2 * 4096 - 1);
  CHECK(tl.summary[0].events[0] == 2);
  CHECK(tl.summary[0].counters[0][0] == 3);
  CHECK(tl.summary[0].counters[0][1] == 3);  // 400..800: 3 until 450
  CHECK(tl.summary[0].counters[0][2] == 1);
}

TEST_CASE("a small trace's detail is kept whole") {
  DetailKeeper keeper([](std::uint64_t, std::vector<Item>&) {});
  for (std::uint64_t t = 0; t < 1000; ++t) keeper.add(marker(t, t + 1), t);
  Timeline tl;
  keeper.finish(2000, tl);
  CHECK(tl.complete);
  REQUIRE(tl.coverage.size() == 1);
  CHECK(tl.coverage[0].from == 0);
  CHECK(tl.coverage[0].to == 2000);
  CHECK(tl.items.size() == 1000);
  CHECK(tl.items_seen == 1000);
}

TEST_CASE("past the whole-trace limit, the ends and the windows asked for are kept") {
  std::vector<std::uint64_t> cut_at;
  DetailKeeper keeper([&](std::uint64_t t, std::vector<Item>& out) {
    // One MPI call running from 299990 to the end (id 1 << 40), cut where a window closes.
    Item call;
    call.type = ItemType::State;
    call.t0 = 299'990;
    call.t1 = t;
    call.id = 1ull << 40;
    call.open = true;
    if (t >= call.t0) out.push_back(call);
    cut_at.push_back(t);
  });
  const std::uint64_t n = kWholeTraceItems + 300'000;  // the last edge starts after 490000
  DetailKeeper::WindowId kept = 0, dropped = 0;
  for (std::uint64_t t = 0; t < n; ++t) {
    keeper.advance(t);
    keeper.add(marker(t, t + 1), t);
    if (t == 300'050) kept = keeper.open_window(300'000, 300'100, t);  // found at its end
    if (t == 310'000) dropped = keeper.open_window(309'000, 309'100, t);
  }
  CHECK(kept != dropped);
  keeper.drop_window(dropped);
  Timeline tl;
  keeper.finish(n, tl);
  CHECK_FALSE(tl.complete);
  // Closed: the first edge when full, each window when the stream passed it (the second one
  // before it was dropped), the end.
  CHECK(cut_at == std::vector<std::uint64_t>{kEdgeItems - 1, 300'100, 309'100, n});
  auto covered = [&](std::uint64_t t) {
    return std::any_of(tl.coverage.begin(), tl.coverage.end(),
                       [&](const Coverage& c) { return t >= c.from && t <= c.to; });
  };
  CHECK(covered(0));
  CHECK(covered(kEdgeItems - 2));
  CHECK_FALSE(covered(kEdgeItems + 10));
  CHECK(covered(300'000));
  CHECK(covered(300'100));
  CHECK_FALSE(covered(299'999));
  CHECK_FALSE(covered(309'050));  // the dropped window's
  CHECK(covered(n - 1));
  CHECK_FALSE(covered(n - kEdgeItems - 1));
  // Every marker inside the coverage once, none outside it.
  std::vector<std::uint64_t> times;
  std::uint64_t calls = 0;
  for (const Item& item : tl.items) {
    if (item.type == ItemType::State) {
      ++calls;
      CHECK(item.t1 == n);  // the longest of its cut copies
      CHECK(item.open);
      continue;
    }
    times.push_back(item.t0);
  }
  CHECK(calls == 1);
  CHECK(std::is_sorted(times.begin(), times.end()));
  CHECK(std::adjacent_find(times.begin(), times.end()) == times.end());
  std::uint64_t expected = 0;
  for (std::uint64_t t = 0; t < n; ++t) expected += covered(t) ? 1 : 0;
  CHECK(times.size() == expected);
  CHECK(std::all_of(times.begin(), times.end(), covered));
}

namespace {

// Writes down every call it gets.
class Log : public archive::EventSink {
 public:
  std::vector<std::string> calls;
  std::size_t fail_at = ~std::size_t{0};
  void note(std::string s) {
    if (calls.size() == fail_at) throw std::runtime_error("the analysis failed");
    calls.push_back(std::move(s));
  }
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    note("enter " + std::to_string(loc) + " " + std::to_string(t) + " " + std::to_string(region));
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override {
    note("peruse " + std::to_string(loc) + " " + std::to_string(t) + " " + std::to_string(region) +
         " " + std::to_string(f.request) + " " + std::to_string(f.peer) + " " +
         std::to_string(f.tag) + " " + std::to_string(f.bytes) + " " + std::to_string(f.operation) +
         " " + std::to_string(f.comm));
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    if (e.kind != archive::P2pKind::Send) return;
    note("send " + std::to_string(loc) + " " + std::to_string(t) + " " + std::to_string(e.peer) +
         " " + std::to_string(e.comm) + " " + std::to_string(e.tag) + " " +
         std::to_string(e.bytes) + " " + std::to_string(e.request) + " " +
         std::to_string(e.blocking));
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    note("real " + std::to_string(loc) + " " + std::to_string(t) + " " + std::to_string(metric) +
         " " + std::to_string(value));
  }
};

// Feeds N events straight to one LogT and through the pipeline's second thread to another: the
// second must get every call the first did, in the same order, with the same fields.
template <typename LogT>
void check_pipelined(void (*feed)(archive::EventSink&, std::uint64_t), std::uint64_t n) {
  LogT direct, piped;
  feed(direct, n);
  {
    archive::PipelinedSink pipeline(piped);
    feed(pipeline, n);
    pipeline.finish();
  }
  CHECK(piped.calls.size() == n);
  CHECK(piped.calls == direct.calls);
}

void feed(archive::EventSink& sink, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto loc = static_cast<std::uint32_t>(i % 3);
    switch (i % 4) {
      case 0:
        sink.enter(loc, i, static_cast<std::uint32_t>(i % 7));
        break;
      case 1: {
        archive::PeruseFields f;
        f.request = i * 11;
        f.peer = -1;
        f.tag = -16;
        f.bytes = i << 20;
        f.operation = 1;
        f.comm = archive::kNoComm;
        sink.peruse(loc, i, 5, f);
        break;
      }
      case 2:
        sink.point_to_point(loc, i, {archive::P2pKind::Send, 2, 0, 42, i * 3, i, i % 8 == 2});
        break;
      default:
        sink.real_metric(loc, i, 1, 0.5 + static_cast<double>(i));
    }
  }
}

}  // namespace

TEST_CASE("the second thread gets every event, in order, with every field") {
  check_pipelined<Log>(feed, 100'000);
}

namespace {

// Writes down every MPI-IO call it gets, with every field.
class IoLog : public archive::EventSink {
 public:
  std::vector<std::string> calls;
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size) override {
    calls.push_back(fmt::format("create {} {} {} {}", loc, t, handle, size));
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    calls.push_back(fmt::format("destroy {} {} {}", loc, t, handle));
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const archive::IoBegin& op) override {
    calls.push_back(fmt::format("begin {} {} {} {} {} {} {}", loc, t, handle,
                                static_cast<int>(op.mode), op.flags, op.bytes, op.matching));
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const archive::IoComplete& done) override {
    calls.push_back(
        fmt::format("complete {} {} {} {} {}", loc, t, handle, done.bytes, done.matching));
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
               const archive::IoSeek& seek) override {
    calls.push_back(fmt::format("seek {} {} {} {} {} {}", loc, t, handle, seek.offset,
                                static_cast<int>(seek.from), seek.reached));
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                 const archive::IoResize& resize) override {
    calls.push_back(
        fmt::format("resize {} {} {} {} {}", loc, t, handle, resize.region, resize.size));
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    calls.push_back(fmt::format("delete {} {} {}", loc, t, file));
  }
};

void feed_io(archive::EventSink& sink, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto loc = static_cast<std::uint32_t>(i % 5);
    const auto handle = static_cast<std::uint32_t>(i % 11);
    switch (i % 7) {
      case 0:
        sink.io_handle_created(loc, i, handle, i % 3 ? i * 1000 : archive::kUnknownSize);
        break;
      case 1:
        sink.io_begin(loc, i, handle,
                      {static_cast<archive::IoMode>(i % 3), static_cast<std::uint32_t>(i % 4),
                       i % 3 == 2 ? archive::kUnknownSize : i * 4, i});
        break;
      case 2:
        sink.io_complete(loc, i, handle, {i * 4, i - 1});
        break;
      case 3:
        sink.io_seek(loc, i, handle,
                     {-static_cast<std::int64_t>(i), static_cast<archive::IoSeekFrom>(i % 4), i});
        break;
      case 4:
        sink.io_resize(loc, i, handle, {300 + static_cast<std::uint32_t>(i % 2), i << 16});
        break;
      case 5:
        sink.io_delete(loc, i, static_cast<std::uint32_t>(i % 13));
        break;
      default:
        sink.io_handle_destroyed(loc, i, handle);
    }
  }
}

}  // namespace

TEST_CASE("MPI-IO events reach the second thread in order with every field") {
  check_pipelined<IoLog>(feed_io, 50'000);
}

TEST_CASE("an analysis that fails stops the reading with its error") {
  Log piped;
  piped.fail_at = 20'000;
  std::string error;
  try {
    archive::PipelinedSink pipeline(piped);
    feed(pipeline, 200'000);
    pipeline.finish();
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK(error == "the analysis failed");
  CHECK(piped.calls.size() == 20'000);
}
