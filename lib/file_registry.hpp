// MPI-IO file handles: a process-local id per MPI_File, and the file's name, kept off the hot
// path; records carry only the id. Looked up lock-free by handle, like communicators.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/handle_table.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

class FileRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 12;
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // A file was opened: a new id for `fh` (a reused handle gets a new one).
  std::uint32_t add(MPI_File fh, const char* name, std::uint32_t comm);
  std::uint32_t id_of(MPI_File fh) const noexcept;
  void remove(MPI_File fh) noexcept;
  // The matching id of a split collective (MPI_File_*_begin) until its *_end.
  void set_split(MPI_File fh, std::uint64_t matching) noexcept;
  std::uint64_t take_split(MPI_File fh) noexcept;
  std::vector<trace::FileInfo> snapshot() const;

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<std::uint32_t> id{kNone};
    std::atomic<std::uint64_t> split{0};
  };
  mutable HandleTable<Slot, kCapacity> table_;
  std::vector<trace::FileInfo> files_;  // guarded by the mutex in the .cpp
};

extern FileRegistry g_files;

}  // namespace perusetrace
