/* What the platform charges for a timer signal, with an empty handler: a timer signalling this
 * thread every 100 us (as MPITRACE_SAMPLING=100us does) during a fixed amount of arithmetic,
 * against the same arithmetic without it. The sampler's own work per sample is what
 * bench/run_sampling.py measures beyond this. No MPI.
 *   timer_signal_cost [monotonic|cpu|waker]
 * monotonic: a CLOCK_MONOTONIC timer (the sampler's); cpu: a CLOCK_THREAD_CPUTIME_ID timer,
 * which expires only while the thread runs; waker: no signal, another thread on the same core
 * woken every 100 us (what a sampler thread would cost the thread it shares a core with). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long hits;
static void on_signal(int sig) {
  (void)sig;
  hits++;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double work(void) {
  const double t0 = now();
  volatile double x = 1;
  double y = x;
  for (long i = 0; i < 200000000; ++i) y = y * 1.0000001 + 1e-9;
  x = y;
  return now() - t0;
}

static volatile int g_done;
static volatile long wakes;

static void* waker(void* arg) {
  (void)arg;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!g_done) {
    next.tv_nsec += 100000;
    if (next.tv_nsec >= 1000000000) {
      next.tv_nsec -= 1000000000;
      next.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    wakes++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "monotonic";
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof one, &one); /* the waker, created later, inherits it */
  const double base = work();
  if (strcmp(mode, "waker") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, waker, NULL);
    const double with = work();
    g_done = 1;
    pthread_join(t, NULL);
    printf("waker_wake_ns %.0f\n", wakes ? (with - base) / (double)wakes * 1e9 : 0.0);
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGRTMIN + 5, &sa, NULL);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGRTMIN + 5;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  timer_create(strcmp(mode, "cpu") == 0 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ev, &timer);
  const struct itimerspec every = {{0, 100000}, {0, 100000}};
  timer_settime(timer, 0, &every, NULL);
  const double sampled = work();
  printf("empty_signal_ns %.0f signals %ld\n", hits ? (sampled - base) / (double)hits * 1e9 : 0.0,
         hits);
  return 0;
}
