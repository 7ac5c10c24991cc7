#include "tools/diff/diff_output.hpp"

#include <fmt/core.h>

#include <cmath>

#include "analysis/json_text.hpp"
#include "events/value_names.hpp"

namespace perusetrace::diff {

namespace {

std::string time_text(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string rate_text(double bytes_per_s) {
  const double a = std::fabs(bytes_per_s);
  if (a >= 1e9) return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9);
  if (a >= 1e6) return fmt::format("{:.2f} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.2f} kB/s", bytes_per_s / 1e3);
}

std::string value_text(Unit unit, double v) {
  switch (unit) {
    case Unit::Ns:
      return time_text(v);
    case Unit::BytesPerSecond:
      return rate_text(v);
    default:
      return fmt::format("{:.0f}", v);
  }
}

std::string change_text(Unit unit, double v) {
  const std::string t = value_text(unit, v);
  return v > 0 ? "+" + t : t;
}

std::string side(const char* which, const ReportSummary& s) {
  return fmt::format("{} = {} ({} ranks, {}, {} events)", which,
                     s.archive.empty() ? s.source : s.archive, s.ranks,
                     time_text(static_cast<double>(s.trace_ns)), s.events);
}

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

template <class T>
std::string optional_json(const std::optional<T>& v) {
  return v ? number(static_cast<double>(*v)) : std::string("null");
}

const char* unit_name(Unit u) {
  return name_in(u,
                 {{Unit::Ns, "ns"}, {Unit::Bytes, "bytes"}, {Unit::BytesPerSecond, "bytes_per_s"}},
                 "count");
}

std::string side_json(const ReportSummary& s) {
  return fmt::format(R"({{"source":{},"archive":{},"ranks":{},"trace_ns":{},"events":{}}})",
                     archive::json_string(s.source), archive::json_string(s.archive), s.ranks,
                     s.trace_ns, s.events);
}

}  // namespace

void write_text(std::FILE* out, const ReportSummary& a, const ReportSummary& b,
                const Comparison& c) {
  fmt::print(out, "perusetrace diff\n  {}\n  {}\n", side("A", a), side("B", b));
  fmt::print(out,
             "  '!' marks a significant change: at least {:g}% of A and at least {} for times, "
             "1 for counts and bytes ({} significant)\n",
             c.significance.relative * 100,
             time_text(static_cast<double>(c.significance.min_time_ns)), c.significant());
  for (const Section& s : c.sections) {
    if (s.rows.empty()) continue;
    const bool per_rank = s.key == "time_in_mpi";
    fmt::print(out, "\n{}\n", s.title);
    fmt::print(out, "  {:<48}{:>14}{:>14}{:>15}{:>10}", "", "A", "B", "change", "relative");
    if (per_rank) fmt::print(out, "{:>14}{:>14}{:>22}", "A per rank", "B per rank", "calls A -> B");
    fmt::print(out, "\n");
    for (const Row& r : s.rows) {
      const auto change = r.change();
      const auto relative = r.relative();
      const std::string na = "not measured";
      fmt::print(out, "{} {:<48}{:>14}{:>14}{:>15}{:>10}", r.significant ? '!' : ' ', r.name,
                 r.a ? value_text(r.unit, *r.a) : na, r.b ? value_text(r.unit, *r.b) : na,
                 change ? change_text(r.unit, *change) : "",
                 relative                 ? fmt::format("{:+.1f}%", *relative * 100)
                 : change && *change != 0 ? "new"
                                          : "");
      if (per_rank)
        fmt::print(out, "{:>14}{:>14}{:>22}", r.a_per_rank ? time_text(*r.a_per_rank) : "",
                   r.b_per_rank ? time_text(*r.b_per_rank) : "",
                   r.a_calls ? fmt::format("{} -> {}", *r.a_calls, *r.b_calls) : "");
      fmt::print(out, "\n");
    }
  }
}

std::string to_json(const ReportSummary& a, const ReportSummary& b, const Comparison& c) {
  std::string j = fmt::format(
      R"({{"schema_version":1,"a":{},"b":{},"significance":{{"relative":{},"min_time_ns":{}}},)"
      R"("significant":{},"sections":[)",
      side_json(a), side_json(b), number(c.significance.relative), c.significance.min_time_ns,
      c.significant());
  bool first_section = true;
  for (const Section& s : c.sections) {
    if (!first_section) j += ',';
    first_section = false;
    j += fmt::format(R"({{"key":{},"title":{},"rows":[)", archive::json_string(s.key),
                     archive::json_string(s.title));
    bool first = true;
    for (const Row& r : s.rows) {
      if (!first) j += ',';
      first = false;
      j +=
          fmt::format(R"({{"key":{},"name":{},"unit":"{}","a":{},"b":{},"change":{},"relative":{},)"
                      R"("significant":{})",
                      archive::json_string(r.key), archive::json_string(r.name), unit_name(r.unit),
                      optional_json(r.a), optional_json(r.b), optional_json(r.change()),
                      optional_json(r.relative()), r.significant ? "true" : "false");
      if (r.a_per_rank)
        j += fmt::format(R"(,"a_per_rank":{},"b_per_rank":{})", optional_json(r.a_per_rank),
                         optional_json(r.b_per_rank));
      if (r.a_calls) j += fmt::format(R"(,"a_calls":{},"b_calls":{})", *r.a_calls, *r.b_calls);
      j += '}';
    }
    j += "]}";
  }
  return j + "]}\n";
}

}  // namespace perusetrace::diff
