#include "tools/report/timeline_summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perusetrace::report::timeline {

namespace {

constexpr std::uint64_t kForever = std::numeric_limits<std::uint64_t>::max();

std::size_t finest_buckets(std::size_t rows) {
  const std::size_t fit = kSummaryCells / std::max<std::size_t>(rows, 1);
  std::size_t b = kMinBuckets;
  while (b * 2 <= std::min(fit, kMaxBuckets)) b *= 2;
  return b;
}

}  // namespace

SummaryBuilder::SummaryBuilder(std::uint64_t span_ns, std::size_t rows)
    : span_(std::max<std::uint64_t>(span_ns, 1)), buckets_(finest_buckets(rows)), levels_(0) {
  std::size_t offset = 0;
  for (std::size_t n = buckets_; n >= 1; n /= 2) {
    level_offset_.push_back(offset);
    offset += n;
    ++levels_;
  }
  rows_.resize(rows);
}

std::size_t SummaryBuilder::bucket_of(std::uint64_t t) const {
  // t * buckets / span without overflow: the remainder times buckets fits while the span is
  // below 2^50 ns (13 days); beyond, long double's 64-bit mantissa is precise enough.
  std::uint64_t b = 0;
  if (span_ < (std::uint64_t{1} << 50)) {
    b = t / span_ * buckets_ + t % span_ * buckets_ / span_;
  } else {
    b = static_cast<std::uint64_t>(static_cast<long double>(t) * buckets_ / span_);
  }
  return static_cast<std::size_t>(std::min<std::uint64_t>(b, buckets_ - 1));
}

// Bucket b holds the times t with floor(t * buckets / span) == b: from ceil(b * span / buckets).
std::uint64_t SummaryBuilder::bucket_start(std::size_t b) const {
  if (b >= buckets_) return kForever;
  const std::uint64_t whole = span_ / buckets_, rest = span_ % buckets_;
  return b * whole + (b * rest + buckets_ - 1) / buckets_;
}

std::uint8_t SummaryBuilder::encode(const Sums& s, double width) const {
  float total = 0;
  int best = 0;
  for (int k = 0; k < archive::kCallKinds; ++k) {
    total += s[static_cast<std::size_t>(k)];
    if (s[static_cast<std::size_t>(k)] > s[static_cast<std::size_t>(best)]) best = k;
  }
  if (total <= 0) return kNoState;
  const double in_mpi =
      (total - s[static_cast<std::size_t>(archive::CallKind::OutsideMpi)]) / std::max(width, 1.0);
  const auto share = static_cast<std::uint8_t>(std::lround(std::clamp(in_mpi, 0.0, 1.0) * 15));
  return static_cast<std::uint8_t>(best | (share << 4));
}

void SummaryBuilder::close_bucket(RowState& r) {
  std::size_t index = r.bucket;
  double width = static_cast<double>(span_) / static_cast<double>(buckets_);
  for (std::size_t level = 0; level < levels_; ++level) {
    r.states[level_offset_[level] + index] = encode(r.sums[level], width);
    if (level + 1 < levels_)
      for (int k = 0; k < archive::kCallKinds; ++k)
        r.sums[level + 1][static_cast<std::size_t>(k)] +=
            r.sums[level][static_cast<std::size_t>(k)];
    r.sums[level].fill(0);
    // The coarser bucket is complete with its second half.
    if ((index & 1) == 0 && index + 1 < (buckets_ >> level)) break;
    index /= 2;
    width *= 2;
  }
  ++r.bucket;
  r.bucket_end = bucket_start(r.bucket + 1);
}

void SummaryBuilder::integrate(RowState& r, std::uint64_t from, std::uint64_t to,
                               archive::CallKind kind) {
  float& sum = r.sums[0][static_cast<std::size_t>(kind)];
  while (from < to) {
    const std::uint64_t end = r.bucket_end;
    if (to < end) {
      sum += static_cast<float>(to - from);
      return;
    }
    sum += static_cast<float>(end - std::min(from, end));
    from = std::max(from, end);
    close_bucket(r);  // the last bucket never closes here: it ends at kForever
  }
}

void SummaryBuilder::start(RowState& r, std::uint64_t t) {
  r.started = true;
  r.states.assign(level_offset_.back() + 1, kNoState);
  r.sums.assign(levels_, Sums{});
  r.events.assign(buckets_, 0);
  r.since = r.last = t;
  r.bucket_end = bucket_start(1);
  const std::size_t first = bucket_of(t);
  while (r.bucket < first) close_bucket(r);
}

void SummaryBuilder::state(std::uint32_t row, std::uint64_t t, archive::CallKind kind) {
  RowState& r = reach(row, t);
  if (t > r.since) {
    integrate(r, r.since, t, r.kind);
    r.since = t;
  }
  r.kind = kind;
}

void SummaryBuilder::event(std::uint32_t row, std::uint64_t t) {
  RowState& r = reach(row, t);
  std::uint16_t& n = r.events[r.bucket];
  if (n < std::numeric_limits<std::uint16_t>::max()) ++n;
}

void SummaryBuilder::fill_counter(Counter& c, std::size_t upto) {
  for (std::size_t b = c.bucket + 1; b <= upto && b < buckets_; ++b)
    c.highest[b] = std::max(c.highest[b], c.value);
  c.bucket = std::max(c.bucket, upto);
}

void SummaryBuilder::counter(std::uint32_t row, std::size_t which, std::uint64_t t, double value) {
  RowState& r = reach(row, t);
  Counter& c = r.counters[which];
  if (c.highest.empty()) {
    c.highest.assign(buckets_, 0);
    c.bucket = r.bucket;
  }
  fill_counter(c, r.bucket);
  c.highest[r.bucket] = std::max(c.highest[r.bucket], value);
  c.value = value;
}

void SummaryBuilder::finish(Timeline& out) {
  out.buckets = buckets_;
  out.levels = levels_;
  out.summary.clear();
  out.summary.resize(rows_.size());
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    RowState& r = rows_[i];
    RowSummary& s = out.summary[i];
    if (!r.started) {
      s.states.assign(level_offset_.back() + 1, kNoState);
      s.events.assign(buckets_, 0);
      continue;
    }
    if (r.last > r.since) integrate(r, r.since, r.last, r.kind);
    const std::size_t end = bucket_of(r.last);
    for (Counter& c : r.counters) {
      if (c.highest.empty()) {
        s.counters.emplace_back();
        continue;
      }
      fill_counter(c, end);
      s.counters.push_back(std::move(c.highest));
    }
    while (r.bucket < buckets_) close_bucket(r);
    s.states = std::move(r.states);
    s.events = std::move(r.events);
    r = RowState{};
  }
}

void coarsen(Timeline& tl, std::size_t buckets) {
  std::size_t drop = 0;
  while ((tl.buckets >> drop) > buckets && drop + 1 < tl.levels) ++drop;
  if (drop == 0) return;
  std::size_t skipped = 0;  // states of the dropped levels, finest first
  for (std::size_t l = 0; l < drop; ++l) skipped += tl.buckets >> l;
  const std::size_t step = std::size_t{1} << drop;
  for (RowSummary& s : tl.summary) {
    s.states.erase(s.states.begin(), s.states.begin() + static_cast<std::ptrdiff_t>(skipped));
    std::vector<std::uint16_t> events(tl.buckets / step, 0);
    for (std::size_t b = 0; b < s.events.size(); ++b) {
      const unsigned sum = events[b / step] + s.events[b];
      events[b / step] = static_cast<std::uint16_t>(std::min(sum, 65535u));
    }
    s.events = std::move(events);
    for (auto& c : s.counters) {
      if (c.empty()) continue;
      std::vector<double> highest(tl.buckets / step, 0);
      for (std::size_t b = 0; b < c.size(); ++b)
        highest[b / step] = std::max(highest[b / step], c[b]);
      c = std::move(highest);
    }
  }
  tl.buckets /= step;
  tl.levels -= drop;
}

}  // namespace perusetrace::report::timeline
