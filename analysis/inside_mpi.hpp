// The report's "Inside MPI" section (inside_mpi_data.hpp) in one pass over the Peruse events:
// each receive's protocol and handshake, the receives that found their message in the
// unexpected queue and the call paths that posted them, and queue searches by depth and path.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/report_data.hpp"
#include "events/catalogue.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class InsideMpiAnalysis : public archive::EventSink {
 public:
  InsideMpiAnalysis(const archive::Definitions& defs, InsideMpi& out);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;
  // Names the call paths (kept as region numbers while the events stream).
  void finish();

 private:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  struct Receive {
    std::uint64_t path = 0;  // where it was posted (path_key)
    bool unexpected = false;
    std::uint32_t continues = 0;
    std::uint64_t first_bytes = 0;  // the first XFER_CONTINUE's: its fragment's bytes
    std::uint64_t begin = kNever, first_continue = kNever, handshake = kNever;
  };
  struct Location {
    std::uint32_t rank = 0;
    std::uint32_t depth = 0;                  // MPI calls open
    std::uint32_t call = archive::kNoRegion;  // the outermost one
    std::vector<std::uint32_t> regions;       // user regions and annotations open
    std::uint64_t search_posted = kNever, search_unexpected = kNever;
    std::int64_t depth_at_search = 0;
  };

  // The outermost MPI call and the innermost region open outside it, as one number.
  static std::uint64_t path_key(const Location& l) {
    return static_cast<std::uint64_t>(l.call) << 32 |
           (l.regions.empty() ? archive::kNoRegion : l.regions.back());
  }
  std::string path_name(std::uint64_t key) const;
  void transfer_end(Location& l, std::uint64_t t, const archive::PeruseFields& f, Receive& r);
  ProtocolStat* placement(std::uint32_t rank, std::int32_t peer);
  void search_end(Location& l, std::uint64_t t, bool posted);

  const archive::Definitions& defs_;
  InsideMpi& out_;
  std::vector<int> event_of_region_;  // the catalogue's number, or -1
  std::vector<Location> locations_;
  std::vector<std::int64_t> posted_depth_;                       // by rank
  std::uint64_t pull_limit_ = 0;                                 // eager_limits.hpp
  std::unordered_map<std::uint64_t, Receive> receives_;          // (rank, request)
  std::unordered_map<std::uint64_t, PathCost> late_receives_;    // by path_key
  std::unordered_map<std::uint64_t, PathCost> posted_searches_;  // by path_key
  std::unordered_map<std::uint64_t, PathCost> unexpected_searches_;
};

}  // namespace perusetrace::report
