#include "lib/window_registry.hpp"

#include <mutex>
#include <string>

#include "lib/handle_key.hpp"
#include "lib/journal.hpp"

namespace perusetrace {

WindowRegistry g_windows;

namespace {
std::mutex g_creation;  // creating a window is collective and slow: a lock costs nothing here
}

WindowEntry* WindowRegistry::add(MPI_Win win, MPI_Comm comm, std::uint32_t comm_id,
                                 const char* creator, bool allocated) {
  if (win == MPI_WIN_NULL) return nullptr;
  auto* e = new WindowEntry{};
  PMPI_Comm_size(comm, &e->size);
  PMPI_Comm_rank(comm, &e->rank);
  e->allocated = allocated;
  e->targets = std::make_unique<RmaTargetSlots[]>(static_cast<std::size_t>(e->size));
  std::lock_guard lock(g_creation);
  e->local_id = static_cast<std::uint32_t>(infos_.size());
  infos_.push_back(
      {e->local_id, comm_id, "win " + std::to_string(e->local_id) + " (" + creator + ")"});
  journal::note_window(infos_.back());  // before any record can name it
  if (Slot* s = table_.find(handle_key(win), true)) s->entry.store(e, std::memory_order_release);
  return e;
}

void WindowRegistry::remove(MPI_Win win) noexcept {
  if (Slot* s = table_.find(handle_key(win), false)) s->entry.store(nullptr);
}

WindowEntry* WindowRegistry::find(MPI_Win win) const noexcept {
  Slot* s = table_.find(handle_key(win), false);
  return s ? s->entry.load(std::memory_order_acquire) : nullptr;
}

void WindowRegistry::set_name(MPI_Win win, const char* name) {
  const WindowEntry* e = find(win);
  if (e == nullptr || name == nullptr || *name == '\0') return;  // keep a name that says something
  std::lock_guard lock(g_creation);
  infos_[e->local_id].name = name;
  journal::note_window_name(e->local_id, name);
}

std::vector<trace::WindowInfo> WindowRegistry::snapshot() const {
  std::lock_guard lock(g_creation);
  return infos_;
}

}  // namespace perusetrace
