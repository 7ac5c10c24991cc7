// The report's MPI-IO section: per file and rank, the reads and writes with their bytes and the
// time from each operation's begin to its completion, by kind (collective or independent,
// blocking or not); the time in the MPI calls that did the file's I/O; and its metadata calls
// (openings, syncs, seeks, size changes, deletions).
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analysis/report_data.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class IoAnalysis : public archive::EventSink {
 public:
  IoAnalysis(const archive::Definitions& defs, Report& out);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size_at_open) override;
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override;
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const archive::IoBegin& op) override;
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const archive::IoComplete& done) override;
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
               const archive::IoSeek& seek) override;
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                 const archive::IoResize& resize) override;
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override;
  // After the last event: the operations still waiting for their completion.
  void finish();

 private:
  // The outermost MPI call open on a location, and the files whose events happened inside it.
  struct Call {
    std::uint32_t depth = 0;
    std::uint64_t since = 0;
    bool file_function = false;  // an MPI_File_* function
    std::vector<std::uint32_t> files;
  };
  struct Pending {
    std::uint32_t file;
    archive::IoMode mode;
    std::uint32_t flags;
    std::uint64_t since;
  };
  // The rank's statistics of `file` (nullptr for ids the definitions lack), noting that the
  // location's current call did its I/O.
  IoRankStat* stat(std::uint32_t loc, std::uint32_t file);
  std::uint32_t file_of(std::uint32_t handle) const;
  std::uint32_t rank_of(std::uint32_t loc) const { return defs_.locations[loc].rank; }

  const archive::Definitions& defs_;
  Io& out_;
  std::vector<bool> file_function_;  // by region
  std::vector<Call> calls_;          // by location
  // Operations begun and not yet complete, by (rank, matching id): a rank's ids are unique.
  std::map<std::pair<std::uint32_t, std::uint64_t>, Pending> pending_;
};

}  // namespace perusetrace::report
