/* A long run for the memory bound: 2 ranks ping-pong ROUNDS small messages, then each rank
 * prints its peak resident memory (VmHWM) after MPI_Finalize.   many_events [ROUNDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kib;
}

int main(int argc, char** argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long rounds = argc > 1 ? atol(argv[1]) : 500000;
  int value = 0;
  for (long i = 0; i < rounds; ++i) {
    if (rank == 0) {
      MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  printf("rank %d peak_kib %ld\n", rank, peak_kib());
  return 0;
}
