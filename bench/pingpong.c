/* IMB-style ping-pong between ranks 0 and 1: for each size, warm-up, then REPS repetitions of
 * ITERS round trips; prints the best and median half round trip per size.
 *   pingpong [-r REPS] [-i ITERS] [-m MAX_BYTES]        prints: size best_us median_us */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int rank, reps = 9, iters = 20000;
  long max_bytes = 4L << 20;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "-i")) iters = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "-m")) max_bytes = atol(argv[i + 1]);
  }
  if (reps < 1 || reps > 99 || iters < 1) MPI_Abort(MPI_COMM_WORLD, 2);
  char* buf = malloc((size_t)max_bytes + 1);
  memset(buf, 1, (size_t)max_bytes + 1);
  double times[99];
  for (long size = 0; size <= max_bytes; size = size ? size * 4 : 1) {
    /* Fewer round trips for large messages: about 256 MiB moved per repetition at most. */
    long n = size ? (256L << 20) / size : iters;
    if (n > iters) n = iters;
    if (n < 10) n = 10;
    for (int r = -1; r < reps; ++r) { /* r = -1: warm-up */
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (long i = 0; i < n; ++i) {
        if (rank == 0) {
          MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      if (r >= 0) times[r] = (MPI_Wtime() - t0) / (2.0 * (double)n) * 1e6;
    }
    qsort(times, (size_t)reps, sizeof times[0], compare);
    if (rank == 0) printf("%ld %.4f %.4f\n", size, times[0], times[reps / 2]);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
