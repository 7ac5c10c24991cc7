// The names of the properties perusetrace writes into an archive's anchor file: one source for
// the writer (streams.cpp) and the tools' reader (tools/archive).
#pragma once

namespace perusetrace::trace {

// The settings the run was traced with: "MPITRACE_PERUSE_EVENTS=... MPITRACE_GROUPS=...".
inline constexpr const char* kSettingsProperty = "PERUSETRACE::SETTINGS";
// One item per clock domain, separated by spaces:
// leader=RANK;host=NAME;ranks=N;offsets=OFFSET_NS:ERROR_NS:ROUND_TRIPS,...
inline constexpr const char* kClockDomainsProperty = "PERUSETRACE::CLOCK_DOMAINS";

}  // namespace perusetrace::trace
