/* MPI_THREAD_MULTIPLE with threads that create and free communicators while others send.
 * THREADS threads on each of 2 ranks; each has a duplicate of MPI_COMM_WORLD made up front (in
 * thread order, so the collectives line up) and in each of CYCLES cycles duplicates and splits
 * it, sends MESSAGES messages on each new communicator (blocking from rank 0 on the dup,
 * nonblocking from rank 1 on the split; tag = thread * 1000 + cycle) and frees both. Rank 0
 * prints the parameters; the trace's ground truth follows from them (tests/common/trace_checks.py).
 * Fails when the MPI does not give MPI_THREAD_MULTIPLE: every MPI the tests run on (Open MPI,
 * MPICH) does, and a skip would hide a build that lost it. With "exit" it ends with exit() instead
 * of MPI_Finalize, leaving the trace to `perusetrace recover`. mpirun -np 2 comm_threads [THREADS]
 * [CYCLES] [MESSAGES] [exit] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxThreads = 64 };

static int rank, cycles, messages;
static MPI_Comm base[kMaxThreads];

static void check(int got, int want, const char* what) {
  if (got != want) {
    fprintf(stderr, "comm_threads: %s: got %d, expected %d\n", what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

static void* work(void* arg) {
  const int t = (int)(long)arg;
  const int peer = 1 - rank;
  for (int c = 0; c < cycles; ++c) {
    const int tag = t * 1000 + c;
    MPI_Comm dup, split;
    MPI_Comm_dup(base[t], &dup);
    MPI_Comm_split(base[t], 0, rank, &split);
    for (int i = 0; i < messages; ++i) {
      int value = tag + i, got = -1;
      if (rank == 0) {
        MPI_Send(&value, 1, MPI_INT, peer, tag, dup);
        MPI_Recv(&got, 1, MPI_INT, peer, tag, split, MPI_STATUS_IGNORE);
      } else {
        MPI_Request requests[2];
        MPI_Irecv(&got, 1, MPI_INT, peer, tag, dup, &requests[0]);
        MPI_Waitall(1, requests, MPI_STATUSES_IGNORE);
        MPI_Isend(&value, 1, MPI_INT, peer, tag, split, &requests[1]);
        MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
      }
      check(got, tag + i, "message value");
    }
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  const int provided = app_init_multiple(&argc, &argv, &rank, &size);
  if (provided != MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      fprintf(stderr,
              "comm_threads: the MPI provides thread level %d, not "
              "MPI_THREAD_MULTIPLE (%d), which this test needs\n",
              provided, MPI_THREAD_MULTIPLE);
    MPI_Finalize();
    return 1;
  }
  const int threads = argc > 1 ? atoi(argv[1]) : 8;
  cycles = argc > 2 ? atoi(argv[2]) : 6;
  messages = argc > 3 ? atoi(argv[3]) : 20;
  if (size != 2 || threads < 1 || threads > kMaxThreads || cycles < 1 || cycles > 999 ||
      messages < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 comm_threads [THREADS 1-%d] [CYCLES 1-999] [MESSAGES]\n",
              kMaxThreads);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &base[t]);
  pthread_t pool[kMaxThreads];
  for (long t = 0; t < threads; ++t) pthread_create(&pool[t], NULL, work, (void*)t);
  for (int t = 0; t < threads; ++t) pthread_join(pool[t], NULL);
  for (int t = 0; t < threads; ++t) MPI_Comm_free(&base[t]);
  if (rank == 0)
    printf("expect threads %d\nexpect cycles %d\nexpect messages %d\n", threads, cycles, messages);
  if (argc > 4 && strcmp(argv[4], "exit") == 0) {
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);  // both ranks done: neither dies while the other still needs it
    exit(0);
  }
  MPI_Finalize();
  return 0;
}
