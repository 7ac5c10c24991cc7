/* A minimal external profiler, preloaded with the traced program: a SIGPROF handler every
 * millisecond of CPU time asks perusetrace for the thread's MPI state through the function it
 * found with dlsym, as the MPI State Profiling proposal has profilers do, and counts the answers.
 * At exit each process prints "state_sampler: not_in_mpi N work N stall N other N". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

typedef int (*state_fn)(void*);
static state_fn query;
static volatile sig_atomic_t counts[4];

static void on_prof(int sig) {
  (void)sig;
  const int state = query(NULL);
  counts[state >= 0 && state <= 2 ? state : 3]++;
}

__attribute__((constructor)) static void start(void) {
  /* POSIX's way from dlsym's void* to a function pointer (ISO C has none). */
  void* found = dlsym(RTLD_DEFAULT, "perusetrace_mpi_state");
  memcpy(&query, &found, sizeof query);
  if (query == NULL) {
    fprintf(stderr, "state_sampler: perusetrace_mpi_state not found\n");
    return;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_prof;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGPROF, &sa, NULL);
  struct itimerval every = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &every, NULL);
}

__attribute__((destructor)) static void stop(void) {
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  if (query != NULL)
    fprintf(stderr, "state_sampler: not_in_mpi %d work %d stall %d other %d\n", (int)counts[0],
            (int)counts[1], (int)counts[2], (int)counts[3]);
}
