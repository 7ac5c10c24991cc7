// What the HTML page's timeline shows of an archive, built while the report streams it
// (timeline_builder.hpp) in memory that does not grow with the trace:
//  - a summary of the whole trace: per row (location) and time bucket, at several resolutions,
//    the state the row spent most of the bucket in and how much of it was in MPI; the number of
//    Peruse events and the highest value of each counter per bucket;
//  - detail (every MPI call, Peruse event, message and counter change) for the whole trace when
//    it has few enough, else for windows around the occurrences the pattern tables list and at
//    the trace's start and end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace perusetrace::report::timeline {

// The limits (docs/performance.md, "The report's HTML timeline").
inline constexpr std::size_t kMaxBuckets = 16384;          // finest summary buckets per row
inline constexpr std::size_t kSummaryCells = 1u << 20;     // rows x finest buckets, at most
inline constexpr std::size_t kMinBuckets = 256;            // per row, however many rows
inline constexpr std::size_t kScreenBuckets = 4096;        // where the detail is complete
inline constexpr std::size_t kWholeTraceItems = 1u << 18;  // detail kept whole up to this
inline constexpr std::size_t kWindowItems = 16384;         // per occurrence window
inline constexpr std::size_t kEdgeItems = 65536;           // the windows at start and end
// Items copied into windows from the recent past at most, so that a trace whose every new case
// is a new worst one (waits that keep growing) costs a bounded amount: later windows start
// when their occurrence is found.
inline constexpr std::size_t kCopyBudget = 1u << 23;

// The counters drawn as lanes, by the archive's metric names.
inline constexpr const char* kCounterNames[] = {"posted queue depth", "unexpected queue depth",
                                                "bytes in flight"};
inline constexpr std::size_t kCounters = std::size(kCounterNames);

enum class ItemType : std::uint8_t { State, Marker, Message, Counter };

// One piece of detail. Fields by type:
//   State    t0 Enter, t1 Leave, row, what = region, depth = nesting among MPI calls,
//            open = still running when its window closed (t1 is the window's end)
//   Marker   t0 = t1, row, what = Peruse event (index into the archive's Peruse events),
//            x request, y bytes, z communicator (kNoComm: none), peer, tag, op
//   Message  t0 logical send, t1 logical receive, row sender, what receiver location,
//            x physical send, y physical receive, z bytes, tag
//   Counter  t0 = t1, row, what = counter (kCounterNames), x value, y value before
// `id` tells the same item kept by several windows apart from others: an MPI call's is given
// at its Enter, every other item's when it is added.
struct Item {
  std::uint64_t t0 = 0, t1 = 0;
  std::uint64_t id = 0;
  std::uint64_t x = 0, y = 0, z = 0;
  std::uint32_t row = 0, what = 0;
  std::int32_t peer = 0, tag = 0;
  ItemType type = ItemType::State;
  std::uint8_t depth = 0, op = 0;
  bool open = false;
};

// Where the detail is complete: every item overlapping [from, to] is kept.
struct Coverage {
  std::uint64_t from = 0, to = 0;
};

// One row's summary. States: for each level (finest first, each next one half as many
// buckets), a byte per bucket: the dominant state's kind (archive::CallKind, or kNoState where
// the row had not started or had ended) in the low 4 bits, the share of the bucket spent in MPI
// (0..15 fifteenths) in the high 4. Peruse events and counters at the finest level only: the
// page sums and maximises them into coarser ones exactly.
inline constexpr std::uint8_t kNoState = 15;
struct RowSummary {
  std::vector<std::uint8_t> states;           // all levels, finest first
  std::vector<std::uint16_t> events;          // per finest bucket, saturating
  std::vector<std::vector<double>> counters;  // [counter][finest bucket]: highest; empty
                                              // when the row never had that counter
};

struct Row {
  std::string name;
  std::uint32_t rank = 0, thread = 0;
};

struct Timeline {
  std::uint64_t span_ns = 0;  // the trace's length; buckets divide [0, span_ns)
  // Names by the archive's numbers: regions, Peruse events (Item::what), communicators.
  std::vector<std::string> regions, events, comms;
  std::vector<std::uint8_t> region_kinds;  // archive::CallKind by region
  std::size_t buckets = 0;                 // finest, per row
  std::size_t levels = 0;
  std::vector<Row> rows;
  std::vector<RowSummary> summary;  // by row
  bool complete = false;            // the detail holds every item of the trace
  std::vector<Coverage> coverage;   // sorted, disjoint
  std::vector<Item> items;          // by type, then row, then t0; each once
  std::uint64_t items_seen = 0;     // items the trace had (detail or not)
};

}  // namespace perusetrace::report::timeline
