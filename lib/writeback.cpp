#include "lib/writeback.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>

#include "lib/thread_buffer.hpp"

namespace perusetrace::writeback {

namespace {

pthread_t g_thread;
bool g_running = false;
std::atomic<int> g_stop{0};  // the futex the thread sleeps on
std::uint64_t g_period_ns = 0;

// A futex, not a sleep or a condition variable: the library interposes those (for the
// sampler), and this thread is not the program's.
void* run(void*) {
  for (;;) {
    timespec wait{static_cast<time_t>(g_period_ns / 1'000'000'000),
                  static_cast<long>(g_period_ns % 1'000'000'000)};
    ::syscall(SYS_futex, reinterpret_cast<int*>(&g_stop), FUTEX_WAIT_PRIVATE, 0, &wait, nullptr, 0);
    if (g_stop.load() != 0) return nullptr;
    write_through_buffers();
  }
}

}  // namespace

void start(std::uint64_t period_ns) noexcept {
  if (period_ns == 0 || g_running) return;
  g_period_ns = period_ns;
  // The program's signals (and the sampler's) go to its own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_running = pthread_create(&g_thread, nullptr, run, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!g_running)
    std::fprintf(stderr,
                 "perusetrace: cannot start the writeback thread (MPITRACE_WRITEBACK); the "
                 "kernel writes the journal back when it will.\n");
}

void stop() noexcept {
  if (!g_running) return;
  g_stop.store(1);
  ::syscall(SYS_futex, reinterpret_cast<int*>(&g_stop), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  pthread_join(g_thread, nullptr);
  g_running = false;
}

}  // namespace perusetrace::writeback
