/* Known MPI_T counts: in pairs (0,1), (2,3), ... the even rank sends SENDS messages with MPI_Send
 * and the odd one receives them with MPI_Recv; then the even rank sends FLOOD more before a last
 * message (tag 2) the odd rank waits for first, so that the FLOOD messages are all in its
 * unexpected queue when that receive returns; only then does it post their receives. Last, an
 * MPI_Bcast of 64 KiB from rank 0 on a duplicate of MPI_COMM_WORLD (a communicator made after
 * MPI_Init: control variables set after MPI_Init apply to it).
 *   mpit_counts [SENDS [FLOOD]] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  app_init(&argc, &argv, &rank, &size);
  const int sends = argc > 1 ? atoi(argv[1]) : 100;
  const int flood = argc > 2 ? atoi(argv[2]) : 20;
  app_require(size % 2 == 0, "mpit_counts", "needs an even number of ranks");
  const int peer = rank ^ 1;
  int value = 0;
  if (rank % 2 == 0) {
    for (int i = 0; i < sends; ++i) MPI_Send(&i, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
    for (int i = 0; i < flood; ++i) MPI_Send(&i, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
    MPI_Send(&value, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
  } else {
    for (int i = 0; i < sends; ++i) {
      MPI_Recv(&value, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (value != i) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Recv(&value, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < flood; ++i) {
      MPI_Recv(&value, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (value != i) MPI_Abort(MPI_COMM_WORLD, 4);
    }
  }
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  enum { kInts = 16384 };
  static int data[kInts];
  if (rank == 0)
    for (int i = 0; i < kInts; ++i) data[i] = i;
  MPI_Bcast(data, kInts, MPI_INT, 0, dup);
  if (data[kInts - 1] != kInts - 1) MPI_Abort(MPI_COMM_WORLD, 5);
  MPI_Comm_free(&dup);
  if (rank == 0) printf("mpit_counts: %d sends, %d unexpected per pair\n", sends, flood);
  MPI_Finalize();
  return 0;
}
