/* A communication-bound rank: ROUNDS rounds of MESSAGES exchanges of 1 KiB around a ring
 * (MPI_Sendrecv to the right, from the left), each round ended by an MPI_Barrier; prints the
 * wall seconds of the rounds on the slowest rank, in the format of compute_bound.c, so that
 * bench/run_sampling.py --workload comm measures what sampling costs a run that is mostly in
 * MPI.
 *   comm_bound [ROUNDS [MESSAGES]] */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  const long messages = argc > 2 ? atol(argv[2]) : 20000;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  char out[1024] = {0}, in[1024];
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = now();
  for (int r = 0; r < rounds; ++r) {
    for (long m = 0; m < messages; ++m)
      MPI_Sendrecv(out, sizeof out, MPI_BYTE, right, 0, in, sizeof in, MPI_BYTE, left, 0,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double seconds = now() - t0, slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("compute_seconds %.6f\n", slowest);
  MPI_Finalize();
  return 0;
}
