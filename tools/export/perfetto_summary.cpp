#include "tools/export/perfetto_summary.hpp"

#include <fmt/core.h>

#include <array>
#include <cstdio>

#include "reader/other_jobs.hpp"

namespace perusetrace::exporter {

namespace {

// Every count, in one order, for the text form.
std::array<std::uint64_t*, 11> fields(ChromeTrace::Counts& c) {
  return {&c.slices,          &c.instants,           &c.flows,         &c.counter_values,
          &c.io_operations,   &c.rma_operations,     &c.state_changes, &c.unfinished_operations,
          &c.unmatched_sends, &c.unmatched_receives, &c.clock_breaks};
}

}  // namespace

std::string counts_text(const ChromeTrace::Counts& c) {
  ChromeTrace::Counts copy = c;
  std::string out = std::to_string(copy.with_other_jobs);
  for (const std::uint64_t* f : fields(copy)) out += " " + std::to_string(*f);
  return out;
}

ChromeTrace::Counts parse_counts(const std::string& text) {
  ChromeTrace::Counts c;
  std::size_t at = 0;
  auto next = [&] {
    std::size_t used = 0;
    const std::uint64_t v = std::stoull(text.substr(at), &used);
    at += used;
    return v;
  };
  c.with_other_jobs = next();
  for (std::uint64_t* f : fields(c)) *f = next();
  return c;
}

void add_counts(ChromeTrace::Counts& into, const ChromeTrace::Counts& from) {
  ChromeTrace::Counts other = from;
  const auto a = fields(into);
  const auto b = fields(other);
  for (std::size_t i = 0; i < a.size(); ++i) *a[i] += *b[i];
  into.with_other_jobs += from.with_other_jobs;
}

void tell_about_messages(const Definitions& defs, const std::string& anchor,
                         const ChromeTrace::Counts& c) {
  if (c.unmatched_sends + c.unmatched_receives > 0)
    fmt::print(stderr,
               "perusetrace export: {} sends and {} receives found no partner in the trace "
               "(cancelled, on ranks not traced, or the program stopped first): they have half "
               "an arrow, which viewers do not draw.\n",
               c.unmatched_sends, c.unmatched_receives);
  if (c.unfinished_operations > 0)
    fmt::print(stderr,
               "perusetrace export: {} MPI-IO or RMA operations never completed in the trace (the "
               "program stopped first, or freed a request it never completed): their slices have "
               "no end, which viewers show as not ended.\n",
               c.unfinished_operations);
  if (c.with_other_jobs > 0) {
    std::string jobs;
    for (const archive::JobDef& job : defs.jobs) {
      const std::string path = archive::job_archive(anchor, job);
      jobs += fmt::format("{}{} ({})", jobs.empty() ? "" : ", ", job.name,
                          path.empty() ? "archive not known" : path);
    }
    fmt::print(stderr,
               "perusetrace export: {} sends and receives with other MPI jobs have no arrow: "
               "their other half is in those jobs' own archives: {}.\n",
               c.with_other_jobs, jobs);
  }
}

void tell_done(const Definitions& defs, const std::string& path, const ChromeTrace::Counts& c,
               std::chrono::steady_clock::time_point started, std::uint64_t bytes,
               const std::string& how) {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // What only some traces hold is named only when there.
  std::string more;
  if (c.io_operations > 0) more += fmt::format(", {} MPI-IO operations", c.io_operations);
  if (c.rma_operations > 0) more += fmt::format(", {} RMA operations", c.rma_operations);
  if (c.state_changes > 0) more += fmt::format(", {} sampled MPI state changes", c.state_changes);
  fmt::print(stderr,
             "perusetrace export: {}: {} slices, {} Peruse events, {} messages, {} counter "
             "values{} from {} archive events in {:.1f} s ({:.1f} MB); open it in "
             "ui.perfetto.dev or chrome://tracing{}\n",
             path == "-" ? std::string("standard output") : path, c.slices, c.instants, c.flows,
             c.counter_values, more, defs.total_events, seconds, static_cast<double>(bytes) / 1e6,
             how);
}

}  // namespace perusetrace::exporter
