/* Preloaded before libperusetrace, moves CLOCK_MONOTONIC of one rank by a fixed amount, behind
 * the tracer's back: a clock the tracer believes it shares with the other ranks but does not,
 * the situation of two hosts whose offset was measured wrong. Only for the report's test of the
 * clock condition (tests/analysis/report_test.py broken_clock).
 *   CLOCK_SHIFT_RANK=R CLOCK_SHIFT_NS=N   (the rank as Open MPI's launcher numbers it) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec*);
static int shifted = -1;  // unknown until the first call
static long long shift_ns;

int clock_gettime(clockid_t id, struct timespec* ts) {
  if (real_clock_gettime == NULL) {
    void* found = dlsym(RTLD_NEXT, "clock_gettime");
    memcpy(&real_clock_gettime, &found, sizeof found);  // ISO C has no object-to-function cast
  }
  const int rc = real_clock_gettime(id, ts);
  if (shifted < 0) {
    const char* rank = getenv("OMPI_COMM_WORLD_RANK");
    const char* want = getenv("CLOCK_SHIFT_RANK");
    const char* ns = getenv("CLOCK_SHIFT_NS");
    shifted = rank && want && ns && atoi(rank) == atoi(want);
    if (shifted) shift_ns = atoll(ns);
  }
  if (rc == 0 && shifted && id == CLOCK_MONOTONIC) {
    const long long t = ts->tv_sec * 1000000000LL + ts->tv_nsec + shift_ns;
    ts->tv_sec = t / 1000000000LL;
    ts->tv_nsec = t % 1000000000LL;
  }
  return rc;
}
