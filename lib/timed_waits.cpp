// Waits that a sample signal does not cut short (the kernel restarts them, or they never return
// EINTR) but that a CPU-time sampler cannot see: a thread waiting in them is off its core and
// takes no sample. Outside MPI, on a thread the sampler follows, each is timed and its time
// charged to the call and its caller (sampling::blocking_begin/end), as the sleeps of
// lib/blocking_calls.cpp are; otherwise it would go to wherever the thread is when it next runs
// a tick (a thread that waits in pthread_join and then calls MPI_Reduce would show the join as
// time in MPI). A wait not in this list (a contended mutex, a futex of the program's own) is
// charged that way. The timing is two clock reads: nothing when the sampler is off.
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "lib/interposed_symbol.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/sampler.hpp"

namespace perusetrace::blocking {

namespace {

class Timed {
 public:
  // Inlined into each wrapper: a sample taken at the call's end has the wrapper (the call's
  // name) as its innermost frame.
  __attribute__((always_inline)) Timed() noexcept {
    if (detail::t_mpi_depth != 0 || !sampling::signals_this_thread()) return;
    active_ = true;
    sampling::blocking_begin();
  }
  __attribute__((always_inline)) ~Timed() {
    if (!active_) return;
    const int saved_errno = errno;
    sampling::blocking_end();
    errno = saved_errno;
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  bool active_ = false;
};

}  // namespace

}  // namespace perusetrace::blocking

using perusetrace::blocking::Timed;

extern "C" {

__attribute__((visibility("default"))) int pthread_join(pthread_t thread, void** result) {
  PERUSETRACE_NEXT(pthread_join, int (*)(pthread_t, void**));
  Timed timed;
  return real(thread, result);
}

__attribute__((visibility("default"))) int pthread_cond_wait(pthread_cond_t* cond,
                                                             pthread_mutex_t* mutex) {
  PERUSETRACE_NEXT(pthread_cond_wait, int (*)(pthread_cond_t*, pthread_mutex_t*));
  Timed timed;
  return real(cond, mutex);
}

__attribute__((visibility("default"))) int pthread_cond_timedwait(pthread_cond_t* cond,
                                                                  pthread_mutex_t* mutex,
                                                                  const timespec* deadline) {
  PERUSETRACE_NEXT(pthread_cond_timedwait,
                   int (*)(pthread_cond_t*, pthread_mutex_t*, const timespec*));
  Timed timed;
  return real(cond, mutex, deadline);
}

__attribute__((visibility("default"))) int pthread_barrier_wait(pthread_barrier_t* barrier) {
  PERUSETRACE_NEXT(pthread_barrier_wait, int (*)(pthread_barrier_t*));
  Timed timed;
  return real(barrier);
}

__attribute__((visibility("default"))) ssize_t read(int fd, void* buffer, size_t bytes) {
  PERUSETRACE_NEXT(read, ssize_t(*)(int, void*, size_t));
  Timed timed;
  return real(fd, buffer, bytes);
}

__attribute__((visibility("default"))) int accept(int fd, sockaddr* address, socklen_t* length) {
  PERUSETRACE_NEXT(accept, int (*)(int, sockaddr*, socklen_t*));
  Timed timed;
  return real(fd, address, length);
}

__attribute__((visibility("default"))) int accept4(int fd, sockaddr* address, socklen_t* length,
                                                   int flags) {
  PERUSETRACE_NEXT(accept4, int (*)(int, sockaddr*, socklen_t*, int));
  Timed timed;
  return real(fd, address, length, flags);
}

__attribute__((visibility("default"))) ssize_t recv(int fd, void* buffer, size_t bytes, int flags) {
  PERUSETRACE_NEXT(recv, ssize_t(*)(int, void*, size_t, int));
  Timed timed;
  return real(fd, buffer, bytes, flags);
}

__attribute__((visibility("default"))) pid_t waitpid(pid_t pid, int* status, int options) {
  PERUSETRACE_NEXT(waitpid, pid_t(*)(pid_t, int*, int));
  Timed timed;
  return real(pid, status, options);
}

}  // extern "C"
