// What only Peruse shows about the costs inside MPI calls (docs/report.md, "Inside MPI"): the
// protocol each message took and what its handshake cost, the messages copied twice through the
// unexpected queue, and how queue searches grow with the queue's depth.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "analysis/size_classes.hpp"

namespace perusetrace::report {

// The program's receives (tags from 0) of one size class, by the protocol Open MPI chose.
struct ProtocolClass {
  std::uint64_t eager = 0, eager_bytes = 0;
  std::uint64_t rendezvous = 0, rendezvous_bytes = 0;
  // The rendezvous handshake: from the first fragment (the match header and its data) to the
  // next transfer event, which waits for the sender to hear the receiver's answer. Intervals
  // longer than kHandshakeMaxNs are stalls, not handshakes, and left out.
  std::uint64_t handshakes = 0, handshake_ns = 0;
};
inline constexpr std::uint64_t kHandshakeMaxNs = 1'000'000;

// One placement's transport (same host: shared memory; different hosts: the network).
struct ProtocolStat {
  std::array<ProtocolClass, kSizeClasses> classes{};
  std::uint64_t eager_max = 0;       // the largest eager message, bytes
  std::uint64_t rendezvous_min = 0;  // the smallest rendezvous one (0: none)
  // The transport's eager-limit parameter and its value, from the archive's MPI_T control
  // variables ("" and 0 when the archive has none).
  std::string parameter;
  std::uint64_t limit = 0;
  // Rendezvous messages up to kNearFactor x the limit (and at most kNearMaxBytes): a raised
  // limit would send them eagerly, without the handshake.
  std::uint64_t near = 0, near_max_bytes = 0, near_handshake_ns = 0;
};
inline constexpr std::uint64_t kNearFactor = 8;
inline constexpr std::uint64_t kNearMaxBytes = 256u << 10;

// Where in the program something happened: the outermost MPI call, and the region or
// annotation it was made in.
struct PathCost {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ns = 0;
};

// Messages that arrived before their receive was posted: copied into the unexpected queue's
// buffer, then into the receive's (the second copy is the receive's XFER_BEGIN..END, measured).
// Eager messages only: a rendezvous one leaves only its first fragment there (`rendezvous`
// counts those).
struct UnexpectedCopies {
  std::uint64_t messages = 0, bytes = 0;
  std::uint64_t rendezvous = 0;
  std::uint64_t copy_ns = 0;                 // the second copies, measured
  std::map<std::string, PathCost> receives;  // by the call path that posted the receive late
};

// Queue searches by the depth of the queue searched (posted-queue depth at the search's start).
inline constexpr std::array<std::int64_t, 4> kDepthFrom = {0, 16, 64, 256};
struct SearchDepth {
  std::uint64_t searches = 0, ns = 0, max_ns = 0;
};
struct QueueSearches {
  std::array<SearchDepth, kDepthFrom.size()> posted{};
  std::map<std::string, PathCost> paths;  // posted and unexpected searches, by call path
};

struct InsideMpi {
  bool transfers = false;  // the archive has REQ_XFER_* events
  ProtocolStat intra, inter;
  UnexpectedCopies unexpected;
  QueueSearches searches;
};

}  // namespace perusetrace::report
