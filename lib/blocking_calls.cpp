// The program's blocking calls that a caught signal cuts short with EINTR whatever SA_RESTART
// says (signal(7): sleeps, poll/select/epoll waits, semaphore waits, pause and the signal
// waits). While the sampler signals this thread, each of them runs with the sample signal
// blocked, so a sample never changes what the program's call does; the call's time is read
// around it and charged to the call and its caller (sampling::blocking_end), and a signal that
// waited for the call's end finds its time taken. Inside MPI nothing changes: the MPI's own
// polls restart themselves, and cost no more than before.
//
// Calls SA_RESTART restarts (read, write, accept, connect, waitpid, ...) and those that never
// return EINTR (pthread_cond_timedwait, pthread_mutex_lock) are left alone.
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "lib/interposed_symbol.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/sampler.hpp"

namespace perusetrace::blocking {

namespace {

// Blocks the sample signal for the scope when the sampler signals this thread and it is
// outside MPI; `zero_timeout` calls do not wait and are left as they are.
class Quiet {
 public:
  // Inlined into each wrapper, so that a sample taken at the call's end has the wrapper (the
  // blocking call's name) as its innermost frame.
  __attribute__((always_inline)) explicit Quiet(bool zero_timeout = false) noexcept {
    if (zero_timeout || detail::t_mpi_depth != 0 || !sampling::signals_this_thread()) return;
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sampling::signal_number());
    active_ = ::pthread_sigmask(SIG_BLOCK, &only, &saved_) == 0;
    if (active_) sampling::blocking_begin();
  }
  __attribute__((always_inline)) ~Quiet() {
    if (!active_) return;
    const int saved_errno = errno;  // the call's, not the mask's
    sampling::blocking_end();
    ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
    errno = saved_errno;
  }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

  // A call that sets its own mask while it waits (ppoll, pselect, epoll_pwait, sigsuspend)
  // gets the sample signal added to it.
  static const sigset_t* with_sample_signal(const sigset_t* given, sigset_t& copy) noexcept {
    if (given == nullptr || detail::t_mpi_depth != 0 || !sampling::signals_this_thread())
      return given;
    copy = *given;
    sigaddset(&copy, sampling::signal_number());
    return &copy;
  }

 private:
  bool active_ = false;
  sigset_t saved_;
};

bool zero(const timespec* t) noexcept {
  return t != nullptr && t->tv_sec == 0 && t->tv_nsec == 0;
}

}  // namespace

}  // namespace perusetrace::blocking

using perusetrace::blocking::Quiet;
using perusetrace::blocking::zero;

extern "C" {

__attribute__((visibility("default"))) int nanosleep(const timespec* req, timespec* rem) {
  PERUSETRACE_NEXT(nanosleep, int (*)(const timespec*, timespec*));
  Quiet quiet;
  return real(req, rem);
}

__attribute__((visibility("default"))) int clock_nanosleep(clockid_t clock, int flags,
                                                           const timespec* req, timespec* rem) {
  PERUSETRACE_NEXT(clock_nanosleep, int (*)(clockid_t, int, const timespec*, timespec*));
  Quiet quiet;
  return real(clock, flags, req, rem);
}

__attribute__((visibility("default"))) int usleep(useconds_t usec) {
  PERUSETRACE_NEXT(usleep, int (*)(useconds_t));
  Quiet quiet(usec == 0);
  return real(usec);
}

__attribute__((visibility("default"))) unsigned sleep(unsigned seconds) {
  PERUSETRACE_NEXT(sleep, unsigned (*)(unsigned));
  Quiet quiet(seconds == 0);
  return real(seconds);
}

__attribute__((visibility("default"))) int poll(pollfd* fds, nfds_t n, int timeout) {
  PERUSETRACE_NEXT(poll, int (*)(pollfd*, nfds_t, int));
  Quiet quiet(timeout == 0);
  return real(fds, n, timeout);
}

__attribute__((visibility("default"))) int ppoll(pollfd* fds, nfds_t n, const timespec* timeout,
                                                 const sigset_t* mask) {
  PERUSETRACE_NEXT(ppoll, int (*)(pollfd*, nfds_t, const timespec*, const sigset_t*));
  sigset_t copy;
  const sigset_t* own = Quiet::with_sample_signal(mask, copy);
  Quiet quiet(zero(timeout));
  return real(fds, n, timeout, own);
}

__attribute__((visibility("default"))) int select(int n, fd_set* r, fd_set* w, fd_set* e,
                                                  timeval* timeout) {
  PERUSETRACE_NEXT(select, int (*)(int, fd_set*, fd_set*, fd_set*, timeval*));
  Quiet quiet(timeout != nullptr && timeout->tv_sec == 0 && timeout->tv_usec == 0);
  return real(n, r, w, e, timeout);
}

__attribute__((visibility("default"))) int pselect(int n, fd_set* r, fd_set* w, fd_set* e,
                                                   const timespec* timeout, const sigset_t* mask) {
  PERUSETRACE_NEXT(pselect,
                   int (*)(int, fd_set*, fd_set*, fd_set*, const timespec*, const sigset_t*));
  sigset_t copy;
  const sigset_t* own = Quiet::with_sample_signal(mask, copy);
  Quiet quiet(zero(timeout));
  return real(n, r, w, e, timeout, own);
}

__attribute__((visibility("default"))) int epoll_wait(int fd, epoll_event* events, int max,
                                                      int timeout) {
  PERUSETRACE_NEXT(epoll_wait, int (*)(int, epoll_event*, int, int));
  Quiet quiet(timeout == 0);
  return real(fd, events, max, timeout);
}

__attribute__((visibility("default"))) int epoll_pwait(int fd, epoll_event* events, int max,
                                                       int timeout, const sigset_t* mask) {
  PERUSETRACE_NEXT(epoll_pwait, int (*)(int, epoll_event*, int, int, const sigset_t*));
  sigset_t copy;
  const sigset_t* own = Quiet::with_sample_signal(mask, copy);
  Quiet quiet(timeout == 0);
  return real(fd, events, max, timeout, own);
}

__attribute__((visibility("default"))) int sem_wait(sem_t* sem) {
  PERUSETRACE_NEXT(sem_wait, int (*)(sem_t*));
  Quiet quiet;
  return real(sem);
}

__attribute__((visibility("default"))) int sem_timedwait(sem_t* sem, const timespec* deadline) {
  PERUSETRACE_NEXT(sem_timedwait, int (*)(sem_t*, const timespec*));
  Quiet quiet;
  return real(sem, deadline);
}

__attribute__((visibility("default"))) int sem_clockwait(sem_t* sem, clockid_t clock,
                                                         const timespec* deadline) {
  PERUSETRACE_NEXT(sem_clockwait, int (*)(sem_t*, clockid_t, const timespec*));
  Quiet quiet;
  return real(sem, clock, deadline);
}

__attribute__((visibility("default"))) int pause() {
  PERUSETRACE_NEXT(pause, int (*)());
  Quiet quiet;
  return real();
}

__attribute__((visibility("default"))) int sigsuspend(const sigset_t* mask) {
  PERUSETRACE_NEXT(sigsuspend, int (*)(const sigset_t*));
  sigset_t copy;
  const sigset_t* own = Quiet::with_sample_signal(mask, copy);
  Quiet quiet;
  return real(own);
}

__attribute__((visibility("default"))) int sigwaitinfo(const sigset_t* set, siginfo_t* info) {
  PERUSETRACE_NEXT(sigwaitinfo, int (*)(const sigset_t*, siginfo_t*));
  Quiet quiet;
  return real(set, info);
}

__attribute__((visibility("default"))) int sigtimedwait(const sigset_t* set, siginfo_t* info,
                                                        const timespec* timeout) {
  PERUSETRACE_NEXT(sigtimedwait, int (*)(const sigset_t*, siginfo_t*, const timespec*));
  Quiet quiet(zero(timeout));
  return real(set, info, timeout);
}

}  // extern "C"
