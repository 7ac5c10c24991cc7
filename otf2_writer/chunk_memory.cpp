// OTF2's chunk memory for the event buffers, kept within the archive spec's budget per
// location, so that encoding a long journal at MPI_Finalize needs no more memory than a short.
#include <cstdlib>
#include <new>

#include "otf2_writer/internal.hpp"

namespace perusetrace::trace::detail {

namespace {

// OTF2 asks for chunks one at a time; past the per-buffer budget we return nothing, which makes
// OTF2 flush the buffer to disk and hand all its chunks back through free_all.
struct ChunkList {
  void* head = nullptr;
  std::size_t count = 0;
};

void* allocate_chunk(void*, OTF2_FileType type, OTF2_LocationRef, void** per_buffer,
                     std::uint64_t chunk_size) {
  auto* list = static_cast<ChunkList*>(*per_buffer);
  if (list == nullptr) {
    list = new (std::nothrow) ChunkList{};
    if (list == nullptr) return nullptr;
    *per_buffer = list;
  }
  const std::size_t budget = state().spec.otf2_memory_bytes / chunk_size;
  if (type == OTF2_FILETYPE_EVENTS && list->count >= (budget < 2 ? 2 : budget)) return nullptr;
  // Each chunk carries a link to the previous one in front of the part OTF2 uses.
  auto* raw = static_cast<void**>(std::malloc(chunk_size + sizeof(void*)));
  if (raw == nullptr) return nullptr;
  raw[0] = list->head;
  list->head = raw;
  ++list->count;
  return raw + 1;
}

void free_chunks(void*, OTF2_FileType, OTF2_LocationRef, void** per_buffer, bool final) {
  auto* list = static_cast<ChunkList*>(*per_buffer);
  if (list == nullptr) return;
  while (list->head != nullptr) {
    void** chunk = static_cast<void**>(list->head);
    list->head = chunk[0];
    std::free(chunk);
  }
  list->count = 0;
  if (final) {
    delete list;
    *per_buffer = nullptr;
  }
}

}  // namespace

const OTF2_MemoryCallbacks kChunkMemory = {allocate_chunk, free_chunks};

}  // namespace perusetrace::trace::detail
