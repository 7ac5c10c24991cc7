#include "lib/comm_registry.hpp"

#include <cstring>
#include <mutex>

#include "lib/journal.hpp"

namespace perusetrace {

CommRegistry g_comms;

namespace {
std::mutex g_creation;  // communicator creation is collective and rare: a lock is fine here

std::vector<int> world_ranks_of(MPI_Group group) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> local(n), world(n);
  for (int i = 0; i < n; ++i) local[i] = i;
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  if (n > 0) PMPI_Group_translate_ranks(group, n, local.data(), world_group, world.data());
  PMPI_Group_free(&world_group);
  return world;
}
}  // namespace

void CommRegistry::start() {
  add(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  add(MPI_COMM_SELF, "MPI_COMM_SELF");
}

const CommEntry* CommRegistry::add(MPI_Comm comm, const char* creator, std::uint32_t parent) {
  if (comm == MPI_COMM_NULL) return nullptr;
  auto* e = new CommEntry{};
  trace::CommInfo info;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group;
  PMPI_Comm_group(comm, &group);
  e->world = world_ranks_of(group);
  PMPI_Group_free(&group);
  if (inter) {
    PMPI_Comm_remote_group(comm, &group);
    e->remote_world = world_ranks_of(group);
    PMPI_Group_free(&group);
    e->inter = true;
    if (e->world < e->remote_world) e->peer_offset = static_cast<int>(e->world.size());
  }
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int length = 0;
  PMPI_Comm_get_name(comm, name, &length);
  info.world_ranks = e->world;
  info.remote_world_ranks = e->remote_world;
  info.inter = e->inter;
  info.parent = parent == kCommUnknown ? trace::kNoParent : parent;

  std::lock_guard lock(g_creation);
  e->local_id = static_cast<std::uint32_t>(infos_.size());
  info.local_id = e->local_id;
  info.name =
      length > 0 ? std::string(name) : "comm " + std::to_string(e->local_id) + " (" + creator + ")";
  journal::note_comm(info);  // before any record can name it
  infos_.push_back(std::move(info));
  e->published.store(true, std::memory_order_release);
  if (Slot* s = table_.find(handle_key(comm), true)) s->entry.store(e, std::memory_order_release);
  return e;
}

void CommRegistry::rename(MPI_Comm comm, const char* name) {
  const CommEntry* e = find(comm);
  if (e == nullptr) return;  // not traced (created while tracing was off)
  std::lock_guard lock(g_creation);
  if (e->local_id >= infos_.size()) return;
  trace::CommInfo& info = infos_[e->local_id];
  info.name = name;
  info.named = true;
  journal::note_comm_name(info.local_id, info.name);
}

void CommRegistry::remove(MPI_Comm comm) noexcept {
  if (Slot* s = table_.find(handle_key(comm), false)) s->entry.store(nullptr);
}

const CommEntry* CommRegistry::find(MPI_Comm comm) const noexcept {
  Slot* s = table_.find(handle_key(comm), false);
  return s ? s->entry.load(std::memory_order_acquire) : nullptr;
}

std::vector<trace::CommInfo> CommRegistry::snapshot() const {
  std::lock_guard lock(g_creation);
  return infos_;
}

}  // namespace perusetrace
