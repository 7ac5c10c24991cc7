#include "tools/report/mpit_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/mpit_analysis.hpp"

namespace perusetrace::report {

namespace {

// A terminal holds a screenful: the largest few of each list, and how many more there are.
constexpr std::size_t kTop = 10, kRanksShown = 4, kPlacesShown = 3;

std::string number(double v, bool real) {
  if (real) return fmt::format("{:.6g}", v);
  return fmt::format("{}", std::llround(v));
}

std::string more(std::size_t shown, std::size_t all, const char* what) {
  return shown < all ? fmt::format(", and {} more {}", all - shown, what) : "";
}

// The ranks where it changed (counters) or moved (values), largest first by `size`, as
// "rank R: TEXT" separated by `separator`.
template <class Size, class Text>
std::string per_rank(const PvarStat& s, const char* separator, Size&& size, Text&& text) {
  std::vector<std::size_t> ranks;
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    const PvarRank& v = s.ranks[r];
    if (v.values > 0 && (s.kind == PvarKind::Delta || v.min != v.max)) ranks.push_back(r);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [&](std::size_t a, std::size_t b) {
    return size(s.ranks[a]) > size(s.ranks[b]);
  });
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < kRanksShown; ++i)
    out += fmt::format("{}rank {}: {}", i ? separator : "", ranks[i], text(s.ranks[ranks[i]]));
  return out + more(std::min(ranks.size(), kRanksShown), ranks.size(), "ranks");
}

// The variables of one kind, largest first: a heading, `line` for each of the first kTop, and
// how many more there are (named `plural`).
template <class Line>
void section(std::FILE* out, const Mpit& m, PvarKind kind, const char* heading, const char* plural,
             Line&& line) {
  const auto list = ranked(m, kind);
  if (list.empty()) return;
  fmt::print(out, "  {}\n", heading);
  for (std::size_t i = 0; i < list.size() && i < kTop; ++i) line(*list[i]);
  if (list.size() > kTop) fmt::print(out, "    and {} more {}\n", list.size() - kTop, plural);
}

void counters(std::FILE* out, const Mpit& m) {
  section(out, m, PvarKind::Delta,
          "counters: change over the run, and the MPI calls it was written in", "counters",
          [&](const PvarStat& s) {
            const double total = s.total();
            std::string where;
            const auto places = places_by_change(s);
            for (std::size_t k = 0; k < places.size() && k < kPlacesShown; ++k)
              where += fmt::format("{}{:.1f}% {}", k ? ", " : "",
                                   total != 0 ? 100.0 * places[k].second.change / total : 0.0,
                                   places[k].first);
            where += more(std::min(places.size(), kPlacesShown), places.size(), "places");
            fmt::print(out, "    {}: {} ({}); {}\n", s.name, number(total, s.real),
                       per_rank(
                           s, ", ", [](const PvarRank& r) { return std::abs(r.total); },
                           [&](const PvarRank& r) { return number(r.total, s.real); }),
                       where);
          });
}

void values(std::FILE* out, const Mpit& m) {
  section(out, m, PvarKind::Value, "values: lowest .. highest, last", "values",
          [&](const PvarStat& s) {
            fmt::print(out, "    {}: {}\n", s.name,
                       per_rank(
                           s, "; ", [](const PvarRank& r) { return r.max; },
                           [&](const PvarRank& r) {
                             return fmt::format("{} .. {}, last {}", number(r.min, s.real),
                                                number(r.max, s.real), number(r.last, s.real));
                           }));
          });
}

void watermarks(std::FILE* out, const Mpit& m) {
  section(out, m, PvarKind::Watermark, "watermarks: highest, and the MPI calls it rose in most",
          "watermarks", [&](const PvarStat& s) {
            std::string rose;
            const auto places = places_by_change(s);
            std::size_t shown = 0;
            for (const auto& [name, p] : places) {
              if (p.change <= 0 || shown == kPlacesShown) continue;
              rose += fmt::format("{}{} +{}", shown++ ? ", " : "", name, number(p.change, s.real));
            }
            fmt::print(out, "    {}: {}; rose in {}\n", s.name,
                       per_rank(
                           s, "; ", [](const PvarRank& r) { return r.max; },
                           [&](const PvarRank& r) {
                             return fmt::format("{} ({} moves)", number(r.max, s.real),
                                                std::llround(r.moves));
                           }),
                       rose.empty() ? std::string("no call") : rose);
          });
}

// Per variable, the ranks whose value differs from rank 0's. Those that differ on fewest ranks
// first: a rank's own identity (its vpid, node rank) differs on all of them, a setting that
// reached only some ranks on a few.
void cvars_differ(std::FILE* out, const Mpit& m) {
  if (m.differ.empty()) {
    fmt::print(out, "  the same on every rank\n");
    return;
  }
  std::map<std::string, std::vector<const CvarItem*>> by_name;
  for (const CvarItem& c : m.differ) by_name[c.name].push_back(&c);
  std::vector<const std::vector<const CvarItem*>*> names;
  for (const auto& [name, ranks] : by_name) names.push_back(&ranks);
  std::stable_sort(names.begin(), names.end(),
                   [](const auto* a, const auto* b) { return a->size() < b->size(); });
  fmt::print(out, "  differing between ranks:\n");
  for (std::size_t i = 0; i < names.size() && i < kTop; ++i) {
    const auto& ranks = *names[i];
    std::string values;
    for (std::size_t k = 0; k < ranks.size() && k < kRanksShown; ++k)
      values += fmt::format(", rank {}: {}", ranks[k]->rank, ranks[k]->value);
    const std::string& rank0 = ranks.front()->rank0_value;
    fmt::print(out, "    {}: rank 0: {}{}{}\n", ranks.front()->name,
               rank0.empty() ? std::string("none") : rank0, values,
               more(std::min(ranks.size(), kRanksShown), ranks.size(), "ranks"));
  }
  if (names.size() > kTop) fmt::print(out, "    and {} more variables\n", names.size() - kTop);
}

}  // namespace

void write_mpit_text(std::FILE* out, const Mpit& m) {
  if (!m.present) return;
  std::size_t changed = 0;
  for (const PvarStat& s : m.pvars) changed += s.varied();
  fmt::print(out,
             "\nMPI_T performance variables ({} of {} values changed; a change belongs to the "
             "MPI call open when it was read)\n",
             changed, m.pvars.size());
  if (m.pvars.empty()) fmt::print(out, "  none traced (MPITRACE_PVARS selects them)\n");
  counters(out, m);
  values(out, m);
  watermarks(out, m);
  fmt::print(out, "\nMPI_T control variables ({} recorded on rank 0)\n", m.cvars);
  cvars_differ(out, m);
  for (const CvarItem& c : m.set)
    fmt::print(out, "  MPITRACE_CVARS {}={}: {}\n", c.name, c.value, c.set ? "set" : c.note);
}

}  // namespace perusetrace::report
