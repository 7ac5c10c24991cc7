/* Phases of known MPI state, for the state sampling tests (2 or more ranks):
 *   compute   every rank computes MS/2 ms, then sleeps MS/2 ms, outside MPI -> NOT_IN_MPI
 *   late      rank 0 computes LATE ms, then sends; rank 1 waits in MPI_Recv -> STALL, message
 *   transfer  rank 0 sends 64 MiB to rank 1, REPEAT times                  -> WORK, transfer
 *   barrier   rank 0 computes MS ms; the others wait in MPI_Barrier        -> STALL, collective
 * Each phase starts after a barrier. Ranks 0 and 1 print the phases' wall times.
 * With "pcontrol", collection pauses (MPI_Pcontrol(0)) for the transfer phase; LATE (default
 * MS) is the late phase's length: a longer one makes MPI_Recv rank 1's top stall, ahead of
 * the barrier phase's MPI_Barrier.
 *   state_phases [MS [REPEAT [LATE] [pcontrol]]] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;
static void compute(double seconds) {
  const double end = app_now() + seconds;
  double x = 1;
  while (app_now() < end)
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  app_init(&argc, &argv, &rank, &size);
  const double ms = argc > 1 ? atof(argv[1]) : 300;
  const int repeat = argc > 2 ? atoi(argv[2]) : 4;
  int pcontrol = 0;
  double late_ms = ms;
  for (int i = 3; i < argc; ++i) {
    if (argv[i][0] == 'p')
      pcontrol = 1;
    else
      late_ms = atof(argv[i]);
  }
  app_require(size >= 2, "state_phases", "needs 2 or more ranks");
  const size_t big = 64u << 20;
  char* data = malloc(big);
  for (size_t i = 0; i < big; i += 4096) data[i] = (char)i;
  double t[5];
  int value = 0;

  MPI_Barrier(MPI_COMM_WORLD);
  t[0] = app_now();
  compute(ms / 2e3);
  /* A sleep the sampler must neither cut short nor lose: its samples wait for its end. */
  const long long nap = (long long)(ms / 2 * 1e6);
  const struct timespec span = {nap / 1000000000LL, nap % 1000000000LL};
  nanosleep(&span, NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  t[1] = app_now();
  if (rank == 0) {
    compute(late_ms / 1e3);
    MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  t[2] = app_now();
  if (pcontrol) MPI_Pcontrol(0);
  for (int r = 0; r < repeat; ++r) {
    if (rank == 0) MPI_Send(data, (int)big, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(data, (int)big, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (pcontrol) MPI_Pcontrol(1);
  MPI_Barrier(MPI_COMM_WORLD);
  t[3] = app_now();
  if (rank == 0) compute(ms / 1e3);
  MPI_Barrier(MPI_COMM_WORLD);
  t[4] = app_now();
  if (rank <= 1)
    printf("state_phases rank %d: compute %.3f late %.3f transfer %.3f barrier %.3f s\n", rank,
           t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3]);
  free(data);
  MPI_Finalize();
  return 0;
}
