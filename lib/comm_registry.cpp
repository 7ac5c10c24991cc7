#include "lib/comm_registry.hpp"

#include <algorithm>
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

namespace {

bool outside(const std::vector<int>& ranks) {
  return std::find(ranks.begin(), ranks.end(), MPI_UNDEFINED) != ranks.end();
}

// The ranks in `to` of the members `ranks` of `from` (MPI_UNDEFINED where not there).
std::vector<int> translate(MPI_Group from, const std::vector<int>& ranks, MPI_Group to) {
  std::vector<int> out(ranks.size(), MPI_UNDEFINED);
  if (!ranks.empty())
    PMPI_Group_translate_ranks(from, static_cast<int>(ranks.size()), ranks.data(), to, out.data());
  return out;
}

}  // namespace

void CommRegistry::place_other_members(MPI_Comm comm, bool inter, MPI_Comm parent,
                                       std::vector<int>& world, std::vector<int>& remote,
                                       trace::CommInfo& info) const {
  if (!outside(world) && !outside(remote)) return;
  // A communicator made from one that reaches another job (MPI_Intercomm_merge of a spawn's
  // intercommunicator, and what is split from that) names those members as its parent does.
  const CommEntry* p = parent == MPI_COMM_NULL ? nullptr : find(parent);
  if (p != nullptr && p->local_id < infos_.size() &&
      infos_[p->local_id].job_relation != trace::JobRelation::None) {
    MPI_Group parent_local, parent_remote = MPI_GROUP_NULL;
    PMPI_Comm_group(parent, &parent_local);
    if (p->inter) PMPI_Comm_remote_group(parent, &parent_remote);
    bool all = true;
    auto place = [&](std::vector<int>& ranks, MPI_Group group) {
      std::vector<int> unknown;
      for (int i = 0; i < static_cast<int>(ranks.size()); ++i)
        if (ranks[i] == MPI_UNDEFINED) unknown.push_back(i);
      const std::vector<int> local = translate(group, unknown, parent_local);
      const std::vector<int> far = parent_remote == MPI_GROUP_NULL
                                       ? std::vector<int>(unknown.size(), MPI_UNDEFINED)
                                       : translate(group, unknown, parent_remote);
      for (std::size_t k = 0; k < unknown.size(); ++k) {
        int& member = ranks[static_cast<std::size_t>(unknown[k])];
        if (local[k] != MPI_UNDEFINED && static_cast<std::size_t>(local[k]) < p->world.size())
          member = p->world[static_cast<std::size_t>(local[k])];
        else if (far[k] != MPI_UNDEFINED &&
                 static_cast<std::size_t>(far[k]) < p->remote_world.size())
          member = p->remote_world[static_cast<std::size_t>(far[k])];
        all = all && member < -1;
      }
    };
    MPI_Group group;
    PMPI_Comm_group(comm, &group);
    place(world, group);
    PMPI_Group_free(&group);
    if (inter) {
      PMPI_Comm_remote_group(comm, &group);
      place(remote, group);
      PMPI_Group_free(&group);
    }
    PMPI_Group_free(&parent_local);
    if (parent_remote != MPI_GROUP_NULL) PMPI_Group_free(&parent_remote);
    if (all) {
      const trace::CommInfo& of = infos_[p->local_id];
      info.job_relation = of.job_relation;
      info.job = of.job;
      info.job_archive = of.job_archive;
      return;
    }
  }
  // A job nobody named (MPI_Comm_connect's peer, a spawn whose children were not told): its
  // members by their ranks in the group that holds them, one job per communicator.
  for (std::vector<int>* ranks : {&world, &remote})
    for (std::size_t i = 0; i < ranks->size(); ++i)
      if ((*ranks)[i] == MPI_UNDEFINED || (*ranks)[i] < -1)
        (*ranks)[i] = trace::other_job_member(static_cast<int>(i));
  info.job_relation = trace::JobRelation::Connected;
  info.job.clear();
  info.job_archive.clear();
}

const CommEntry* CommRegistry::add(MPI_Comm comm, const char* creator, MPI_Comm parent,
                                   const OtherJob* other) {
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
  }
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int length = 0;
  PMPI_Comm_get_name(comm, name, &length);

  std::lock_guard lock(g_creation);
  if (other != nullptr && inter) {
    for (std::size_t r = 0; r < e->remote_world.size(); ++r)
      e->remote_world[r] =
          trace::other_job_member(r < other->ranks.size() ? other->ranks[r] : static_cast<int>(r));
    info.job_relation = other->relation;
    info.job = other->name;
    info.job_archive = other->archive;
  } else {
    place_other_members(comm, inter, parent, e->world, e->remote_world, info);
  }
  if (inter && (info.job_relation != trace::JobRelation::None || e->world < e->remote_world))
    e->peer_offset = static_cast<int>(e->world.size());
  info.world_ranks = e->world;
  info.remote_world_ranks = e->remote_world;
  info.inter = e->inter;
  const std::uint32_t parent_id = parent == MPI_COMM_NULL ? kCommUnknown : id_of(parent);
  info.parent = parent_id == kCommUnknown ? trace::kNoParent : parent_id;
  const std::vector<int>& peers = e->inter ? e->remote_world : e->world;
  e->peer_world = peers.data();
  e->peer_count = static_cast<std::uint32_t>(peers.size());
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

namespace {
constexpr std::atomic<const CommEntry*> kNoEntry{nullptr};
}  // namespace

constinit thread_local std::uintptr_t CommRegistry::t_last_key = 0;
constinit thread_local const std::atomic<const CommEntry*>* CommRegistry::t_last_entry = &kNoEntry;

const CommEntry* CommRegistry::find_slot(std::uintptr_t key) const noexcept {
  Slot* s = table_.find(key, false);
  if (s == nullptr) return nullptr;  // not remembered: the handle may get a slot later
  t_last_key = key;
  t_last_entry = &s->entry;
  return s->entry.load(std::memory_order_acquire);
}

std::vector<trace::CommInfo> CommRegistry::snapshot() const {
  std::lock_guard lock(g_creation);
  return infos_;
}

}  // namespace perusetrace
