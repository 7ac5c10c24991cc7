// The archive reader's merge of several reading threads' streams (reader/event_merge.hpp)
// and what it leaves to the sequencer (reader/event_sequencer.hpp), on streams made here:
// the merged order is OTF2's global event reader's (smallest time, then smallest location id)
// whatever the split into streams, through bounded queues filled by threads of their own; a
// stream's error stops the merge; Peruse fields an earlier archive left out are completed, and
// datatypes named at a request's start reach its completion on another location.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "reader/batch_queue.hpp"
#include "reader/event_merge.hpp"
#include "reader/event_sequencer.hpp"
#include "record/peruse_fields.hpp"

using namespace perusetrace;
using namespace perusetrace::archive;

namespace {

EventRecord record(std::uint32_t loc, std::uint64_t t, std::uint64_t serial) {
  EventRecord r{};
  r.kind = RecordKind::Enter;
  r.loc = loc;
  r.t = t;
  r.x = serial;  // which event it is, to compare orders
  return r;
}

// OTF2's global event reader over `locations`: again and again the smallest next event by
// (time, location id), each location's events in their own order.
std::vector<EventRecord> global_order(const std::vector<std::vector<EventRecord>>& per_location,
                                      const std::vector<std::uint32_t>& locations,
                                      const std::vector<std::uint64_t>& ids) {
  std::vector<std::size_t> next(per_location.size(), 0);
  std::vector<EventRecord> out;
  for (;;) {
    int best = -1;
    for (const std::uint32_t l : locations) {
      if (next[l] == per_location[l].size()) continue;
      const EventRecord& r = per_location[l][next[l]];
      if (best < 0) {
        best = static_cast<int>(l);
        continue;
      }
      const EventRecord& b = per_location[static_cast<std::size_t>(best)][next[best]];
      if (std::tie(r.t, ids[l]) < std::tie(b.t, ids[static_cast<std::size_t>(best)]))
        best = static_cast<int>(l);
    }
    if (best < 0) return out;
    out.push_back(per_location[static_cast<std::size_t>(best)][next[best]++]);
  }
}

Definitions definitions(std::size_t locations) {
  Definitions defs;
  defs.ranks.resize(2);
  for (std::uint32_t i = 0; i < locations; ++i) {
    LocationDef l;
    l.id = i;
    l.rank = i % 2;
    defs.locations.push_back(l);
  }
  return defs;
}

// Each stream filled by a thread of its own through a queue of two batches (so the threads
// wait for the merge), then merged.
std::vector<EventRecord> merged(const std::vector<std::vector<EventRecord>>& streams,
                                const std::vector<std::uint64_t>& ids, const Definitions& defs,
                                std::exception_ptr error_of_last = nullptr) {
  std::vector<std::unique_ptr<BatchQueue>> queues;
  std::vector<BatchQueue*> pointers;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    queues.push_back(std::make_unique<BatchQueue>(2));
    pointers.push_back(queues.back().get());
  }
  std::vector<std::thread> fillers;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    fillers.emplace_back([&, i] {
      BatchQueue& q = *queues[i];
      BatchWriter w(q.first(), &q);
      try {
        for (const EventRecord& r : streams[i]) w.add(r.kind, r.loc, r.t).x = r.x;
        q.close(w.batch(), i + 1 == streams.size() ? error_of_last : nullptr);
      } catch (...) {
        q.close(w.batch(), std::current_exception());
      }
    });
  }
  EventSequencer sequencer(defs);
  EventBatch batch;
  std::vector<EventRecord> out;
  struct Collect final : BatchConsumer {
    std::vector<EventRecord>* out;
    EventBatch* consume(EventBatch* full) override {
      out->insert(out->end(), full->records.begin(), full->records.end());
      full->clear();
      return full;
    }
  } collect;
  collect.out = &out;
  BatchWriter writer(&batch, &collect);
  std::exception_ptr failure;
  try {
    merge_streams(pointers, ids, sequencer, MergedOutput{&writer, nullptr}, [] {});
    writer.flush();
  } catch (...) {
    failure = std::current_exception();
    for (auto& q : queues) q->abort(std::make_exception_ptr(std::runtime_error("stopped")));
  }
  for (auto& f : fillers) f.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace

TEST_CASE("streams merge into the global reader's order, equal times by location id") {
  std::mt19937_64 random(20261126);
  constexpr std::size_t kLocations = 7;
  // Location ids in another order than the indices, as perusetrace's are (thread * ranks + rank
  // against rank, then thread).
  const std::vector<std::uint64_t> ids = {0, 7, 14, 1, 8, 2, 9};
  const Definitions defs = definitions(kLocations);
  std::vector<std::vector<EventRecord>> per_location(kLocations);
  std::uint64_t serial = 0;
  for (std::uint32_t l = 0; l < kLocations; ++l) {
    std::uint64_t t = 0;
    // Few distinct times, so that many events of different locations share one; a location
    // may have several events at one time too.
    for (int i = 0; i < 30000; ++i) {
      t += random() % 3;
      per_location[l].push_back(record(l, t, serial++));
    }
  }
  std::vector<std::uint32_t> all(kLocations);
  for (std::uint32_t l = 0; l < kLocations; ++l) all[l] = l;
  const std::vector<EventRecord> expected = global_order(per_location, all, ids);
  std::size_t ties = 0;
  for (std::size_t i = 1; i < expected.size(); ++i)
    ties += expected[i].t == expected[i - 1].t && expected[i].loc != expected[i - 1].loc;
  REQUIRE(ties > 10000);  // the tie-break is what is tested

  for (const std::vector<std::vector<std::uint32_t>>& split :
       std::vector<std::vector<std::vector<std::uint32_t>>>{
           {{0, 1, 2, 3, 4, 5, 6}},
           {{0, 2, 4, 6}, {1, 3, 5}},
           {{1}, {0, 6}, {2, 3, 4, 5}},
           {{0}, {1}, {2}, {3}, {4}, {5}, {6}},
       }) {
    std::vector<std::vector<EventRecord>> streams;
    for (const auto& part : split) streams.push_back(global_order(per_location, part, ids));
    const std::vector<EventRecord> got = merged(streams, ids, defs);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("split into " << split.size() << " streams, event " << i);
      REQUIRE(got[i].x == expected[i].x);
    }
  }
}

TEST_CASE("a stream's error stops the merge and is thrown") {
  const Definitions defs = definitions(2);
  std::vector<std::vector<EventRecord>> streams(2);
  for (std::uint64_t i = 0; i < 50000; ++i) {
    streams[0].push_back(record(0, i, i));
    streams[1].push_back(record(1, i, i));
  }
  CHECK_THROWS_WITH(
      merged(streams, {0, 1}, defs, std::make_exception_ptr(ArchiveError("location 1 is damaged"))),
      "location 1 is damaged");
}

TEST_CASE("the sequencer completes a compact archive's Peruse fields per location") {
  const Definitions defs = definitions(2);
  EventSequencer sequencer(defs);
  auto peruse = [](std::uint32_t loc, std::uint64_t request, std::int32_t peer, unsigned present) {
    EventRecord r{};
    r.kind = RecordKind::Peruse;
    r.loc = loc;
    r.x = request;
    r.b = static_cast<std::uint32_t>(peer);
    r.c = 0;
    r.d = kNoComm;
    r.aux = static_cast<std::uint8_t>(present);
    return r;
  };
  EventRecord first = peruse(0, 42, 3, trace::kAllFields);
  first.c = 7;  // tag
  first.y = 1024;
  first.d = 5;
  sequencer.sequence(first);
  EventRecord other_location = peruse(1, 42, 9, trace::kAllFields);
  sequencer.sequence(other_location);
  // Only the request: the rest is location 0's last event of request 42, not location 1's.
  EventRecord repeat = peruse(0, 42, -1, trace::kFieldRequest);
  sequencer.sequence(repeat);
  CHECK(repeat.b == 3);
  CHECK(repeat.c == 7);
  CHECK(repeat.y == 1024);
  CHECK(repeat.d == 5);
  CHECK(repeat.aux == 0);
  // Not even the request: the location's last request.
  EventRecord bare = peruse(0, 0, -1, 0);
  sequencer.sequence(bare);
  CHECK(bare.x == 42);
  CHECK(bare.b == 3);
}

TEST_CASE("datatypes a request's start named reach its completion on another thread") {
  Definitions defs = definitions(4);      // locations 0 and 2 are rank 0's threads
  defs.timer_resolution = 2'000'000'000;  // two ticks a ns
  defs.global_offset = 100;
  EventSequencer sequencer(defs);
  EventRecord start{};
  start.kind = RecordKind::CollectiveRequest;
  start.loc = 0;
  start.t = 300;
  start.x = 77;  // request
  start.a = 4;   // send datatype
  start.b = 5;   // receive datatype
  start.aux = kKeepsDatatypes;
  sequencer.sequence(start);
  CHECK(start.t == 100);
  CHECK(start.a == 0);
  CHECK(start.b == 0);
  EventRecord done{};
  done.kind = RecordKind::Collective;
  done.loc = 2;
  done.t = 500;
  done.c = 0;
  done.d = 77;
  done.aux = kLooksUpDatatypes;
  EventRecord send{}, receive{};
  send.kind = receive.kind = RecordKind::DatatypeUse;
  send.loc = receive.loc = 2;
  send.aux = receive.aux = kFromCompletion;
  send.flag = static_cast<std::uint8_t>(DatatypeUse::CollectiveSend);
  receive.flag = static_cast<std::uint8_t>(DatatypeUse::CollectiveReceive);
  sequencer.sequence(done);
  sequencer.sequence(send);
  sequencer.sequence(receive);
  CHECK(send.kind == RecordKind::DatatypeUse);
  CHECK(send.a == 4);
  CHECK(receive.a == 5);
  // The request is done with: completing it again names no datatype.
  done.aux = kLooksUpDatatypes;
  send.aux = kFromCompletion;
  sequencer.sequence(done);
  sequencer.sequence(send);
  CHECK(send.kind == RecordKind::Nothing);
  // Another rank's request of the same number is another request.
  start.loc = 0;
  start.a = 4;
  start.b = kNoDatatype;
  start.aux = kKeepsDatatypes;
  sequencer.sequence(start);
  done.loc = 1;  // rank 1
  done.aux = kLooksUpDatatypes;
  send.kind = RecordKind::DatatypeUse;
  send.aux = kFromCompletion;
  sequencer.sequence(done);
  sequencer.sequence(send);
  CHECK(send.kind == RecordKind::Nothing);
}
