/* What the platform charges for a timer signal, with an empty handler: a CLOCK_MONOTONIC timer
 * signalling this thread every 100 us (as MPITRACE_SAMPLING=100us does) during a fixed amount
 * of arithmetic, against the same arithmetic without it. The sampler's own work per sample is
 * what bench/run_sampling.py measures beyond this. No MPI. */
#define _GNU_SOURCE
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

int main(void) {
  const double base = work();
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
  timer_create(CLOCK_MONOTONIC, &ev, &timer);
  const struct itimerspec every = {{0, 100000}, {0, 100000}};
  timer_settime(timer, 0, &every, NULL);
  const double sampled = work();
  printf("empty_signal_ns %.0f\n", hits ? (sampled - base) / (double)hits * 1e9 : 0.0);
  return 0;
}
