// MPI-IO: file handles and operations as OTF2 I/O events (IoCreateHandle, IoOperationBegin,
// IoOperationComplete, ...) on handles that carry the file's name; metadata calls as OTF2 has
// them (IoDeleteFile, IoSeek, a flush for MPI_File_sync) or, where it has none (set_size,
// preallocate), as attributes of the call's Leave. docs/otf2-mapping.md, MPI-IO.
#include <atomic>

#include "lib/comm_registry.hpp"
#include "lib/datatype_registry.hpp"
#include "lib/file_registry.hpp"
#include "lib/mpi_handlers.hpp"

namespace perusetrace {

namespace {

std::atomic<std::uint64_t> g_next_matching{1};

void complete(std::uint32_t handle, std::uint64_t bytes, std::uint64_t io) noexcept {
  emit(Record{0, RecordKind::IoOperationComplete, 0, 0, handle, 0, 0, bytes, io, 0});
}

// Starts an operation of `bytes` on `handle`; returns its matching id.
// `datatype`: the memory buffer's local datatype id (DatatypeRegistry), kNoDatatype for none.
std::uint64_t begin(std::uint32_t handle, IoOperation op, std::int32_t flags, std::uint64_t bytes,
                    std::uint32_t datatype = trace::kNoDatatype) noexcept {
  const std::uint64_t io = g_next_matching.fetch_add(1, std::memory_order_relaxed);
  emit(Record{0, RecordKind::IoOperationBegin, 0, 0, handle, static_cast<std::int32_t>(op), flags,
              bytes, io, datatype});
  return io;
}

}  // namespace

void on_file_open(const Call&, int rc, MPI_Comm comm, const char* filename, int amode,
                  MPI_File fh) noexcept {
  if (rc != MPI_SUCCESS || fh == MPI_FILE_NULL) return;
  // Opening is collective and slow: one more query for the file's size costs nothing here.
  MPI_Offset size = 0;
  const std::uint64_t bytes = PMPI_File_get_size(fh, &size) == MPI_SUCCESS && size >= 0
                                  ? static_cast<std::uint64_t>(size)
                                  : kIoUnknownBytes;
  const bool delete_on_close = (amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
  const std::uint32_t handle = g_files.add(fh, filename, g_comms.id_of(comm), delete_on_close);
  const IoAccess access = (amode & MPI_MODE_RDWR)     ? IoAccess::ReadWrite
                          : (amode & MPI_MODE_WRONLY) ? IoAccess::WriteOnly
                                                      : IoAccess::ReadOnly;
  const std::int32_t creation =
      ((amode & MPI_MODE_CREATE) ? kIoCreate : 0) | ((amode & MPI_MODE_EXCL) ? kIoExclusive : 0);
  const std::int32_t status =
      ((amode & MPI_MODE_APPEND) ? kIoAppend : 0) | (delete_on_close ? kIoDeleteOnClose : 0);
  emit(Record{0, RecordKind::IoCreateHandle, 0, 0, handle, static_cast<std::int32_t>(access),
              creation, bytes, 0, static_cast<std::uint64_t>(status)});
}

FileClosing on_file_closing(const Call&, MPI_File fh) noexcept {
  return FileClosing{fh, g_files.id_of(fh), g_files.deleted_by_close(fh)};
}

// As Score-P: the handle is destroyed once the close succeeded, and a file opened with
// MPI_MODE_DELETE_ON_CLOSE is deleted by it.
void on_file_closed(const Call&, int rc, const FileClosing& closing) noexcept {
  if (rc != MPI_SUCCESS || closing.handle == FileRegistry::kNone) return;
  if (closing.deleted_file != FileRegistry::kNone)
    emit(Record{0, RecordKind::IoDeleteFile, 0, 0, closing.deleted_file, 0, 0, 0, 0, 0});
  emit(Record{0, RecordKind::IoDestroyHandle, 0, 0, closing.handle, 0, 0, 0, 0, 0});
  g_files.remove(closing.fh);
}

void on_file_delete(const Call&, int rc, const char* filename) noexcept {
  if (rc != MPI_SUCCESS || filename == nullptr) return;
  emit(Record{0, RecordKind::IoDeleteFile, 0, 0, g_files.file_id(filename), 0, 0, 0, 0, 0});
}

std::uint64_t on_file_io_begin(const Call&, MPI_File fh, int count, MPI_Datatype type,
                               IoOperation op, std::int32_t flags) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (handle == FileRegistry::kNone) return 0;
  int size = 0;
  if (count > 0 && type != MPI_DATATYPE_NULL) PMPI_Type_size(type, &size);
  return begin(handle, op, flags,
               static_cast<std::uint64_t>(count > 0 ? count : 0) * static_cast<std::uint64_t>(size),
               g_datatypes.id_of(type));
}

void on_file_io_end(const Call&, int rc, MPI_File fh, const MPI_Status* status,
                    std::uint64_t io) noexcept {
  if (io == 0) return;
  // A failed operation still completes in the trace, with no bytes.
  complete(g_files.id_of(fh), rc == MPI_SUCCESS ? status_bytes(status) : 0, io);
}

void on_file_io_posted(const Call&, int rc, MPI_File fh, std::uint64_t io,
                       const MPI_Request* request) noexcept {
  if (io == 0) return;
  const std::uint32_t handle = g_files.id_of(fh);
  if (rc != MPI_SUCCESS || *request == MPI_REQUEST_NULL) {
    complete(handle, 0, io);
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
    complete(g_files.id_of(fh), 0, io);
    return;
  }
  g_files.set_split(fh, io);  // MPI allows one split collective per file handle at a time
}

void on_file_split_end(const Call&, int rc, MPI_File fh, const MPI_Status* status) noexcept {
  const std::uint64_t io = g_files.take_split(fh);
  if (io != 0) complete(g_files.id_of(fh), rc == MPI_SUCCESS ? status_bytes(status) : 0, io);
}

// MPI_File_sync is collective and moves no bytes of its own: a flush of unknown size, as
// Score-P writes fsync.
std::uint64_t on_file_sync_begin(const Call&, MPI_File fh) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (handle == FileRegistry::kNone) return 0;
  return begin(handle, IoOperation::Flush, kIoCollective, kIoUnknownBytes);
}

void on_file_sync_end(const Call&, MPI_File fh, std::uint64_t io) noexcept {
  if (io != 0) complete(g_files.id_of(fh), kIoUnknownBytes, io);
}

void on_file_seek(Call& call, int rc, MPI_File fh, MPI_Offset offset, int whence,
                  bool shared) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (rc != MPI_SUCCESS || handle == FileRegistry::kNone) return;
  MPI_Offset reached = 0;
  const int got =
      shared ? PMPI_File_get_position_shared(fh, &reached) : PMPI_File_get_position(fh, &reached);
  const IoSeekFrom from = whence == MPI_SEEK_CUR   ? IoSeekFrom::Current
                          : whence == MPI_SEEK_END ? IoSeekFrom::End
                                                   : IoSeekFrom::Start;
  call.at_leave(Record{
      0, RecordKind::IoSeek, 0, 0, handle, static_cast<std::int32_t>(from), 0,
      static_cast<std::uint64_t>(static_cast<std::int64_t>(offset)), 0,
      got == MPI_SUCCESS && reached >= 0 ? static_cast<std::uint64_t>(reached) : kIoUnknownBytes});
}

void on_file_resized(Call& call, int rc, MPI_File fh, MPI_Offset size) noexcept {
  const std::uint32_t handle = g_files.id_of(fh);
  if (rc != MPI_SUCCESS || handle == FileRegistry::kNone || size < 0) return;
  call.at_leave(
      Record{0, RecordKind::IoSetSize, 0, 0, handle, 0, 0, static_cast<std::uint64_t>(size), 0, 0});
}

}  // namespace perusetrace
