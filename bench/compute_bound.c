/* A compute-bound rank: ROUNDS rounds of a fixed amount of arithmetic, each followed by an
 * MPI_Barrier; prints the seconds the arithmetic took (not the barriers), which sampling slows
 * down by what its signal handler costs. bench/run_sampling.py runs it in several modes.
 *   compute_bound [ROUNDS [ITERATIONS]] */
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
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  const long iterations = argc > 2 ? atol(argv[2]) : 20000000;
  volatile double x = 1.0;
  double seconds = 0;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now();
    double y = x;
    for (long i = 0; i < iterations; ++i) y = y * 1.0000001 + 1e-9;
    x = y;
    seconds += now() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  double slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("compute_seconds %.6f\n", slowest);
  MPI_Finalize();
  return 0;
}
