#include "lib/fortran_args.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

// The MPI's Fortran sentinels: common blocks (mpif.h) or BIND(C) variables (mpi_f08) named as
// the Fortran compiler mangles names, so an Open MPI build defines one of four spellings. Weak:
// an MPI without them leaves them null, and they are left out.
extern "C" {
#define PERUSETRACE_FORTRAN_SENTINEL(name, NAME)  \
  extern MPI_Fint name __attribute__((weak));     \
  extern MPI_Fint name##_ __attribute__((weak));  \
  extern MPI_Fint name##__ __attribute__((weak)); \
  extern MPI_Fint NAME __attribute__((weak));
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_bottom, MPI_FORTRAN_BOTTOM)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_in_place, MPI_FORTRAN_IN_PLACE)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_status_ignore, MPI_FORTRAN_STATUS_IGNORE)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_statuses_ignore, MPI_FORTRAN_STATUSES_IGNORE)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_unweighted, MPI_FORTRAN_UNWEIGHTED)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_weights_empty, MPI_FORTRAN_WEIGHTS_EMPTY)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_argv_null, MPI_FORTRAN_ARGV_NULL)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_argvs_null, MPI_FORTRAN_ARGVS_NULL)
PERUSETRACE_FORTRAN_SENTINEL(mpi_fortran_errcodes_ignore, MPI_FORTRAN_ERRCODES_IGNORE)
#undef PERUSETRACE_FORTRAN_SENTINEL
}

namespace perusetrace::fortran {

Sentinels g_sentinels;

namespace {

#define PERUSETRACE_SPELLINGS(name, NAME) \
  { &name, &name##_, &name##__, &NAME }

void keep_defined(Sentinel& sentinel, std::initializer_list<const MPI_Fint*> spellings) {
  for (const MPI_Fint* p : spellings)
    if (p != nullptr) sentinel.at[sentinel.n++] = p;
}

// Once, as the library loads (weak references are resolved by then): the spellings the
// process defines, so that a check compares with one address, not four.
__attribute__((constructor)) void find_sentinels() {
  Sentinels& s = g_sentinels;
  keep_defined(s.bottom, PERUSETRACE_SPELLINGS(mpi_fortran_bottom, MPI_FORTRAN_BOTTOM));
  keep_defined(s.in_place, PERUSETRACE_SPELLINGS(mpi_fortran_in_place, MPI_FORTRAN_IN_PLACE));
  keep_defined(s.status_ignore,
               PERUSETRACE_SPELLINGS(mpi_fortran_status_ignore, MPI_FORTRAN_STATUS_IGNORE));
  keep_defined(s.statuses_ignore,
               PERUSETRACE_SPELLINGS(mpi_fortran_statuses_ignore, MPI_FORTRAN_STATUSES_IGNORE));
  keep_defined(s.unweighted, PERUSETRACE_SPELLINGS(mpi_fortran_unweighted, MPI_FORTRAN_UNWEIGHTED));
  keep_defined(s.weights_empty,
               PERUSETRACE_SPELLINGS(mpi_fortran_weights_empty, MPI_FORTRAN_WEIGHTS_EMPTY));
  keep_defined(s.argv_null, PERUSETRACE_SPELLINGS(mpi_fortran_argv_null, MPI_FORTRAN_ARGV_NULL));
  keep_defined(s.argvs_null, PERUSETRACE_SPELLINGS(mpi_fortran_argvs_null, MPI_FORTRAN_ARGVS_NULL));
  keep_defined(s.errcodes_ignore,
               PERUSETRACE_SPELLINGS(mpi_fortran_errcodes_ignore, MPI_FORTRAN_ERRCODES_IGNORE));
}

#undef PERUSETRACE_SPELLINGS

// The room of Scratch: one per thread, grown when a call needs more and kept. A call whose
// arrays outgrow it in the middle keeps the block it outgrew until it ends (its earlier
// arguments live there).
struct Room {
  char* block = nullptr;
  std::size_t capacity = 0;
  char* retired[4] = {};
  ~Room() { std::free(block); }
};
thread_local Room t_room;

constexpr std::size_t kFirstRoom = 4096;
constexpr std::size_t kAlign = alignof(std::max_align_t);

}  // namespace

const int* weights(const MPI_Fint* weights) noexcept {
  if (g_sentinels.unweighted.is(weights)) return MPI_UNWEIGHTED;
  if (g_sentinels.weights_empty.is(weights)) return MPI_WEIGHTS_EMPTY;
  return weights;
}

int* errcodes(MPI_Fint* codes) noexcept {
  return g_sentinels.errcodes_ignore.is(codes) ? MPI_ERRCODES_IGNORE : codes;
}

bool is_root(MPI_Comm comm, int root) noexcept {
  int rank = -1;
  return comm != MPI_COMM_NULL && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

int alltoallw_peers(MPI_Comm comm) noexcept {
  int inter = 0, n = 0;
  if (comm == MPI_COMM_NULL) return 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_size(comm, &n);
  else
    PMPI_Comm_size(comm, &n);
  return n;
}

int neighbours(MPI_Comm comm, bool outgoing) noexcept {
  int topology = MPI_UNDEFINED, n = 0;
  if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topology) != MPI_SUCCESS) return 0;
  if (topology == MPI_CART) {
    PMPI_Cartdim_get(comm, &n);
    return 2 * n;
  }
  if (topology == MPI_GRAPH) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    return n;
  }
  if (topology == MPI_DIST_GRAPH) {
    int in = 0, out = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
    return outgoing ? out : in;
  }
  return 0;
}

Scratch::Scratch() noexcept : used_(0) {}

Scratch::~Scratch() noexcept {
  for (char*& old : t_room.retired) {
    std::free(old);
    old = nullptr;
  }
}

void* Scratch::bytes(std::size_t n) noexcept {
  n = (n + kAlign - 1) / kAlign * kAlign;
  if (used_ + n > t_room.capacity) {
    std::size_t capacity = t_room.capacity ? 2 * t_room.capacity : kFirstRoom;
    while (capacity < n) capacity *= 2;
    char* grown = static_cast<char*>(std::malloc(capacity));
    if (grown == nullptr) return nullptr;
    if (t_room.block != nullptr && used_ == 0) {
      std::free(t_room.block);
    } else if (t_room.block != nullptr) {
      // The call's earlier arguments live in the block it outgrew: freed when the call ends.
      char** slot = nullptr;
      for (char*& old : t_room.retired)
        if (old == nullptr) slot = &old;
      if (slot == nullptr) {  // more arrays in one call than any MPI function takes
        std::free(grown);
        return nullptr;
      }
      *slot = t_room.block;
    }
    t_room.block = grown;
    t_room.capacity = capacity;
    used_ = 0;
  }
  void* p = t_room.block + used_;
  used_ += n;
  return p;
}

const char* Scratch::c_string(const char* f, std::size_t length) noexcept {
  while (length > 0 && f[0] == ' ') ++f, --length;
  while (length > 0 && f[length - 1] == ' ') --length;
  char* c = take<char>(length + 1);
  if (c == nullptr) return "";
  std::memcpy(c, f, length);
  c[length] = '\0';
  return c;
}

char** Scratch::argv(const char* f, std::size_t length, std::size_t stride) noexcept {
  auto blank = [length](const char* entry) {
    for (std::size_t i = 0; i < length; ++i)
      if (entry[i] != ' ') return false;
    return true;
  };
  std::size_t n = 0;
  while (!blank(f + n * stride)) ++n;
  char** c = take<char*>(n + 1);
  if (c == nullptr) return nullptr;
  for (std::size_t i = 0; i < n; ++i) {
    const char* entry = c_string(f + i * stride, length);
    if (*entry == '\0' && length > 0) return nullptr;  // c_string ran out of room
    c[i] = const_cast<char*>(entry);
  }
  c[n] = nullptr;
  return c;
}

void no_memory(MPI_Fint* ierr) noexcept {
  if (ierr != nullptr) *ierr = MPI_ERR_NO_MEM;
}

void missing(const char* symbol, MPI_Fint* ierr) noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "perusetrace: this MPI has no Fortran profiling entry %s, which Open MPI "
                 "provides; the call fails with MPI_ERR_INTERN. Trace Fortran programs with "
                 "Open MPI, or unset LD_PRELOAD to run untraced.\n",
                 symbol);
  if (ierr != nullptr) *ierr = MPI_ERR_INTERN;
}

}  // namespace perusetrace::fortran
