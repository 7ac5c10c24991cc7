#include "tools/report/context_text.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace perusetrace::report {

namespace {

constexpr std::size_t kFunctionsShown = 3;
constexpr std::size_t kValuesShown = 10;  // per attribute alone

std::string label(const ByContext& by, const ContextStat& c) {
  std::string out;
  for (std::size_t a = 0; a < by.attributes.size(); ++a)
    out += fmt::format("{}{}={}", a ? " " : "", by.attributes[a],
                       c.values[a].empty() ? "(none)" : c.values[a]);
  return out;
}

double ms(std::uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// Values in their natural order: numbers (iterations) by value, before other text.
bool value_before(const std::string& a, const std::string& b) {
  char* end_a = nullptr;
  char* end_b = nullptr;
  const long long x = std::strtoll(a.c_str(), &end_a, 10);
  const long long y = std::strtoll(b.c_str(), &end_b, 10);
  const bool number_a = !a.empty() && *end_a == '\0', number_b = !b.empty() && *end_b == '\0';
  if (number_a && number_b) return x < y;
  if (number_a != number_b) return number_a;
  return a < b;
}

bool values_before(const ContextStat* a, const ContextStat* b) {
  return std::lexicographical_compare(a->values.begin(), a->values.end(), b->values.begin(),
                                      b->values.end(), value_before);
}

// Up to `most` contexts, those with the most MPI time, in the order of their values.
void table(std::FILE* out, const ByContext& by, std::size_t most) {
  std::vector<const ContextStat*> rows;
  for (const ContextStat& c : by.contexts) rows.push_back(&c);
  if (rows.size() > most) {
    std::stable_sort(rows.begin(), rows.end(), [](const ContextStat* a, const ContextStat* b) {
      return a->mpi_ns > b->mpi_ns;
    });
    rows.resize(most);
  }
  std::stable_sort(rows.begin(), rows.end(), values_before);
  fmt::print(out, "  {:<36} {:>12} {:>9} {:>12} {:>9} {:>12}  {}\n", "context", "MPI ms", "sent",
             "bytes sent", "late snd", "late snd ms", "top MPI functions (ms)");
  for (const ContextStat* c : rows) {
    std::vector<std::pair<std::string, FunctionStat>> fns(c->functions.begin(), c->functions.end());
    std::stable_sort(fns.begin(), fns.end(),
                     [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    std::string top;
    for (std::size_t i = 0; i < fns.size() && i < kFunctionsShown; ++i)
      top += fmt::format("{}{} {:.1f}", i ? ", " : "", fns[i].first, ms(fns[i].second.ns));
    fmt::print(out, "  {:<36} {:>12.3f} {:>9} {:>12} {:>9} {:>12.3f}  {}\n", label(by, *c),
               ms(c->mpi_ns), c->sent, c->sent_bytes, c->posted_queue_count, ms(c->posted_queue_ns),
               top);
  }
  if (rows.size() < by.contexts.size())
    fmt::print(out, "  and {} more values (--by {} lists them all)\n",
               by.contexts.size() - rows.size(), by.attributes.front());
}

}  // namespace

void write_context_text(std::FILE* out, const Report& report) {
  const ByContext& by = report.by_context;
  if (!by.attributes.empty()) {
    std::string asked;
    for (const std::string& a : by.attributes) asked += (asked.empty() ? "" : ",") + a;
    fmt::print(out, "\nBy context ({}): the context in force on the thread\n", asked);
    table(out, by, by.contexts.size());
    return;
  }
  if (report.by_attribute.empty()) return;
  fmt::print(out, "\nBy annotation: each attribute alone (--by A,B combines them)\n");
  for (const ByContext& alone : report.by_attribute) {
    fmt::print(out, "{}\n", alone.attributes.front());
    table(out, alone, kValuesShown);
  }
  if (report.by_attribute.size() < by.found.size())
    fmt::print(out, "and {} more attributes (--by NAME for one of them)\n",
               by.found.size() - report.by_attribute.size());
}

}  // namespace perusetrace::report
