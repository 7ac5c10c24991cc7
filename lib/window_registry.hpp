// Every RMA window the tracer knows: a process-local id, its communicator, and the state that
// ties operations to their completions. Created with the window (collective, not on the hot
// path); looked up lock-free by handle, like communicators and files.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "lib/handle_table.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

// OTF2 lets one completion record complete every operation that shares its matching id (as
// Score-P does): operations to one target that complete at the same synchronisation share one.
// Those whose local completion implies their remote one (the fetching ones: MPI_Get,
// MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap) are kept apart from the others,
// which MPI_Win_flush_local completes only locally.
enum RmaClass : unsigned { kRmaSeparate, kRmaCombined, kRmaClasses };

// A target's pending matching id per class: (id << 1) | completed locally; 0: none.
struct RmaTargetSlots {
  std::atomic<std::uint64_t> pending[kRmaClasses];
};

// A request-based operation (MPI_Rput ...) until it has completed at both ends: 0 free,
// kRmaSlotBusy while claimed, else (id << 3) | combined << 2 | completed locally << 1.
inline constexpr std::uint64_t kRmaSlotBusy = 1;
struct RmaRequestSlot {
  std::atomic<std::uint64_t> state{0};
  std::atomic<std::int32_t> target{0};
};

inline constexpr std::uint32_t kNoRmaGroup = 0xffffffffu;

struct WindowEntry {
  std::uint32_t local_id = 0;
  int size = 0;            // of the window's communicator; targets are its ranks
  int rank = 0;            // this process's rank in it
  bool allocated = false;  // by MPI: freeing it deallocates (OTF2's collective operation says so)
  std::unique_ptr<RmaTargetSlots[]> targets;  // `size` of them
  std::atomic<int> pending{0};                // target slots holding an id
  static constexpr int kRequestSlots = 256;
  RmaRequestSlot requests[kRequestSlots];
  std::atomic<int> requests_held{0};
  // The groups (local ids) of the open access (MPI_Win_start) and exposure (MPI_Win_post)
  // epochs, for the RmaGroupSync of MPI_Win_complete and MPI_Win_wait/test.
  std::atomic<std::uint32_t> access_group{kNoRmaGroup}, exposure_group{kNoRmaGroup};
};

class WindowRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 12;

  // A window was created on `comm` by the MPI function `creator`: a new id for `win` (a reused
  // handle gets a new one), named "win ID (CREATOR)".
  WindowEntry* add(MPI_Win win, MPI_Comm comm, std::uint32_t comm_id, const char* creator,
                   bool allocated);
  // The window is about to be freed; its entry stays readable for records in flight.
  void remove(MPI_Win win) noexcept;
  WindowEntry* find(MPI_Win win) const noexcept;
  // MPI_Win_set_name: the window's name in the trace from now on (the last one given wins).
  void set_name(MPI_Win win, const char* name);
  std::vector<trace::WindowInfo> snapshot() const;

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<WindowEntry*> entry{nullptr};
  };
  mutable HandleTable<Slot, kCapacity> table_;
  std::vector<trace::WindowInfo> infos_;  // guarded by the mutex in the .cpp
};

extern WindowRegistry g_windows;

}  // namespace perusetrace
