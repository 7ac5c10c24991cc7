// MPI-IO file handles: a process-local id per MPI_File, and the file's name, kept off the hot
// path; records carry only the id. Looked up lock-free by handle, like communicators. Files
// named by a deletion get a local id of their own (IoDeleteFile names a file, not a handle).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lib/handle_table.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

class FileRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 12;
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // A file was opened: a new id for `fh` (a reused handle gets a new one). With
  // MPI_MODE_DELETE_ON_CLOSE (`delete_on_close`) its close deletes the file: the handle keeps
  // the file's id for that (deleted_by_close).
  std::uint32_t add(MPI_File fh, const char* name, std::uint32_t comm, bool delete_on_close);
  std::uint32_t id_of(MPI_File fh) const noexcept;
  // The file id (file_id) a close of `fh` deletes, or kNone.
  std::uint32_t deleted_by_close(MPI_File fh) const noexcept;
  void remove(MPI_File fh) noexcept;
  // The matching id of a split collective (MPI_File_*_begin) until its *_end.
  void set_split(MPI_File fh, std::uint64_t matching) noexcept;
  std::uint64_t take_split(MPI_File fh) noexcept;
  // The local id of a file by its name, for IoDeleteFile; a new name is journaled.
  std::uint32_t file_id(const char* name);
  std::vector<trace::FileInfo> snapshot() const;
  std::vector<std::string> file_names() const;  // by file id

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<std::uint32_t> id{kNone};
    std::atomic<std::uint32_t> deleted_by_close{kNone};
    std::atomic<std::uint64_t> split{0};
  };
  std::uint32_t file_id_locked(const std::string& name);
  mutable HandleTable<Slot, kCapacity> table_;
  std::vector<trace::FileInfo> files_;                       // guarded by the mutex in the .cpp
  std::vector<std::string> names_;                           // likewise
  std::unordered_map<std::string, std::uint32_t> name_ids_;  // likewise
};

extern FileRegistry g_files;

}  // namespace perusetrace
