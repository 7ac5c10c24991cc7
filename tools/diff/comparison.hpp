// Two reports side by side: every compared quantity as a row with its absolute and relative
// change and whether that change is significant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/diff/report_summary.hpp"

namespace perusetrace::diff {

enum class Unit { Ns, Count, Bytes, BytesPerSecond };

// A change is significant when it is at least `relative` of A's value (any change from 0) and
// at least the unit's floor: `min_time_ns` for times, one for counts and bytes, none for
// bandwidths. One run has no variance to test against: these bounds are the user's to set.
struct Significance {
  double relative = 0.10;
  std::uint64_t min_time_ns = 1'000'000;
};

struct Row {
  std::string key;   // stable, for the JSON: "pattern.late_sender.per_case_ns"
  std::string name;  // for people: "late sender: time per case"
  Unit unit = Unit::Count;
  std::optional<double> a, b;  // absent: not measured in that report
  // Time in MPI only: the mean per rank and the calls, A and B.
  std::optional<double> a_per_rank, b_per_rank;
  std::optional<std::uint64_t> a_calls, b_calls;
  bool significant = false;

  std::optional<double> change() const {
    if (!a || !b) return std::nullopt;
    return *b - *a;
  }
  // None when A is 0 (or either side is missing).
  std::optional<double> relative() const {
    if (!a || !b || *a == 0) return std::nullopt;
    return (*b - *a) / *a;
  }
};

struct Section {
  std::string key, title;
  std::vector<Row> rows;
};

struct Comparison {
  Significance significance;
  std::vector<Section> sections;
  std::size_t significant() const;
};

Comparison compare(const ReportSummary& a, const ReportSummary& b, const Significance& s);

}  // namespace perusetrace::diff
