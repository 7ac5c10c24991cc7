// The names perusetrace gives what it writes into an archive, which its tools look for: one
// source for the writer (otf2_writer/) and the tools' reader (tools/archive/).
#pragma once

#include <cstddef>

namespace perusetrace::trace {

// Properties of the anchor file.
// The settings the run was traced with: "MPITRACE_PERUSE_EVENTS=... MPITRACE_GROUPS=...".
inline constexpr const char* kSettingsProperty = "PERUSETRACE::SETTINGS";
// One item per clock domain, separated by spaces:
// leader=RANK;host=NAME;ranks=N;offsets=OFFSET_NS:ERROR_NS:ROUND_TRIPS,...
inline constexpr const char* kClockDomainsProperty = "PERUSETRACE::CLOCK_DOMAINS";

// The attributes of Peruse events: their ids, and their names by id.
enum Attribute : unsigned {
  kAttrRequest,    // stable request id (UINT64)
  kAttrPeer,       // peer as a world rank, -1 for MPI_ANY_SOURCE (INT32)
  kAttrTag,        // (INT32)
  kAttrBytes,      // count x type size; fragment bytes for REQ_XFER_CONTINUE (UINT64)
  kAttrOperation,  // 0 send, 1 receive (UINT8)
  kAttrComm,       // (COMM)
  kAttrCount
};
inline constexpr const char* kAttributeNames[kAttrCount] = {"peruse_request",   "peruse_peer",
                                                            "peruse_tag",       "peruse_bytes",
                                                            "peruse_operation", "peruse_comm"};

// Regions: a Peruse event is the region of its full name (events/catalogue.hpp), the tracer
// writing its buffer is one region of its own.
inline constexpr const char* kPeruseRegionPrefix = "PERUSE_COMM_";
inline constexpr const char* kTracerRegion = "perusetrace flush";

}  // namespace perusetrace::trace
