#include "lib/datatype_registry.hpp"

#include <mutex>
#include <new>

#include "lib/journal.hpp"
#include "events/value_names.hpp"

namespace perusetrace {

DatatypeRegistry g_datatypes;

namespace {

std::mutex g_registration;  // a type's first sight is rare: a lock is fine here

// Deeper nesting than this is not unwrapped further: its type stays an opaque definition.
constexpr int kMaxDepth = 32;

// Named after the constant: MPI_COMBINER_NAMED is "NAMED".
#define PERUSETRACE_COMBINER(name) \
  { MPI_COMBINER_##name, #name }
const char* combiner_name(int combiner) {
  return name_in(
      combiner,
      {PERUSETRACE_COMBINER(NAMED), PERUSETRACE_COMBINER(DUP), PERUSETRACE_COMBINER(CONTIGUOUS),
       PERUSETRACE_COMBINER(VECTOR), PERUSETRACE_COMBINER(HVECTOR), PERUSETRACE_COMBINER(INDEXED),
       PERUSETRACE_COMBINER(HINDEXED), PERUSETRACE_COMBINER(INDEXED_BLOCK),
       PERUSETRACE_COMBINER(HINDEXED_BLOCK), PERUSETRACE_COMBINER(STRUCT),
       PERUSETRACE_COMBINER(SUBARRAY), PERUSETRACE_COMBINER(DARRAY), PERUSETRACE_COMBINER(F90_REAL),
       PERUSETRACE_COMBINER(F90_COMPLEX), PERUSETRACE_COMBINER(F90_INTEGER),
       PERUSETRACE_COMBINER(RESIZED)},
      "UNKNOWN");
}
#undef PERUSETRACE_COMBINER

// Handles MPI_Type_get_contents returns for derived types are the caller's to free; predefined
// ones (named, and the Fortran 90 parameterised types) must not be freed.
bool freeable(MPI_Datatype type) {
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
  return combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL &&
         combiner != MPI_COMBINER_F90_COMPLEX && combiner != MPI_COMBINER_F90_INTEGER;
}

std::string name_of(MPI_Datatype type) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int length = 0;
  PMPI_Type_get_name(type, name, &length);
  return std::string(name, length > 0 ? static_cast<std::size_t>(length) : 0);
}

// A derived type's name as the program gave it. Open MPI names the types it copies "Dup NAME":
// MPI_Type_create_resized's result ("Dup MPI_INT"), and the copies MPI_Type_get_contents returns
// for derived inner types ("Dup column" for the program's "column"). The copy of a type the
// program named is that type; a copy of a predefined one is not the predefined type.
std::string user_name(std::string name) {
  while (name.rfind("Dup ", 0) == 0) name.erase(0, 4);
  return name.rfind("MPI_", 0) == 0 ? std::string() : name;
}

// Every field but the id: two types with the same text are one definition.
std::string text_of(const trace::DatatypeInfo& d) {
  std::string t = d.combiner + '|' + std::to_string(d.size) + '|' + std::to_string(d.lb) + '|' +
                  std::to_string(d.extent) + '|' + std::to_string(d.true_lb) + '|' +
                  std::to_string(d.true_extent) + '|';
  for (std::int64_t v : d.integers) t += std::to_string(v) + ',';
  t += '|';
  for (std::int64_t v : d.addresses) t += std::to_string(v) + ',';
  t += '|';
  for (std::uint32_t v : d.types) t += std::to_string(v) + ',';
  return t + '|' + d.name;
}

}  // namespace

std::uint32_t DatatypeRegistry::first_sight(MPI_Datatype type) noexcept {
  try {
    std::lock_guard lock(g_registration);
    Slot* slot = table_.find(handle_key(type), true);
    if (slot == nullptr) return trace::kNoDatatype;
    std::uint32_t id = slot->id.load(std::memory_order_acquire);
    if (id == trace::kNoDatatype) {  // another thread may have registered it meanwhile
      id = unwrap(type, 0);
      slot->id.store(id, std::memory_order_release);
    }
    return id;
  } catch (...) {  // out of memory: this use goes without its type
    return trace::kNoDatatype;
  }
}

std::uint32_t DatatypeRegistry::unwrap(MPI_Datatype type, int depth) {
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
    return trace::kNoDatatype;
  trace::DatatypeInfo d;
  d.combiner = combiner_name(combiner);
  d.name = name_of(type);
  if (combiner != MPI_COMBINER_NAMED) d.name = user_name(d.name);
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size_x(type, &size);
  PMPI_Type_get_extent_x(type, &lb, &extent);
  PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  d.size = size;
  d.lb = lb;
  d.extent = extent;
  d.true_lb = true_lb;
  d.true_extent = true_extent;
  if (combiner != MPI_COMBINER_NAMED && depth < kMaxDepth) {
    std::vector<int> integers(static_cast<std::size_t>(ni));
    std::vector<MPI_Aint> addresses(static_cast<std::size_t>(na));
    std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
    if (PMPI_Type_get_contents(type, ni, na, nd, integers.data(), addresses.data(), types.data()) ==
        MPI_SUCCESS) {
      d.integers.assign(integers.begin(), integers.end());
      d.addresses.assign(addresses.begin(), addresses.end());
      for (MPI_Datatype inner : types) {
        d.types.push_back(unwrap(inner, depth + 1));
        if (freeable(inner)) PMPI_Type_free(&inner);
      }
    }
  }
  return define(std::move(d));
}

std::uint32_t DatatypeRegistry::define(trace::DatatypeInfo info) {
  const std::string text = text_of(info);
  const auto found = by_text_.find(text);
  if (found != by_text_.end()) return found->second;
  info.local_id = static_cast<std::uint32_t>(infos_.size() + 1);
  journal::note_datatype(info);  // before any record can name it
  by_text_.emplace(text, info.local_id);
  infos_.push_back(std::move(info));
  return infos_.back().local_id;
}

void DatatypeRegistry::forget(MPI_Datatype type) noexcept {
  if (type == MPI_DATATYPE_NULL) return;
  if (Slot* s = table_.find(handle_key(type), false))
    s->id.store(trace::kNoDatatype, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
}

void DatatypeRegistry::renamed(MPI_Datatype type) noexcept {
  forget(type);  // its next use unwraps it again, with the new name
}

std::vector<trace::DatatypeInfo> DatatypeRegistry::snapshot() const {
  std::lock_guard lock(g_registration);
  return infos_;
}

}  // namespace perusetrace
