// The timeline's summary (timeline_data.hpp), built from each row's state changes, Peruse events
// and counter values in time order. A row's states are integrated bucket by bucket at the finest
// resolution; each finished bucket's time per state is carried into the coarser levels, so
// memory per row is its output plus one bucket's sums per level.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "reader/call_kind.hpp"
#include "tools/report/timeline_data.hpp"

namespace perusetrace::report::timeline {

// Leaves out the summary's finest levels down to `buckets` per row (a power of two): where the
// detail is complete the page draws it once a bucket is wider than a pixel, so a screen's width
// of buckets is all the summary needs there.
void coarsen(Timeline& timeline, std::size_t buckets);

class SummaryBuilder {
 public:
  // `span_ns`: the trace's length; `rows`: how many rows share kSummaryCells.
  SummaryBuilder(std::uint64_t span_ns, std::size_t rows);

  // From `t` on, the row is in `kind` (its first call starts the row).
  void state(std::uint32_t row, std::uint64_t t, archive::CallKind kind);
  void event(std::uint32_t row, std::uint64_t t);
  void counter(std::uint32_t row, std::size_t which, std::uint64_t t, double value);

  // Each row ends at its last event; moves the summary into `out`.
  void finish(Timeline& out);

  std::size_t buckets() const { return buckets_; }
  std::size_t levels() const { return levels_; }

 private:
  using Sums = std::array<float, archive::kCallKinds>;  // ns per kind within a bucket
  struct Counter {
    std::vector<double> highest;  // per finest bucket
    double value = 0;
    std::size_t bucket = 0;  // the last bucket `highest` holds the current value in
  };
  struct RowState {
    bool started = false;
    archive::CallKind kind = archive::CallKind::OutsideMpi;
    std::uint64_t since = 0;       // when `kind` began
    std::uint64_t last = 0;        // the row's last event
    std::size_t bucket = 0;        // the finest bucket being summed
    std::uint64_t bucket_end = 0;  // and where it ends
    std::vector<Sums> sums;        // per level, the bucket being summed
    std::vector<std::uint8_t> states;
    std::vector<std::uint16_t> events;
    std::array<Counter, kCounters> counters;
  };

  // The row, started at its first event, its sums advanced to the bucket that holds `t` (the
  // time since the last state change is added when the state changes or a bucket ends).
  RowState& reach(std::uint32_t row, std::uint64_t t) {
    RowState& r = rows_[row];
    if (!r.started) start(r, t);
    if (t > r.last) r.last = t;
    if (t >= r.bucket_end) {
      integrate(r, r.since, t, r.kind);
      r.since = t;
    }
    return r;
  }
  void start(RowState& r, std::uint64_t t);
  std::size_t bucket_of(std::uint64_t t) const;
  std::uint64_t bucket_start(std::size_t b) const;
  // Adds [from, to) in `kind` to the row, closing the buckets it passes.
  void integrate(RowState& r, std::uint64_t from, std::uint64_t to, archive::CallKind kind);
  // Closes the row's current finest bucket and those above it it completes.
  void close_bucket(RowState& r);
  std::uint8_t encode(const Sums& s, double width) const;
  void fill_counter(Counter& c, std::size_t upto);

  std::uint64_t span_;
  std::size_t buckets_, levels_;
  std::vector<std::size_t> level_offset_;  // into RowState::states
  std::vector<RowState> rows_;
};

}  // namespace perusetrace::report::timeline
