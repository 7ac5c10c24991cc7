/* A ring: each iteration every rank sends to its right neighbour with MPI_Sendrecv, then to
 * both neighbours with MPI_Isend/MPI_Irecv/MPI_Waitall. The message each rank sends carries
 * (sender, iteration), checked on receipt. Prints "expect messages N" on rank 0.
 *   ring [-i ITERATIONS] [-n BYTES] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill(int* buf, int n, int sender, int iteration) {
  for (int i = 0; i < n; ++i) buf[i] = sender * 1000003 + iteration * 7 + i;
}

static int check(const int* buf, int n, int sender, int iteration) {
  for (int i = 0; i < n; ++i)
    if (buf[i] != sender * 1000003 + iteration * 7 + i) return 0;
  return 1;
}

int main(int argc, char** argv) {
  int options[] = {40, 64}; /* -i ITERATIONS, -n BYTES */
  if (app_int_options(argc, argv, "in", options, "ring [-i ITERATIONS] [-n BYTES]")) return 2;
  const int iterations = options[0], bytes = options[1];
  int rank, size;
  app_init(&argc, &argv, &rank, &size);
  const int n = bytes / (int)sizeof(int) > 0 ? bytes / (int)sizeof(int) : 1;
  int* out = malloc(3 * n * sizeof(int));
  int* in = malloc(3 * n * sizeof(int));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int bad = 0;
  for (int it = 0; it < iterations; ++it) {
    fill(out, n, rank, it);
    MPI_Sendrecv(out, n, MPI_INT, right, 1, in, n, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    bad += !check(in, n, left, it);
    MPI_Request req[4];
    MPI_Irecv(in, n, MPI_INT, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in + n, n, MPI_INT, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(out, n, MPI_INT, right, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(out, n, MPI_INT, left, 3, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    bad += !check(in, n, left, it) + !check(in + n, n, right, it);
  }
  int all_bad = 0;
  MPI_Reduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("expect messages %d\n", 3 * iterations * size);
    if (all_bad) fprintf(stderr, "ring: %d messages arrived corrupted\n", all_bad);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return all_bad ? 1 : 0;
}
