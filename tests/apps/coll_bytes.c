/* Collectives whose bytes are known on every rank (4 ranks): neighbourhood collectives on a
 * periodic and a non-periodic 1D Cartesian ring, and MPI_Alltoallw with per-peer counts. Each
 * rank prints "expect coll RANK FUNCTION SENT RECEIVED" for every call it made. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank;

static void expect(const char* function, int sent, int received) {
  printf("expect coll %d %s %d %d\n", rank, function, sent, received);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) MPI_Abort(MPI_COMM_WORLD, 2);
  int out[64] = {0}, in[64] = {0};
  const int four = 4;
  MPI_Comm ring, line;
  int periodic = 1, open = 0;
  MPI_Cart_create(MPI_COMM_WORLD, 1, &four, &periodic, 0, &ring);
  MPI_Cart_create(MPI_COMM_WORLD, 1, &four, &open, 0, &line);

  MPI_Neighbor_allgather(out, 10, MPI_INT, in, 10, MPI_INT, ring);
  expect("MPI_Neighbor_allgather", 2 * 40, 2 * 40);
  MPI_Neighbor_alltoall(out, 5, MPI_INT, in, 5, MPI_INT, ring);
  expect("MPI_Neighbor_alltoall", 2 * 20, 2 * 20);
  /* To the left 1 int, to the right 2: from the left neighbour 2, from the right 1. */
  const int sendcounts[2] = {1, 2}, recvcounts[2] = {2, 1}, displs[2] = {0, 8};
  MPI_Neighbor_alltoallv(out, sendcounts, displs, MPI_INT, in, recvcounts, displs, MPI_INT, ring);
  expect("MPI_Neighbor_alltoallv", 12, 12);
  /* The line's ends have one neighbour: the MPI_PROC_NULL side moves nothing. */
  MPI_Neighbor_allgather(out, 10, MPI_INT, in, 10, MPI_INT, line);
  const int ends = rank == 0 || rank == 3;
  expect("MPI_Neighbor_allgather", ends ? 40 : 80, ends ? 40 : 80);

  /* Rank r sends i+1 ints to rank i and so receives r+1 ints from each. */
  int scounts[4], rcounts[4], sdispls[4], rdispls[4];
  MPI_Datatype types[4];
  for (int i = 0; i < 4; ++i) {
    scounts[i] = i + 1;
    rcounts[i] = rank + 1;
    sdispls[i] = rdispls[i] = 16 * i * (int)sizeof(int);
    types[i] = MPI_INT;
  }
  MPI_Alltoallw(out, scounts, sdispls, types, in, rcounts, rdispls, types, MPI_COMM_WORLD);
  expect("MPI_Alltoallw", (10 - (rank + 1)) * 4, 3 * (rank + 1) * 4);

  MPI_Comm_free(&ring);
  MPI_Comm_free(&line);
  MPI_Finalize();
  return 0;
}
