/* What the test programs of tests/apps/ share: the clock and busy work outside MPI, the start of
 * a run (integer options, MPI_Init, this rank, the world's size, the ranks or thread level a
 * program needs) and a two-rank round trip. Include it first, as "tests/apps/app_util.h"
 * (tests/meson.build gives the programs the project's root): it asks for POSIX 2008 (clock_gettime,
 * getopt, access) under -std=c11. Everything here is static inline, so a program uses what it
 * needs. */
#ifndef PERUSETRACE_TESTS_APPS_APP_UTIL_H
#define PERUSETRACE_TESTS_APPS_APP_UTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Seconds on CLOCK_MONOTONIC: not MPI_Wtime, which a sampler sees as a call into MPI. */
static inline double app_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* SECONDS of busy computation outside MPI (no sleep: a sampler or a scheduler sees it as the
 * program's own work). */
static inline void app_busy(double seconds) {
  const double until = app_now() + seconds;
  while (app_now() < until) {
  }
}

/* Integer options -L VALUE: for the I-th letter of LETTERS, -LETTER's value goes to VALUES[I]
 * (left as it is when the option is not given). Returns 0, or 2 after printing "usage: USAGE"
 * for anything else. Call it before MPI_Init. */
static inline int app_int_options(int argc, char** argv, const char* letters, int* values,
                                  const char* usage) {
  char spec[64]; /* "i:n:" for "in" */
  size_t n = 0;
  for (const char* l = letters; *l && n + 2 < sizeof spec; ++l) {
    spec[n++] = *l;
    spec[n++] = ':';
  }
  spec[n] = '\0';
  for (int opt; (opt = getopt(argc, argv, spec)) != -1;) {
    const char* at = opt == ':' || opt == '?' ? NULL : strchr(letters, opt);
    if (at == NULL) {
      fprintf(stderr, "usage: %s\n", usage);
      return 2;
    }
    values[at - letters] = atoi(optarg);
  }
  return 0;
}

/* MPI_Init, then this rank and the size of MPI_COMM_WORLD (either may be NULL). */
static inline void app_init(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  if (rank) MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (size) MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE, then this rank and the world's size (either
 * may be NULL). Returns the thread level the MPI provides. */
static inline int app_init_multiple(int* argc, char*** argv, int* rank, int* size) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (rank) MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (size) MPI_Comm_size(MPI_COMM_WORLD, size);
  return provided;
}

/* Unless OK, rank 0 prints "PROGRAM: WHY" and the run ends with MPI_Abort(2): a program started
 * on the wrong number of ranks or with bad arguments. */
static inline void app_require(int ok, const char* program, const char* why) {
  if (ok) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) fprintf(stderr, "%s: %s\n", program, why);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One round trip on MPI_COMM_WORLD between ranks 0 and 1: rank 0 sends *OUT with TAG and
 * receives the answer into *BACK with tag REPLY; rank 1 receives into *BACK with TAG and sends
 * *BACK back with REPLY. Other ranks do nothing. */
static inline void app_round_trip(int rank, const int* out, int* back, int tag, int reply) {
  if (rank == 0) {
    MPI_Send(out, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
    MPI_Recv(back, 1, MPI_INT, 1, reply, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(back, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(back, 1, MPI_INT, 0, reply, MPI_COMM_WORLD);
  }
}

#endif
