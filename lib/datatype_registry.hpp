// Every MPI datatype the traced calls use, as a process-local id per distinct definition.
// A handle is looked up lock-free on the hot path; the first time a wrapper sees a handle, the
// type is unwrapped recursively (MPI_Type_get_envelope / MPI_Type_get_contents, HDTrace's
// method) and its definition journaled, once. Peruse callbacks never look types up.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/handle_key.hpp"
#include "lib/handle_table.hpp"
#include "otf2_writer/writer.hpp"

namespace perusetrace {

class DatatypeRegistry {
 public:
  static constexpr std::size_t kCapacity = 1 << 14;

  // The local id of `type`'s definition; trace::kNoDatatype for MPI_DATATYPE_NULL, or when the
  // table is full or the type cannot be read. Only from wrappers: a first sight unwraps the type.
  std::uint32_t id_of(MPI_Datatype type) noexcept {
    if (type == MPI_DATATYPE_NULL) return trace::kNoDatatype;
    if (Slot* s = table_.find(handle_key(type), false)) {
      const std::uint32_t id = s->id.load(std::memory_order_acquire);
      if (id != trace::kNoDatatype) return id;
    }
    return first_sight(type);
  }
  // MPI_Type_free: the MPI may hand the handle out again for another type.
  void forget(MPI_Datatype type) noexcept;
  // MPI_Type_set_name: the type's later uses carry its new name (a definition of its own).
  void renamed(MPI_Datatype type) noexcept;
  // Every definition so far, inner ones before those using them, for the archive.
  std::vector<trace::DatatypeInfo> snapshot() const;
  // Moves whenever a handle's id may change (forget): what a thread cached of a type before
  // holds while this says the same.
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<std::uintptr_t> key{0};
    std::atomic<std::uint32_t> id{trace::kNoDatatype};
  };
  std::uint32_t first_sight(MPI_Datatype type) noexcept;
  std::uint32_t unwrap(MPI_Datatype type, int depth);  // the registration lock held
  std::uint32_t define(trace::DatatypeInfo info);      // the registration lock held

  HandleTable<Slot, kCapacity> table_;
  std::atomic<std::uint64_t> generation_{0};
  std::vector<trace::DatatypeInfo> infos_;        // guarded by the registration lock
  std::map<std::string, std::uint32_t> by_text_;  // a definition's fields -> its local id
};

extern DatatypeRegistry g_datatypes;

}  // namespace perusetrace
