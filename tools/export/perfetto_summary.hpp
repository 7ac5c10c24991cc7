// What `perusetrace export --perfetto` says on stderr once the JSON is written, in one process
// or as rank 0 of a parallel export (the ranks' counts added up).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "tools/export/chrome_trace.hpp"

namespace perusetrace::exporter {

// Messages without an arrow (no partner, other MPI jobs) and operations never completed.
void tell_about_messages(const Definitions& defs, const std::string& anchor,
                         const ChromeTrace::Counts& c);

// The summary line; `how` follows it (" on N analysis ranks", or "").
void tell_done(const Definitions& defs, const std::string& path, const ChromeTrace::Counts& c,
               std::chrono::steady_clock::time_point started, std::uint64_t bytes,
               const std::string& how);

// The counts as text, to travel between analysis ranks, and back; add() sums them.
std::string counts_text(const ChromeTrace::Counts& c);
ChromeTrace::Counts parse_counts(const std::string& text);
void add_counts(ChromeTrace::Counts& into, const ChromeTrace::Counts& from);

}  // namespace perusetrace::exporter
