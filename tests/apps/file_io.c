/* MPI-IO with each kind of operation the tracer records: every rank writes its block
 * (blocking, collective, nonblocking), reads it back (split collective, blocking) and checks
 * it. Rank 0 prints what the trace must hold.   mpirun -np 2 file_io */
#include <mpi.h>
#include <stdio.h>

enum { N = 1000 };

int main(int argc, char** argv) {
  int rank, data[N], back[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < N; ++i) data[i] = rank * N + i;
  const MPI_Offset block = (MPI_Offset)sizeof data * 3 * rank;
  MPI_File fh;
  MPI_File_open(MPI_COMM_WORLD, "file_io.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  MPI_File_write_at(fh, block, data, N, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_write_at_all(fh, block + sizeof data, data, N, MPI_INT, MPI_STATUS_IGNORE);
  MPI_Request request;
  MPI_File_iwrite_at(fh, block + 2 * sizeof data, data, N / 2, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_File_read_at_all_begin(fh, block + sizeof data, back, N, MPI_INT);
  MPI_File_read_at_all_end(fh, back, MPI_STATUS_IGNORE);
  for (int i = 0; i < N; ++i)
    if (back[i] != data[i]) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_File_read_at(fh, block, back, N, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_File_delete("file_io.dat", MPI_INFO_NULL);
    printf("expect io_operations 5\nexpect io_bytes %zu\n",
           (size_t)(4 * sizeof data + sizeof data / 2));
  }
  MPI_Finalize();
  return 0;
}
