#include "lib/sampler.hpp"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <dlfcn.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "lib/journal.hpp"
#include "lib/loader_lock.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/mpi_state.hpp"
#include "lib/sample_file.hpp"
#include "record/journal_format.hpp"

namespace perusetrace::sampling {

namespace {

// A real-time signal of its own: SIGPROF stays the program's (or its profiler's). Real-time
// signals queue, so a sample is not lost to one still pending.
int sample_signal() {
  return SIGRTMIN + 5;
}

constexpr std::size_t kBufferBytes = 64 << 10;  // about 250 deep samples between writes

struct ThreadSamples {
  // Taken by the handler, and by whoever writes the buffer out at the end; never waited for.
  std::atomic<bool> busy{false};
  int fd = -1;
  pid_t tid = 0;
  timer_t timer{};
  bool has_timer = false;
  std::size_t used = 0;
  alignas(8) unsigned char bytes[kBufferBytes];
};

constinit thread_local ThreadSamples* t_samples __attribute__((tls_model("initial-exec"))) =
    nullptr;
std::atomic<ThreadSamples*> g_threads[journal::kMaxThreads];
std::uint64_t g_period_ns = 0;
std::atomic<bool> g_paused{false};
std::atomic<bool> g_stopped{false};
// ThreadSanitizer runs a signal handler later, from its own code, where libunwind's walk
// crashes: under it the samples keep their states, without stacks.
bool g_walk_stacks = true;

void write_out(ThreadSamples& s) noexcept {
  std::size_t done = 0;
  while (done < s.used) {
    const ssize_t n = ::write(s.fd, s.bytes + done, s.used - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // a full disk: these samples are lost, the program goes on
    done += static_cast<std::size_t>(n);
  }
  s.used = 0;
}

void on_sample(int, siginfo_t*, void*) {
  ThreadSamples* s = t_samples;
  if (s == nullptr || g_paused.load(std::memory_order_relaxed) ||
      s->busy.exchange(true, std::memory_order_acquire))
    return;
  const int saved_errno = errno;
  const state::Classified c = state::classify(detail::t_mpi_depth);
  void* frames[kMaxFrames];
  // libunwind walks through the signal frame into the interrupted code, with its per-thread
  // cache of unwind tables (no lock, no allocation once warm). glibc's backtrace cost 26 us a
  // sample (docs/performance.md, Sampling): it looks up every frame's unwind table afresh.
  // Not while this thread may hold the dynamic loader's lock: the walk would wait for it.
  const int n =
      g_walk_stacks && !loader::may_hold_lock(s->tid) ? unw_backtrace(frames, kMaxFrames) : 0;
  const std::uint64_t time = now_ticks();
  const std::size_t bytes = sizeof(SampleHeader) + sizeof(std::uint64_t) * n;
  if (s->used + bytes > kBufferBytes) write_out(*s);
  // Expirations while this signal was pending are periods the thread was not sampled in; the
  // state it has now stands for them (without this, a loaded machine would lose them).
  const int overruns = s->has_timer ? ::timer_getoverrun(s->timer) : 0;
  const auto weight = static_cast<std::uint16_t>(std::clamp(overruns, 0, 65534) + 1);
  SampleHeader h{time,
                 static_cast<std::uint8_t>(c.state),
                 static_cast<std::uint8_t>(c.activity),
                 c.fn,
                 static_cast<std::uint16_t>(n),
                 weight};  // this handler, then the kernel's signal trampoline
  std::memcpy(s->bytes + s->used, &h, sizeof h);
  for (int i = 0; i < n; ++i) {
    const auto pc = reinterpret_cast<std::uint64_t>(frames[i]);
    std::memcpy(s->bytes + s->used + sizeof h + sizeof pc * i, &pc, sizeof pc);
  }
  s->used += bytes;
  errno = saved_errno;
  s->busy.store(false, std::memory_order_release);
}

void finish(std::uint32_t index) noexcept {
  ThreadSamples* s = g_threads[index].exchange(nullptr);
  if (s == nullptr) return;
  if (s->has_timer) ::timer_delete(s->timer);
  // A signal already on its way finds the buffer taken and drops its sample.
  while (s->busy.exchange(true, std::memory_order_acquire)) sched_yield();
  write_out(*s);
  ::close(s->fd);
  // The thread-local pointer may still name it: the buffer stays, taken for good.
}

}  // namespace

bool configure(std::uint64_t period_ns, std::string& error, std::string& notice) {
  g_period_ns = period_ns;
  if (period_ns == 0) return true;
  g_walk_stacks = ::dlsym(RTLD_DEFAULT, "__tsan_init") == nullptr;
  std::string why;
  if (g_walk_stacks && !loader::find_lock(why)) {
    g_walk_stacks = false;
    notice = "samples are taken without their stacks (" + why +
             "): walking a stack while the program loads a library could hang it";
  }
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  void* warm[4];
  unw_backtrace(warm, 4);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(sample_signal(), &sa, nullptr) != 0) {
    error = std::string("cannot take signal SIGRTMIN+5 for sampling: ") + std::strerror(errno);
    g_period_ns = 0;
    return false;
  }
  return true;
}

void start_thread(std::uint32_t index) noexcept {
  if (g_period_ns == 0 || index >= journal::kMaxThreads) return;
  auto* s = new (std::nothrow) ThreadSamples;
  if (s == nullptr) return;
  s->fd = journal::open_samples(index);
  if (s->fd < 0) {
    delete s;
    return;
  }
  // libunwind sets up this thread's caches on its first walk (memory, a pthread key's value):
  // here, not in the first sample's handler, which may have interrupted malloc.
  if (g_walk_stacks) {
    void* warm[4];
    unw_backtrace(warm, 4);
  }
  struct sigevent ev;
  std::memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = sample_signal();
  s->tid = ::gettid();
  ev._sigev_un._tid = s->tid;
  s->has_timer = ::timer_create(CLOCK_MONOTONIC, &ev, &s->timer) == 0;
  t_samples = s;
  g_threads[index].store(s);
  if (s->has_timer) {
    struct itimerspec every;
    every.it_interval.tv_sec = static_cast<time_t>(g_period_ns / 1'000'000'000);
    every.it_interval.tv_nsec = static_cast<long>(g_period_ns % 1'000'000'000);
    every.it_value = every.it_interval;
    ::timer_settime(s->timer, 0, &every, nullptr);
  }
}

void stop_thread(std::uint32_t index) noexcept {
  if (index < journal::kMaxThreads) finish(index);
}

void stop_all() noexcept {
  g_stopped.store(true, std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < journal::kMaxThreads; ++i)
    if (g_threads[i].load(std::memory_order_relaxed) != nullptr) finish(i);
}

void pause(bool paused) noexcept {
  g_paused.store(paused);
}

bool enabled() noexcept {
  return g_period_ns != 0;
}
bool signals_this_thread() noexcept {
  const ThreadSamples* s = t_samples;
  return s != nullptr && s->has_timer && !g_stopped.load(std::memory_order_relaxed);
}
int signal_number() noexcept {
  return sample_signal();
}
std::uint64_t period_ns() noexcept {
  return g_period_ns;
}

}  // namespace perusetrace::sampling
