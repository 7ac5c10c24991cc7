// What the generated Fortran wrappers (lib/wrappers/fortran.py) need to turn a Fortran call's
// arguments into the C call's: the MPI's Fortran sentinels (MPI_BOTTOM, MPI_IN_PLACE,
// MPI_STATUS_IGNORE, ...), blank-padded strings, and room for arrays of handles and statuses.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace perusetrace::fortran {

// A Fortran INTEGER is passed where C has an int (counts, ranks, tags, arrays of them): the
// wrappers hand the Fortran storage to C as it is.
static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER must be a C int");

// A Fortran status is MPI_Status's bytes seen as INTEGERs (Open MPI's MPI_STATUS_SIZE).
inline constexpr std::size_t kStatusInts = sizeof(MPI_Status) / sizeof(MPI_Fint);

// The MPI's Fortran sentinels (MPI_BOTTOM, MPI_STATUS_IGNORE, ...): addresses of its common
// blocks, in the spellings of Fortran's name manglings the process defines, found once as the
// library loads. A Fortran argument is a sentinel when its address is one of them.
struct Sentinel {
  const void* at[4] = {};
  int n = 0;
  bool is(const void* p) const noexcept {
    for (int i = 0; i < n; ++i)
      if (p == at[i]) return true;
    return false;
  }
};
struct Sentinels {
  Sentinel bottom, in_place, status_ignore, statuses_ignore, unweighted, weights_empty, argv_null,
      argvs_null, errcodes_ignore;
};
extern Sentinels g_sentinels;

// A buffer given from Fortran: MPI_BOTTOM and MPI_IN_PLACE become the C values.
inline void* buffer(void* address) noexcept {
  if (g_sentinels.bottom.is(address)) return MPI_BOTTOM;
  if (g_sentinels.in_place.is(address)) return MPI_IN_PLACE;
  return address;
}
inline const void* buffer(const void* address) noexcept {
  return buffer(const_cast<void*>(address));
}
inline bool status_ignored(const MPI_Fint* status) noexcept {
  return g_sentinels.status_ignore.is(status);
}
inline bool statuses_ignored(const MPI_Fint* statuses) noexcept {
  return g_sentinels.statuses_ignore.is(statuses);
}
inline bool argv_null(const char* argv) noexcept {
  return g_sentinels.argv_null.is(argv);
}
inline bool argvs_null(const char* argvs) noexcept {
  return g_sentinels.argvs_null.is(argvs);
}
// MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY of the distributed graph constructors.
const int* weights(const MPI_Fint* weights) noexcept;
// MPI_ERRCODES_IGNORE of the spawns.
int* errcodes(MPI_Fint* codes) noexcept;
// Whether this rank is a spawn's root (the only one whose commands and arguments count).
bool is_root(MPI_Comm comm, int root) noexcept;

// How many datatypes an MPI_(I)alltoallw names on `comm` (its remote group's size on an
// intercommunicator), and an MPI_(I)neighbor_alltoallw's in- or out-degree.
int alltoallw_peers(MPI_Comm comm) noexcept;
int neighbours(MPI_Comm comm, bool outgoing) noexcept;

// Room for one call's converted arguments, per thread: a block that grows when a call needs
// more and is kept, so a thread's calls stop allocating once it has made its largest.
// The wrappers do not nest on a thread (a Fortran wrapper calls the C wrapper, which calls
// PMPI), so a call takes the room from the start.
class Scratch {
 public:
  Scratch() noexcept;
  ~Scratch() noexcept;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // n objects of T, uninitialised; nullptr only if memory ran out (the caller then fails the
  // call with MPI_ERR_NO_MEM rather than write past the room).
  template <typename T>
  T* take(std::size_t n) noexcept {
    return static_cast<T*>(bytes(n * sizeof(T)));
  }
  // A Fortran string (blank-padded, `length` characters) as a C string, without its leading
  // and trailing blanks.
  const char* c_string(const char* f, std::size_t length) noexcept;
  // A Fortran argument vector, CHARACTER(len=length) entries `stride` bytes apart ended by a
  // blank one, as C's ended by a null pointer; nullptr if out of memory.
  char** argv(const char* f, std::size_t length, std::size_t stride) noexcept;

 private:
  void* bytes(std::size_t n) noexcept;
  std::size_t used_;
};

// A call whose converted arguments found no memory fails with MPI_ERR_NO_MEM, uncalled.
void no_memory(MPI_Fint* ierr) noexcept;

// A wrapper whose MPI has no Fortran profiling symbol to call (an MPI whose Fortran bindings
// differ from Open MPI's): says so once on stderr, and the call fails with MPI_ERR_INTERN.
void missing(const char* symbol, MPI_Fint* ierr) noexcept;

}  // namespace perusetrace::fortran
