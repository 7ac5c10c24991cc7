/* Derived datatypes with known bytes per type, on 4 ranks (tests/trace/datatypes_test.py knows the
 * numbers): a ring of sends and receives with vector, indexed, struct, resized, dup'd and
 * nested types, two of them named, a freed type whose handle may come back as another one,
 * an MPI_Allgather of a subarray, an MPI_Bcast of a resized type, two MPI_Alltoallw (one type
 * for all peers; types that differ by peer), and MPI-IO writes of a contiguous type. `datatypes
 * hang` says "pid PID" after the first ring and waits to be killed, for the recovery test. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "datatypes: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check(size == 4, "needs 4 ranks");
  const int hang = argc > 1 && strcmp(argv[1], "hang") == 0;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;

  /* column: every 8th of 32 doubles, 4 of them (32 bytes, extent 200) */
  MPI_Datatype column;
  MPI_Type_vector(4, 1, 8, MPI_DOUBLE, &column);
  MPI_Type_set_name(column, "column");
  MPI_Type_commit(&column);
  /* blocks of 2, 1 and 3 ints at 0, 4 and 8 (24 bytes, extent 44) */
  MPI_Datatype blocks;
  const int lengths[3] = {2, 1, 3}, displs[3] = {0, 4, 8};
  MPI_Type_indexed(3, lengths, displs, MPI_INT, &blocks);
  MPI_Type_commit(&blocks);
  /* struct { int a; double b[2]; } (20 bytes, extent 24) */
  MPI_Datatype record;
  const int record_lengths[2] = {1, 2};
  const MPI_Aint record_displs[2] = {0, 8};
  const MPI_Datatype record_types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, record_lengths, record_displs, record_types, &record);
  MPI_Type_commit(&record);
  /* a 4x4 block at (2,2) of an 8x8 float array (64 bytes, extent 256) */
  MPI_Datatype tile;
  const int sizes[2] = {8, 8}, subsizes[2] = {4, 4}, starts[2] = {2, 2};
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &tile);
  MPI_Type_commit(&tile);
  /* an int every 16 bytes (4 bytes, extent 16) */
  MPI_Datatype spaced;
  MPI_Type_create_resized(MPI_INT, 0, 16, &spaced);
  MPI_Type_commit(&spaced);
  /* real8: MPI_DOUBLE under a name of its own (8 bytes, contiguous) */
  MPI_Datatype real8;
  MPI_Type_dup(MPI_DOUBLE, &real8);
  MPI_Type_set_name(real8, "real8");
  MPI_Type_commit(&real8);
  /* four ints in a row (16 bytes, contiguous) */
  MPI_Datatype quad;
  MPI_Type_contiguous(4, MPI_INT, &quad);
  MPI_Type_commit(&quad);
  /* two columns side by side: a type of a type (64 bytes, extent 400) */
  MPI_Datatype two_columns;
  MPI_Type_contiguous(2, column, &two_columns);
  MPI_Type_commit(&two_columns);

  double matrix[64], received[64];
  int ints[64], ints_in[64];
  for (int i = 0; i < 64; ++i) matrix[i] = rank * 100 + i, ints[i] = rank * 100 + i;
  MPI_Status status;

  /* Ring: each rank sends to the next and receives from the previous one. */
  MPI_Send(matrix, 1, column, next, 1, MPI_COMM_WORLD);
  MPI_Recv(received, 4, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &status);
  check(received[1] == prev * 100 + 8, "column received wrong");
  if (hang) {
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    for (;;) sleep(1);
  }
  MPI_Request requests[2];
  MPI_Irecv(ints_in, 2, blocks, prev, 2, MPI_COMM_WORLD, &requests[0]);
  MPI_Isend(ints, 2, blocks, next, 2, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  char records_out[3 * 24], records_in[3 * 24];
  memset(records_out, rank, sizeof records_out);
  MPI_Sendrecv(records_out, 3, record, next, 3, records_in, 3, record, prev, 3, MPI_COMM_WORLD,
               &status);
  if (rank == 0) {
    double reals[5] = {1, 2, 3, 4, 5};
    MPI_Send(reals, 5, real8, 1, 4, MPI_COMM_WORLD);
    MPI_Ssend(matrix, 1, two_columns, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    double reals[5];
    MPI_Recv(reals, 5, real8, 0, 4, MPI_COMM_WORLD, &status);
    check(reals[4] == 5, "real8 received wrong");
    MPI_Recv(received, 8, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &status);
  }

  /* A type freed after one use; the MPI may give its handle to the next one. */
  MPI_Datatype pairs;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pairs); /* 8 bytes */
  MPI_Type_commit(&pairs);
  short shorts[8] = {0};
  if (rank == 2) MPI_Send(ints, 1, pairs, 3, 6, MPI_COMM_WORLD);
  if (rank == 3) MPI_Recv(ints_in, 2, MPI_INT, 2, 6, MPI_COMM_WORLD, &status);
  MPI_Type_free(&pairs);
  MPI_Datatype triple;
  MPI_Type_contiguous(3, MPI_SHORT, &triple); /* 6 bytes */
  MPI_Type_commit(&triple);
  if (rank == 2) MPI_Send(shorts, 1, triple, 3, 7, MPI_COMM_WORLD);
  if (rank == 3) MPI_Recv(shorts, 3, MPI_SHORT, 2, 7, MPI_COMM_WORLD, &status);

  /* Collectives: every rank's tile to every rank, and three spaced ints from rank 0. */
  float grid[64], gathered[4 * 16];
  for (int i = 0; i < 64; ++i) grid[i] = (float)i;
  MPI_Allgather(grid, 1, tile, gathered, 16, MPI_FLOAT, MPI_COMM_WORLD);
  check(gathered[16] == 18.0f, "tile gathered wrong");
  int spread[12] = {0};
  if (rank == 0) spread[4] = 42;
  MPI_Bcast(spread, 3, spaced, 0, MPI_COMM_WORLD);
  check(spread[4] == 42, "spaced ints broadcast wrong");

  /* MPI_Alltoallw, one type for every peer: 2 strided ints to each other rank (8 bytes), taken
   * in as 2 ints. */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 3, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int scounts[4], rcounts[4], sdispls[4], rdispls[4], w_in[8] = {0};
  MPI_Datatype stypes[4], rtypes[4];
  for (int i = 0; i < 4; ++i) {
    scounts[i] = i == rank ? 0 : 1, sdispls[i] = 0, stypes[i] = strided;
    rcounts[i] = i == rank ? 0 : 2, rdispls[i] = 8 * i, rtypes[i] = MPI_INT;
  }
  MPI_Alltoallw(ints, scounts, sdispls, stypes, w_in, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
  check(w_in[2 * prev + 1] == prev * 100 + 3, "strided ints exchanged wrong");
  /* Types that differ by peer: an int to even ranks, two shorts (of the same 4 bytes) to odd
   * ones, so each rank receives one kind only and sends both. */
  MPI_Datatype two_shorts;
  MPI_Type_contiguous(2, MPI_SHORT, &two_shorts);
  MPI_Type_commit(&two_shorts);
  for (int i = 0; i < 4; ++i) {
    scounts[i] = rcounts[i] = i == rank ? 0 : 1, sdispls[i] = 0, rdispls[i] = 4 * i;
    stypes[i] = i % 2 == 0 ? MPI_INT : two_shorts;
    rtypes[i] = rank % 2 == 0 ? MPI_INT : two_shorts;
  }
  MPI_Alltoallw(ints, scounts, sdispls, stypes, w_in, rcounts, rdispls, rtypes, MPI_COMM_WORLD);
  MPI_Type_free(&strided);
  MPI_Type_free(&two_shorts);

  /* MPI-IO: two quads per rank, written collectively, read back as 8 ints. */
  char path[256];
  snprintf(path, sizeof path, "%s", argc > 2 ? argv[2] : "datatypes.dat");
  MPI_File file;
  MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  MPI_File_write_at_all(file, rank * 32, ints, 2, quad, &status);
  /* The aggregator wrote the data: sync, barrier, sync makes it visible to every rank. */
  MPI_File_sync(file);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(file);
  MPI_File_read_at(file, rank * 32, ints_in, 8, MPI_INT, &status);
  check(ints_in[7] == ints[7], "file read back wrong");
  MPI_File_close(&file);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) MPI_File_delete(path, MPI_INFO_NULL);

  MPI_Type_free(&column);
  MPI_Type_free(&blocks);
  MPI_Type_free(&record);
  MPI_Type_free(&tile);
  MPI_Type_free(&spaced);
  MPI_Type_free(&real8);
  MPI_Type_free(&quad);
  MPI_Type_free(&two_columns);
  MPI_Type_free(&triple);
  MPI_Finalize();
  return 0;
}
