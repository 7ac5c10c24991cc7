/* A program that dies before MPI_Finalize, in the ways real programs do. Both ranks first
 * exchange MESSAGES ping-pongs (each rank sends MESSAGES messages: the ground truth the
 * recovered trace is checked against), then rank 1 dies as MODE says while rank 0 waits for a
 * message that never comes, until mpirun ends it.
 *
 *   dies MODE MESSAGES
 *   MODE: mpi-abort | abort | segv | exit | wait (rank 1 prints its pid and waits to be killed)
 */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: dies mpi-abort|abort|segv|exit|wait MESSAGES\n");
    return 2;
  }
  const char* mode = argv[1];
  const int messages = atoi(argv[2]);
  int rank = 0;
  app_init(&argc, &argv, &rank, NULL);
  int payload = 0;
  for (int i = 0; i < messages; ++i) app_round_trip(rank, &i, &payload, 1, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d exchanged %d messages\n", rank, messages);
  fflush(stdout);
  if (strcmp(mode, "exit") == 0) exit(0); /* every rank: no MPI_Finalize */
  if (rank == 1) {
    if (strcmp(mode, "mpi-abort") == 0) {
      MPI_Abort(MPI_COMM_WORLD, 3);
    } else if (strcmp(mode, "abort") == 0) {
      abort();
    } else if (strcmp(mode, "segv") == 0) {
      volatile int* nowhere = NULL;
      *nowhere = 1;
    } else {
      printf("pid %d\n", (int)getpid());
      fflush(stdout);
      for (;;) sleep(1);
    }
  } else if (rank == 0) {
    MPI_Recv(&payload, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
