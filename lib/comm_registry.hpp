// Every communicator the tracer knows: a process-local id, and the world rank of each member.
// Created when a communicator appears (not on the hot path); looked up lock-free on the hot
// path by handle, like the request table.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "lib/handle_key.hpp"
#include "lib/handle_table.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

struct CommEntry {  // immutable once published
  // Set last: a Peruse callback gets the entry through the MPI's own (to us invisible)
  // synchronisation, so it acquires this before reading the rest.
  std::atomic<bool> published{false};
  const CommEntry* acquire() const noexcept {
    return published.load(std::memory_order_acquire) ? this : nullptr;
  }
  std::uint32_t local_id;
  std::vector<int> world;         // local rank -> world rank
  std::vector<int> remote_world;  // intercommunicators: remote rank -> world rank
  bool inter = false;
  // OTF2 sees an intercommunicator as one group: the lexicographically lower of the two groups
  // first, then the other. A remote rank r is member peer_offset + r of that union.
  int peer_offset = 0;
  int otf2_rank(int peer) const noexcept { return peer < 0 ? peer : peer + peer_offset; }
  int world_rank_of(int peer) const noexcept {
    const auto& ranks = inter ? remote_world : world;
    return peer >= 0 && static_cast<std::size_t>(peer) < ranks.size() ? ranks[peer] : peer;
  }
};

class CommRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 14;

  // Registers MPI_COMM_WORLD (id 0) and MPI_COMM_SELF (id 1); call right after MPI_Init.
  void start();
  // A communicator appeared: give it an id (a handle seen before, now reused, gets a new one).
  // Unnamed communicators are called "comm ID (CREATOR)", CREATOR being the MPI function.
  // `parent`: the local id of the communicator it was made from (trace::kNoParent: none).
  const CommEntry* add(MPI_Comm comm, const char* creator, std::uint32_t parent = trace::kNoParent);
  // MPI_Comm_set_name: the communicator's name from now on (not on the hot path).
  void rename(MPI_Comm comm, const char* name);
  // The communicator is about to be freed; its entry stays readable for records in flight.
  void remove(MPI_Comm comm) noexcept;
  const CommEntry* find(MPI_Comm comm) const noexcept;
  std::uint32_t id_of(MPI_Comm comm) const noexcept {
    const CommEntry* e = find(comm);
    return e ? e->local_id : kCommUnknown;
  }
  // Everything created so far, in creation order, for the archive's definitions.
  std::vector<trace::CommInfo> snapshot() const;

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<const CommEntry*> entry{nullptr};
  };
  mutable HandleTable<Slot, kCapacity> table_;
  std::vector<trace::CommInfo> infos_;  // guarded by the creation mutex in the .cpp
};

extern CommRegistry g_comms;

}  // namespace perusetrace
