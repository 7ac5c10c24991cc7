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
#include "record/clock.hpp"
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
  // The thread's wall time (CLOCK_MONOTONIC ns) is accounted up to `mark`: what was running
  // time and is in no sample yet is `running_owed`, what was spent in blocking calls and is in
  // no sample yet `blocked_owed`. Changed by the handler, and by the thread with the signal
  // blocked; read by whoever ends the thread once it is taken.
  std::uint64_t mark = 0;
  std::uint64_t running_owed = 0;
  std::uint64_t blocked_owed = 0;
  // The last sample, for the time a thread owes when it ends (it is in a blocking call or
  // waiting on a lock: no signal comes, the stack it was last seen with stands for it).
  SampleHeader last{};
  std::uint64_t last_frames[kMaxFrames];
  std::size_t used = 0;
  alignas(8) unsigned char bytes[kBufferBytes];
};

constinit thread_local ThreadSamples* t_samples __attribute__((tls_model("initial-exec"))) =
    nullptr;
std::atomic<ThreadSamples*> g_threads[journal::kMaxThreads];
std::uint64_t g_period_ns = 0;
bool g_wall_clock = false;
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

// Whole periods out of `owed`, the rest kept for the next sample: the weights add up to the
// thread's time to within a period.
std::uint32_t take_periods(std::uint64_t& owed) noexcept {
  const std::uint64_t n = std::min<std::uint64_t>(owed / g_period_ns, 0xffffffffu);
  owed -= n * g_period_ns;
  return static_cast<std::uint32_t>(n);
}

// Moves the wall time since `mark` into `owed`, one of the thread's two accounts; while paused
// (MPI_Pcontrol(0)) that time is dropped, as the samples that would charge it are.
void advance(ThreadSamples& s, std::uint64_t& owed) noexcept {
  const std::uint64_t now = now_ns();
  owed = g_paused.load(std::memory_order_relaxed) ? 0 : owed + (now - s.mark);
  s.mark = now;
}

void append(ThreadSamples& s, const SampleHeader& h, const std::uint64_t* frames) noexcept {
  const std::size_t bytes = sizeof h + sizeof frames[0] * h.frames;
  if (s.used + bytes > kBufferBytes) write_out(s);
  std::memcpy(s.bytes + s.used, &h, sizeof h);
  std::memcpy(s.bytes + s.used + sizeof h, frames, sizeof frames[0] * h.frames);
  s.used += bytes;
}

// A sample of the calling thread's state and stack, `own` innermost frames being the
// sampler's (inlined, so that they are its callers' frames only); s.busy is held.
__attribute__((always_inline)) inline void take(ThreadSamples& s, std::uint32_t weight,
                                                std::uint8_t own, bool interrupted) noexcept {
  const state::Classified c = state::classify(detail::t_mpi_depth);
  void* frames[kMaxFrames];
  // libunwind walks through the signal frame into the interrupted code, with its per-thread
  // cache of unwind tables (no lock, no allocation once warm). glibc's backtrace cost 26 us a
  // sample (docs/performance.md, Sampling): it looks up every frame's unwind table afresh.
  // Not while this thread may hold the dynamic loader's lock: the walk would wait for it. A
  // signal may have stopped the thread inside the lock's own instructions; a wait's own sample
  // cannot, and would lose its stack to any other thread taking the lock meanwhile.
  const bool lock_in_the_way =
      interrupted ? loader::may_hold_lock(s.tid) : loader::holds_lock(s.tid);
  const int n = g_walk_stacks && !lock_in_the_way ? unw_backtrace(frames, kMaxFrames) : 0;
  SampleHeader& h = s.last;
  h = SampleHeader{};
  h.time = now_ticks();
  h.weight = weight;
  h.fn = c.fn;
  h.frames = static_cast<std::uint16_t>(n);
  h.state = static_cast<std::uint8_t>(c.state);
  h.activity = static_cast<std::uint8_t>(c.activity);
  h.own_frames = own;
  h.interrupted = interrupted ? 1 : 0;
  for (int i = 0; i < n; ++i) s.last_frames[i] = reinterpret_cast<std::uint64_t>(frames[i]);
  append(s, h, s.last_frames);
}

void on_sample(int, siginfo_t*, void*) {
  ThreadSamples* s = t_samples;
  if (s == nullptr || s->busy.exchange(true, std::memory_order_acquire)) return;
  const int saved_errno = errno;
  advance(*s, s->running_owed);
  // A signal held back by a blocking call comes right after it: the call's sample has the
  // time, and there is less than a period left for this one.
  const std::uint32_t weight = take_periods(s->running_owed);
  if (weight != 0) take(*s, weight, 2, true);  // this handler, then the kernel's signal trampoline
  errno = saved_errno;
  s->busy.store(false, std::memory_order_release);
}

void finish(std::uint32_t index) noexcept {
  ThreadSamples* s = g_threads[index].exchange(nullptr);
  if (s == nullptr) return;
  if (s->has_timer) ::timer_delete(s->timer);
  // A signal already on its way finds the buffer taken and drops its sample.
  while (s->busy.exchange(true, std::memory_order_acquire)) sched_yield();
  // What the thread owes since its last sample goes to the stack it was last seen with (a
  // thread that ends waiting has had no signal since it began to wait).
  if (!g_paused.load(std::memory_order_relaxed)) {
    s->running_owed += now_ns() - s->mark + s->blocked_owed;
    s->blocked_owed = 0;
    const std::uint32_t weight = take_periods(s->running_owed);
    if (weight != 0) {
      SampleHeader h = s->last;
      if (h.weight == 0) {  // no sample yet: the thread's state is not known, nor its stack
        h.frames = 0;
        h.state = static_cast<std::uint8_t>(state::State::NotInMpi);
      }
      h.time = now_ticks();
      h.weight = weight;
      append(*s, h, s->last_frames);
    }
  }
  write_out(*s);
  ::close(s->fd);
  // The thread-local pointer may still name it: the buffer stays, taken for good.
}

}  // namespace

// `busy` keeps out the handler (a wait the kernel restarts runs with the signal open: a sample
// it takes meanwhile has the wait's stack, and the time since `mark`) and whoever ends the
// thread from another thread. Not inlined: with the blocking call's wrapper, its frame is one of
// the two own frames of the samples it takes.
__attribute__((noinline)) void blocking_begin() noexcept {
  ThreadSamples* s = t_samples;
  if (s == nullptr || s->busy.exchange(true, std::memory_order_acquire)) return;
  advance(*s, s->running_owed);
  // Running time no tick has sampled (a CPU-time timer is checked at the scheduler's tick:
  // bursts between waits go unseen) is charged to the code that makes this call, the caller of
  // its wrapper, rather than to wherever a tick finds the thread later.
  if (s->running_owed >= g_period_ns) take(*s, take_periods(s->running_owed), 2, false);
  s->busy.store(false, std::memory_order_release);
}

// Not inlined: its frame is the one own frame of the samples it takes, whose innermost frame
// is then the blocking call's wrapper.
__attribute__((noinline)) void blocking_end() noexcept {
  ThreadSamples* s = t_samples;
  if (s == nullptr || s->busy.exchange(true, std::memory_order_acquire)) return;
  advance(*s, s->blocked_owed);
  // Calls shorter than a period add up until they make one: the call that completes it takes
  // the sample, as a clock ticking only in blocking calls would pick it.
  if (s->blocked_owed >= g_period_ns) take(*s, take_periods(s->blocked_owed), 1, false);
  s->busy.store(false, std::memory_order_release);
}

bool configure(std::uint64_t period_ns, bool wall_clock, std::string& error, std::string& notice) {
  g_period_ns = period_ns;
  g_wall_clock = wall_clock;
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
  // A CPU-time timer expires only while its thread runs, checked at the scheduler's tick: a
  // thread waiting off its core costs nothing, and its time is found from the wall clock when
  // it runs again. The wall clock's timer expires every period whatever the thread does.
  s->has_timer =
      ::timer_create(g_wall_clock ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ev, &s->timer) == 0;
  s->mark = now_ns();
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
bool wall_clock() noexcept {
  return g_wall_clock;
}

}  // namespace perusetrace::sampling
