#include "lib/loader_lock.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace perusetrace::loader {

namespace {

// The first words of glibc's pthread_mutex_t on x86-64, fixed by its ABI.
struct MutexHead {
  int lock;        // the futex word
  unsigned count;  // recursion depth
  int owner;       // thread id, written after the lock word is taken, cleared before it is freed
  unsigned users;
  int kind;  // PTHREAD_MUTEX_RECURSIVE_NP or not
};

const MutexHead* g_lock = nullptr;
bool g_recursive = false;

struct Search {
  const unsigned char* base;
  std::size_t size;
  pid_t tid;
  const MutexHead* found;
  int matches;
};

int scan_while_held(dl_phdr_info*, std::size_t, void* data) {
  auto& s = *static_cast<Search*>(data);
  for (std::size_t off = 0; off + sizeof(pthread_mutex_t) <= s.size;
       off += alignof(pthread_mutex_t)) {
    const auto* m = reinterpret_cast<const MutexHead*>(s.base + off);
    if (m->lock != 0 && m->owner == s.tid && m->count >= 1) {
      s.found = m;
      ++s.matches;
    }
  }
  return 1;  // one object is enough: the lock is held for the whole walk
}

}  // namespace

bool find_lock(std::string& why) noexcept {
  // ld.so's private globals, where its locks live; dladdr1 gives the symbol's size.
  void* global = ::dlsym(RTLD_DEFAULT, "_rtld_global");
  Dl_info info;
  void* entry = nullptr;
  if (global == nullptr || ::dladdr1(global, &info, &entry, RTLD_DL_SYMENT) == 0 ||
      entry == nullptr || static_cast<const ElfW(Sym)*>(entry)->st_size == 0) {
    why = "the dynamic loader is not glibc's";
    return false;
  }
  Search s{static_cast<const unsigned char*>(global), static_cast<const ElfW(Sym)*>(entry)->st_size,
           ::gettid(), nullptr, 0};
  ::dl_iterate_phdr(scan_while_held, &s);
  // Exactly one mutex held by this thread during the walk, and no longer after it (another
  // thread may have taken it since): that is the lock.
  if (s.matches != 1 || __atomic_load_n(&s.found->owner, __ATOMIC_RELAXED) == s.tid) {
    why = "the lock of glibc's dynamic loader was not found";
    return false;
  }
  g_lock = s.found;
  g_recursive = (s.found->kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP;  // low bits: the type
  return true;
}

bool may_hold_lock(pid_t tid) noexcept {
  if (g_lock == nullptr) return true;
  // The interrupted thread is stopped: what it wrote is what it did. Another thread's moves do
  // not matter: if it holds the lock, the walk waits for it and goes on.
  if (__atomic_load_n(&g_lock->lock, __ATOMIC_RELAXED) == 0) return false;
  const int owner = __atomic_load_n(&g_lock->owner, __ATOMIC_RELAXED);
  // Its owner takes a recursive lock again (a sample inside a dl_iterate_phdr callback).
  return owner == 0 || (owner == tid && !g_recursive);
}

bool holds_lock(pid_t tid) noexcept {
  if (g_lock == nullptr) return true;
  return __atomic_load_n(&g_lock->owner, __ATOMIC_RELAXED) == tid && !g_recursive;
}

}  // namespace perusetrace::loader
