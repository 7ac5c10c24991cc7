/* Nonblocking collectives with known shapes on every rank: MPI_Ibcast of 1000 ints from rank 1,
 * MPI_Iallreduce of 10 doubles and MPI_Ibarrier, completed together by one MPI_Waitall, then an
 * MPI_Ibcast completed by an MPI_Test loop. Values are checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) MPI_Abort(MPI_COMM_WORLD, 2);
  int ints[1000];
  double in[10], out[10];
  for (int i = 0; i < 1000; ++i) ints[i] = rank == 1 ? i : -1;
  for (int i = 0; i < 10; ++i) in[i] = rank;
  MPI_Request requests[3];
  MPI_Ibcast(ints, 1000, MPI_INT, 1, MPI_COMM_WORLD, &requests[0]);
  MPI_Iallreduce(in, out, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &requests[1]);
  MPI_Ibarrier(MPI_COMM_WORLD, &requests[2]);
  MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
  if (ints[999] != 999 || out[0] != size * (size - 1) / 2.0) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Request request;
  int done = 0;
  MPI_Ibcast(ints, 10, MPI_INT, 0, MPI_COMM_WORLD, &request);
  while (!done) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  if (rank == 0) printf("expect nbc 4\n");
  MPI_Finalize();
  return 0;
}
