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

// The MPI job at the far end of an intercommunicator that is not this job (lib/spawn.hpp).
struct OtherJob {
  trace::JobRelation relation = trace::JobRelation::None;
  std::string name, archive;  // as trace::CommInfo's job and job_archive
  std::vector<int> ranks;     // the remote group's world ranks in that job, by remote rank
};

struct CommEntry {  // immutable once published
  // Set last: a Peruse callback gets the entry through the MPI's own (to us invisible)
  // synchronisation, so it loads this (acquire) before reading the rest.
  std::atomic<bool> published{false};
  std::uint32_t local_id;
  // local rank -> world rank; a process of another job is trace::other_job_member(its rank
  // there), which is also how Peruse events name it.
  std::vector<int> world;
  std::vector<int> remote_world;  // intercommunicators: remote rank -> world rank
  bool inter = false;
  // OTF2 sees an intercommunicator as one group: the lexicographically lower of the two groups
  // first (this job's group, for one to another job), then the other. A remote rank r is member
  // peer_offset + r of that union.
  int peer_offset = 0;
  // The group Peruse's peers are ranks of (the remote one of an intercommunicator), as a bare
  // array: a Peruse callback translates every event's peer, and the vectors' begin/end and the
  // `inter` test cost it more than the lookup. Set once both vectors are final.
  const int* peer_world = nullptr;
  std::uint32_t peer_count = 0;
  int otf2_rank(int peer) const noexcept { return peer < 0 ? peer : peer + peer_offset; }
  // Negative peers (MPI_ANY_SOURCE, MPI_PROC_NULL) wrap to large unsigned values and stay as
  // they are.
  int world_rank_of(int peer) const noexcept {
    return static_cast<std::uint32_t>(peer) < peer_count ? peer_world[peer] : peer;
  }
};

class CommRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 14;

  // Registers MPI_COMM_WORLD (id 0) and MPI_COMM_SELF (id 1); call right after MPI_Init.
  void start();
  // A communicator appeared: give it an id (a handle seen before, now reused, gets a new one).
  // Unnamed communicators are called "comm ID (CREATOR)", CREATOR being the MPI function.
  // `parent`: the communicator it was made from (MPI_COMM_NULL: none); members outside this job
  // are found there. `other`: the job an intercommunicator's remote group is (spawn, parent).
  const CommEntry* add(MPI_Comm comm, const char* creator, MPI_Comm parent = MPI_COMM_NULL,
                       const OtherJob* other = nullptr);
  // MPI_Comm_set_name: the communicator's name from now on (not on the hot path).
  void rename(MPI_Comm comm, const char* name);
  // The communicator is about to be freed; its entry stays readable for records in flight.
  void remove(MPI_Comm comm) noexcept;
  // On the hot path: a thread that names the communicator of its previous lookup again (nearly
  // every call of most programs) loads its slot's entry and skips the hash and the probe. A slot
  // belongs to its handle for the whole run, so the remembered one is never another's.
  const CommEntry* find(MPI_Comm comm) const noexcept {
    const std::uintptr_t key = handle_key(comm);
    if (key == t_last_key) [[likely]]
      return t_last_entry->load(std::memory_order_acquire);
    return find_slot(key);
  }
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
  // The thread's previous lookup (key 0: none yet; it then points at an entry that is null).
  static constinit thread_local std::uintptr_t t_last_key
      __attribute__((tls_model("initial-exec")));
  static constinit thread_local const std::atomic<const CommEntry*>* t_last_entry
      __attribute__((tls_model("initial-exec")));
  const CommEntry* find_slot(std::uintptr_t key) const noexcept;
  std::vector<trace::CommInfo> infos_;  // guarded by the creation mutex in the .cpp
  // Members outside MPI_COMM_WORLD as the parent communicator knows them; unknown ones as
  // members of a job of their own. Sets the info's job fields.
  void place_other_members(MPI_Comm comm, bool inter, MPI_Comm parent, std::vector<int>& world,
                           std::vector<int>& remote, trace::CommInfo& info) const;
};

extern CommRegistry g_comms;

}  // namespace perusetrace
