/* What MPI_Finalize costs a traced run as ranks grow (bench/run_finalize.py): every rank creates
 * and frees COMMS communicators (a duplicate of MPI_COMM_WORLD and a split into pairs, in turn),
 * sends a ring of messages, then times MPI_Finalize. Rank 0 prints
 *   finalize_ns NS cpu_ns NS maxrss_kib KIB
 * (MPI_Finalize's wall and CPU time on rank 0, and rank 0's peak memory after it)
 *   finalize_cost [-c COMMS] [-m MESSAGES] */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long cpu_ns(const struct rusage* r) {
  return (r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000000LL +
         (r->ru_utime.tv_usec + r->ru_stime.tv_usec) * 1000LL;
}

int main(int argc, char** argv) {
  int comms = 1000, messages = 100;
  for (int opt; (opt = getopt(argc, argv, "c:m:")) != -1;) {
    if (opt == 'c')
      comms = atoi(optarg);
    else if (opt == 'm')
      messages = atoi(optarg);
    else {
      fprintf(stderr, "usage: finalize_cost [-c COMMS] [-m MESSAGES]\n");
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < comms; ++i) {
    MPI_Comm c;
    if (i % 2 == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else
      MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &c);
    MPI_Comm_free(&c);
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int i = 0; i < messages; ++i) {
    int out = i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  struct rusage before, after;
  getrusage(RUSAGE_SELF, &before);
  const long long t0 = now_ns();
  MPI_Finalize();
  const long long t1 = now_ns();
  if (rank == 0) {
    getrusage(RUSAGE_SELF, &after);
    printf("finalize_ns %lld cpu_ns %lld maxrss_kib %ld\n", t1 - t0,
           cpu_ns(&after) - cpu_ns(&before), after.ru_maxrss);
  }
  return 0;
}
