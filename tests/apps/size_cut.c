/* One rank fills its journal first: a ring of STEPS steps on every rank, and on rank HEAVY
 * EXTRA MPI_Iprobe calls per step besides (records that only it writes). Rank 0 prints the
 * ring's checksum, the same traced or not, whatever the tracer does at MPITRACE_MAX_SIZE. With
 * ABORT, rank 0 then calls MPI_Abort(3) instead of finalizing: a journal to recover.
 *   size_cut STEPS EXTRA HEAVY [ABORT] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int rank, size;
  app_init(&argc, &argv, &rank, &size);
  const long steps = argc > 1 ? atol(argv[1]) : 2000;
  const long extra = argc > 2 ? atol(argv[2]) : 100;
  const int heavy = argc > 3 ? atoi(argv[3]) : 2;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long token = rank, sum = 0;
  for (long s = 0; s < steps; ++s) {
    long in = 0;
    MPI_Sendrecv(&token, 1, MPI_LONG, right, 0, &in, 1, MPI_LONG, left, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    sum += in;
    token = in + 1;
    if (rank == heavy)
      for (long e = 0; e < extra; ++e) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      }
  }
  long total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("size_cut checksum %ld steps %ld\n", total, steps);
  if (argc > 4 && strcmp(argv[4], "abort") == 0) {
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD); /* the others wait here for the abort */
  }
  MPI_Finalize();
  return 0;
}
