// Fixed-size aggregates for the report: a log-scale histogram with exact min/max and an
// approximate median, and a bounded list of the worst cases. Memory does not grow with the
// number of values added.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace perusetrace::report {

// Positive values in bins of a quarter octave from 1 up to 2^64; 0 counts in bin 0.
class Distribution {
 public:
  static constexpr int kPerOctave = 4;
  static constexpr int kBins = 64 * kPerOctave;

  void add(double v) {
    if (!(v >= 0)) return;
    ++count_;
    sum_ += v;
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
    ++bins_[static_cast<std::size_t>(bin_of(v))];
  }
  std::uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return count_ ? max_ : 0; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  // The middle of the bin that holds the median value, kept within [min, max].
  double median() const { return quantile(0.5); }
  double quantile(double q) const {
    if (count_ == 0) return 0;
    const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    std::uint64_t seen = 0;
    for (int b = 0; b < kBins; ++b) {
      seen += bins_[static_cast<std::size_t>(b)];
      if (seen >= std::max<std::uint64_t>(want, 1))
        return std::clamp(std::sqrt(lower(b) * lower(b + 1)), min(), max());
    }
    return max();
  }
  // Bin b covers [lower(b), lower(b + 1)).
  static double lower(int b) { return b == 0 ? 0 : std::exp2(static_cast<double>(b) / kPerOctave); }
  std::uint64_t bin(int b) const { return bins_[static_cast<std::size_t>(b)]; }

 private:
  static int bin_of(double v) {
    if (v < 1) return 0;
    const int b = static_cast<int>(std::floor(std::log2(v) * kPerOctave));
    return std::clamp(b, 1, kBins - 1);
  }
  std::uint64_t count_ = 0;
  double sum_ = 0;
  double min_ = std::numeric_limits<double>::max();
  double max_ = 0;
  std::array<std::uint64_t, kBins> bins_{};
};

// The K largest items by `key`, largest first.
template <class T>
class Worst {
 public:
  explicit Worst(std::size_t k = 10) : k_(k) {}
  void add(const T& item, double key) {
    if (items_.size() == k_ && key <= items_.back().first) return;
    auto at = std::upper_bound(items_.begin(), items_.end(), key,
                               [](double k, const auto& e) { return k > e.first; });
    items_.insert(at, {key, item});
    if (items_.size() > k_) items_.pop_back();
  }
  const std::vector<std::pair<double, T>>& items() const { return items_; }

 private:
  std::size_t k_;
  std::vector<std::pair<double, T>> items_;
};

}  // namespace perusetrace::report
