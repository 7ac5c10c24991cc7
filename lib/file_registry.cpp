#include "lib/file_registry.hpp"

#include <mutex>

#include "lib/handle_key.hpp"
#include "lib/journal.hpp"

namespace perusetrace {

FileRegistry g_files;

namespace {
std::mutex g_opening;  // opening a file is collective and slow: a lock costs nothing here
}

std::uint32_t FileRegistry::add(MPI_File fh, const char* name, std::uint32_t comm,
                                bool delete_on_close) {
  std::lock_guard lock(g_opening);
  const auto id = static_cast<std::uint32_t>(files_.size());
  files_.push_back({id, name ? name : "", comm});
  journal::note_file(files_.back());
  const std::uint32_t deleted = delete_on_close ? file_id_locked(files_.back().name) : kNone;
  if (Slot* s = table_.find(handle_key(fh), true)) {
    s->deleted_by_close.store(deleted, std::memory_order_relaxed);
    s->id.store(id, std::memory_order_release);
  }
  return id;
}

std::uint32_t FileRegistry::id_of(MPI_File fh) const noexcept {
  const Slot* s = table_.find(handle_key(fh), false);
  return s ? s->id.load(std::memory_order_acquire) : kNone;
}

std::uint32_t FileRegistry::deleted_by_close(MPI_File fh) const noexcept {
  const Slot* s = table_.find(handle_key(fh), false);
  return s ? s->deleted_by_close.load(std::memory_order_relaxed) : kNone;
}

void FileRegistry::remove(MPI_File fh) noexcept {
  if (Slot* s = table_.find(handle_key(fh), false)) {
    s->id.store(kNone);
    s->deleted_by_close.store(kNone);
  }
}

void FileRegistry::set_split(MPI_File fh, std::uint64_t matching) noexcept {
  if (Slot* s = table_.find(handle_key(fh), false)) s->split.store(matching);
}

std::uint64_t FileRegistry::take_split(MPI_File fh) noexcept {
  Slot* s = table_.find(handle_key(fh), false);
  return s ? s->split.exchange(0) : 0;
}

std::uint32_t FileRegistry::file_id(const char* name) {
  std::lock_guard lock(g_opening);
  return file_id_locked(name ? name : "");
}

std::uint32_t FileRegistry::file_id_locked(const std::string& name) {
  const auto [it, fresh] = name_ids_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
  if (fresh) {
    names_.push_back(name);
    journal::note_file_name(it->second, name);
  }
  return it->second;
}

std::vector<trace::FileInfo> FileRegistry::snapshot() const {
  std::lock_guard lock(g_opening);
  return files_;
}

std::vector<std::string> FileRegistry::file_names() const {
  std::lock_guard lock(g_opening);
  return names_;
}

}  // namespace perusetrace
