// MPI-IO: file handles and operations as OTF2 I/O events (IoCreateHandle, IoOperationBegin,
// IoOperationComplete, ...) on handles that carry the file's name.
#include <atomic>

#include "lib/comm_registry.hpp"
#include "lib/file_registry.hpp"
#include "lib/mpi_handlers.hpp"

namespace perusetrace {

namespace {

std::atomic<std::uint64_t> g_next_matching{1};

void complete(std::uint32_t handle, const MPI_Status* status, std::uint64_t io) noexcept {
  emit(Record{0, RecordKind::IoOperationComplete, 0, 0, handle, 0, 0, status_bytes(status), io, 0});
}

}  // namespace

void on_file_open(const Call&, int rc, MPI_Comm comm, const char* filename, int amode,
                  MPI_File fh) noexcept {
  if (rc != MPI_SUCCESS || fh == MPI_FILE_NULL) return;
  const std::uint32_t handle = g_files.add(fh, filename, g_comms.id_of(comm));
  const IoAccess access = (amode & MPI_MODE_RDWR)     ? IoAccess::ReadWrite
                          : (amode & MPI_MODE_WRONLY) ? IoAccess::WriteOnly
                                                      : IoAccess::ReadOnly;
  const std::int32_t creation =
      ((amode & MPI_MODE_CREATE) ? kIoCreate : 0) | ((amode & MPI_MODE_EXCL) ? kIoExclusive : 0);
  const std::int32_t status = ((amode & MPI_MODE_APPEND) ? kIoAppend : 0) |
                              ((amode & MPI_MODE_DELETE_ON_CLOSE) ? kIoDeleteOnClose : 0);
  emit(Record{0, RecordKind::IoCreateHandle, 0, 0, handle, static_cast<std::int32_t>(access),
              creation, 0, 0, static_cast<std::uint64_t>(status)});
}

void on_file_close(const Call&, MPI_File fh) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (handle == FileRegistry::kNone) return;
  emit(Record{0, RecordKind::IoDestroyHandle, 0, 0, handle, 0, 0, 0, 0, 0});
  g_files.remove(fh);
}

std::uint64_t on_file_io_begin(const Call&, MPI_File fh, int count, MPI_Datatype type,
                               IoOperation op, std::int32_t flags) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (handle == FileRegistry::kNone) return 0;
  int size = 0;
  if (count > 0 && type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &size);
  const std::uint64_t io = g_next_matching.fetch_add(1, std::memory_order_relaxed);
  emit(Record{0, RecordKind::IoOperationBegin, 0, 0, handle, static_cast<std::int32_t>(op), flags,
              static_cast<std::uint64_t>(count > 0 ? count : 0) * static_cast<std::uint64_t>(size),
              io, 0});
  return io;
}

void on_file_io_end(const Call&, int rc, MPI_File fh, const MPI_Status* status,
                    std::uint64_t io) noexcept {
  if (io == 0) return;
  // A failed operation still completes in the trace, with no bytes.
  complete(g_files.id_of(fh), rc == MPI_SUCCESS ? status : nullptr, io);
}

void on_file_io_posted(const Call&, int rc, MPI_File fh, std::uint64_t io,
                       const MPI_Request* request) noexcept {
  if (io == 0) return;
  const std::uint32_t handle = g_files.id_of(fh);
  if (rc != MPI_SUCCESS || *request == MPI_REQUEST_NULL) {
    complete(handle, nullptr, io);
    return;
  }
  RequestSlot* slot = g_requests.find_or_claim(handle_key(*request));
  if (slot == nullptr) return;
  slot->take();
  RequestInfo info;
  info.kind = RequestKind::FileIo;
  info.comm = handle;
  info.bytes = io;
  slot->publish(info);
}

void on_file_split_begun(const Call&, int rc, MPI_File fh, std::uint64_t io) noexcept {
  if (io == 0) return;
  if (rc != MPI_SUCCESS) {
    complete(g_files.id_of(fh), nullptr, io);
    return;
  }
  g_files.set_split(fh, io);  // MPI allows one split collective per file handle at a time
}

void on_file_split_end(const Call&, int rc, MPI_File fh, const MPI_Status* status) noexcept {
  const std::uint64_t io = g_files.take_split(fh);
  if (io != 0) complete(g_files.id_of(fh), rc == MPI_SUCCESS ? status : nullptr, io);
}

}  // namespace perusetrace
