#include "lib/rma_group_registry.hpp"

#include <atomic>
#include <mutex>

#include "lib/handle_table.hpp"
#include "lib/journal.hpp"
#include "lib/window_registry.hpp"

namespace perusetrace::rma_groups {

namespace {

MPI_Group g_world = MPI_GROUP_NULL;

struct Slot {
  std::atomic<std::uintptr_t> key{0};  // the member list's hash (never 0)
  std::atomic<std::uint32_t> id{kNoRmaGroup};
};
HandleTable<Slot, 1 << 12> g_by_hash;
std::mutex g_adding;  // a member list seen for the first time
std::vector<std::vector<int>> g_lists;

// Ranks are translated in pieces of this many, on the caller's stack.
constexpr int kPiece = 256;

// Calls `each(world_ranks, n)` for the members of `group`, piece by piece; false if the MPI
// could not tell them.
template <typename Each>
bool members(MPI_Group group, Each&& each) noexcept {
  int size = 0;
  if (g_world == MPI_GROUP_NULL || PMPI_Group_size(group, &size) != MPI_SUCCESS) return false;
  int local[kPiece], world[kPiece];
  for (int at = 0; at < size; at += kPiece) {
    const int n = size - at < kPiece ? size - at : kPiece;
    for (int i = 0; i < n; ++i) local[i] = at + i;
    if (PMPI_Group_translate_ranks(group, n, local, g_world, world) != MPI_SUCCESS) return false;
    each(world, n);
  }
  return true;
}

std::uint64_t mix(std::uint64_t z) noexcept {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void start() {
  if (g_world == MPI_GROUP_NULL) PMPI_Comm_group(MPI_COMM_WORLD, &g_world);
}

std::uint32_t id_of(MPI_Group group) noexcept {
  std::uint64_t hash = 0x6a09e667f3bcc909ull;
  std::uint64_t count = 0;
  if (!members(group, [&](const int* world, int n) {
        for (int i = 0; i < n; ++i) hash = mix(hash ^ static_cast<std::uint32_t>(world[i]));
        count += static_cast<std::uint64_t>(n);
      }))
    return kNoRmaGroup;
  hash = mix(hash + count) | 1;
  Slot* slot = g_by_hash.find(static_cast<std::uintptr_t>(hash), true);
  if (slot == nullptr) return kNoRmaGroup;
  const std::uint32_t known = slot->id.load(std::memory_order_acquire);
  if (known != kNoRmaGroup) return known;
  // First time: the list is kept (and journaled before any record names it).
  std::vector<int> list;
  list.reserve(count);
  members(group, [&](const int* world, int n) { list.insert(list.end(), world, world + n); });
  std::lock_guard lock(g_adding);
  std::uint32_t id = slot->id.load(std::memory_order_acquire);
  if (id != kNoRmaGroup) return id;
  id = static_cast<std::uint32_t>(g_lists.size());
  journal::note_rma_group(id, list);
  g_lists.push_back(std::move(list));
  slot->id.store(id, std::memory_order_release);
  return id;
}

std::vector<std::vector<int>> snapshot() {
  std::lock_guard lock(g_adding);
  return g_lists;
}

}  // namespace perusetrace::rma_groups
