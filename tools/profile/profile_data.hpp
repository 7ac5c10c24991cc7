// A sampling profile of an archive: the samples' time per call path, function, MPI call site and
// rank, split by the thread's MPI state (include/perusetrace/mpi_state.h). Built by
// aggregation.hpp, written by the *_output files.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perusetrace::profile {

// What a sample saw: outside MPI, or inside it working or stalled, on what. Work and stall
// without an activity are calls that do not wait on one (MPI_Comm_rank...). A state or
// activity outside mpi_state.h's enums (a damaged archive) is Unknown, so that every sample
// counts somewhere.
enum Category : std::uint8_t {
  kNotInMpi,
  kWork,
  kWorkMessage,
  kWorkTransfer,
  kWorkCollective,
  kWorkIo,
  kStall,
  kStallMessage,
  kStallTransfer,
  kStallCollective,
  kStallIo,
  kUnknown,
  kCategories
};

// The category of a sample's mpi_state and mpi_activity attributes.
inline Category category_of(std::uint8_t state, std::uint8_t activity) {
  if (state == 0) return kNotInMpi;
  if (activity > 4 || state > 2) return kUnknown;
  return static_cast<Category>((state == 1 ? kWork : kStall) + activity);
}

// JSON keys ("stall/message") and the words of the text, HTML and folded outputs.
inline constexpr const char* kCategoryKeys[kCategories] = {
    "not_in_mpi", "work",   "work/message",  "work/transfer",  "work/collective",
    "work/io",    "stall",  "stall/message", "stall/transfer", "stall/collective",
    "stall/io",   "unknown"};
inline constexpr const char* kCategoryWords[kCategories] = {
    "not in MPI", "work",         "work message",  "work transfer",  "work collective",
    "work io",    "stall",        "stall message", "stall transfer", "stall collective",
    "stall io",   "unknown state"};

// Samples per category.
struct Counts {
  std::array<std::uint64_t, kCategories> n{};

  Counts& operator+=(const Counts& o) {
    for (std::size_t c = 0; c < n.size(); ++c) n[c] += o.n[c];
    return *this;
  }
  std::uint64_t total() const { return sum(kNotInMpi, kCategories); }
  std::uint64_t work() const { return sum(kWork, kStall); }
  std::uint64_t stall() const { return sum(kStall, kUnknown); }
  std::uint64_t in_mpi() const { return sum(kWork, kUnknown); }

 private:
  std::uint64_t sum(std::size_t from, std::size_t to) const {
    std::uint64_t s = 0;
    for (std::size_t c = from; c < to; ++c) s += n[c];
    return s;
  }
};

inline constexpr std::uint32_t kNoNode = 0xffffffffu;

// A frame of the top-down tree: the archive's calling contexts merged by function name under
// the same parent, as flame graphs show them (contexts that differ only in their source lines
// become one frame). Node 0 is the root, "all".
struct Node {
  std::string name;
  std::uint32_t parent = kNoNode;
  std::uint32_t depth = 0;
  bool mpi = false;  // an MPI function (the leaf of a sample taken inside MPI)
  std::vector<std::uint32_t> children;
  Counts self;                            // samples whose leaf is this frame
  Counts total;                           // samples with this frame on their path
  std::map<std::uint32_t, Counts> ranks;  // `total` per world rank, ranks with samples only
};

// A function, wherever it is on the paths. `total` counts a sample once even when the function
// recurses.
struct FunctionStat {
  std::string name;
  bool mpi = false;
  Counts self, total;
};

// Where the program calls MPI: the MPI function and the calling frame's function and source
// line (file "" and line 0 without debug information).
struct Site {
  std::string mpi_function, caller, file;
  std::uint32_t line = 0;
  std::uint32_t node = kNoNode;  // the tree frame (call path) holding most of its samples
  Counts counts;
  std::map<std::uint32_t, Counts> ranks;
};

struct RankStat {
  std::uint32_t rank = 0;
  std::string name;
  std::uint32_t threads = 0;  // threads that were sampled
  Counts counts;
};

struct Profile {
  std::string archive, creator, settings;
  std::uint64_t period_ns = 0;  // a sample stands for this much of its thread's time
  std::uint64_t samples = 0;
  std::uint64_t trace_ns = 0;
  // The processes that computed it: 1, or the ranks of a parallel analysis (`--np`).
  unsigned analysis_ranks = 1;
  bool parallel = false;    // computed by perusetrace-analyze (an MPI job, of one rank or more)
  Counts counts;            // all ranks
  std::vector<Node> nodes;  // the tree, node 0 the root
  std::vector<FunctionStat> functions;  // by self time, most first
  std::vector<Site> sites;              // by stall time, most first
  std::vector<RankStat> ranks;          // by world rank, every rank of the archive

  double seconds(std::uint64_t samples_) const {
    return static_cast<double>(samples_) * static_cast<double>(period_ns) * 1e-9;
  }
  std::uint64_t ns(std::uint64_t samples_) const { return samples_ * period_ns; }
  // The frames from below the root to `node`, outermost first.
  std::vector<std::uint32_t> path(std::uint32_t node) const {
    std::vector<std::uint32_t> p;
    for (; node != kNoNode && node != 0; node = nodes[node].parent) p.insert(p.begin(), node);
    return p;
  }
};

}  // namespace perusetrace::profile
