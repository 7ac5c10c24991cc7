/* Every kind of event the archive reader hands on, from THREADS threads on each of an even
 * number of ranks (MPI_THREAD_MULTIPLE), for tests/analysis/reader_order_test.py: the reader must
 * deliver the same sequence whatever the number of threads that decode the archive. mpirun -np 4
 * threads_mixed FILE [THREADS] [ROUNDS] Thread t of rank r exchanges ROUNDS messages with thread t
 * of rank r^1 on its own duplicate of MPI_COMM_WORLD (blocking, then nonblocking, tag t). Then two
 * threads per rank hand requests over: the first starts an MPI_Iallreduce and an MPI_File_iwrite_at
 * (FILE, opened on every rank), the second completes both, so their datatypes are named on one
 * location and used on another. The main thread ends with an RMA fence epoch of MPI_Put to the next
 * rank (in a window of MPI_Win_allocate: run with OMPI_MCA_osc=sm, Open MPI's pt2pt refuses
 * MPI_THREAD_MULTIPLE). */
#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { kMaxThreads = 16 };

static int rank, size, rounds;
static MPI_Comm comms[kMaxThreads];
static MPI_File file;
static MPI_Request handed[2];
static pthread_barrier_t barrier;
static int sum_in[8], sum_out[8], block[64];

static void fail(const char* what) {
  fprintf(stderr, "threads_mixed: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static void* exchange(void* arg) {
  const int t = (int)(long)arg;
  const int partner = rank ^ 1;
  for (int i = 0; i < rounds; ++i) {
    int out = t * 100000 + i, in = -1;
    if (rank % 2 == 0) {
      MPI_Send(&out, 1, MPI_INT, partner, t, comms[t]);
      MPI_Recv(&in, 1, MPI_INT, partner, t, comms[t], MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&in, 1, MPI_INT, partner, t, comms[t], MPI_STATUS_IGNORE);
      MPI_Send(&out, 1, MPI_INT, partner, t, comms[t]);
    }
    if (in != out) fail("blocking exchange got a wrong value");
    MPI_Request r[2];
    double dout = i, din = -1;
    MPI_Irecv(&din, 1, MPI_DOUBLE, partner, t, comms[t], &r[0]);
    MPI_Isend(&dout, 1, MPI_DOUBLE, partner, t, comms[t], &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    if (din != dout) fail("nonblocking exchange got a wrong value");
  }
  return NULL;
}

static void* start_operations(void* arg) {
  (void)arg;
  for (int i = 0; i < 8; ++i) sum_in[i] = rank + i;
  MPI_Iallreduce(sum_in, sum_out, 8, MPI_INT, MPI_SUM, comms[0], &handed[0]);
  for (int i = 0; i < 64; ++i) block[i] = rank * 64 + i;
  MPI_File_iwrite_at(file, (MPI_Offset)rank * (MPI_Offset)sizeof block, block, 64, MPI_INT,
                     &handed[1]);
  pthread_barrier_wait(&barrier);
  return NULL;
}

static void* complete_operations(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  MPI_Waitall(2, handed, MPI_STATUSES_IGNORE);
  if (sum_out[0] != size * (size - 1) / 2) fail("MPI_Iallreduce got a wrong sum");
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) fail("the MPI does not give MPI_THREAD_MULTIPLE");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || size % 2 != 0)
    fail("usage: mpirun -np EVEN threads_mixed FILE [THREADS] [ROUNDS]");
  const int threads = argc > 2 ? atoi(argv[2]) : 3;
  rounds = argc > 3 ? atoi(argv[3]) : 200;
  if (threads < 2 || threads > kMaxThreads) fail("THREADS must be 2 to 16");
  for (int t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

  pthread_t tid[kMaxThreads];
  for (int t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, exchange, (void*)(long)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);

  MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &file);
  pthread_barrier_init(&barrier, NULL, 2);
  pthread_create(&tid[0], NULL, start_operations, NULL);
  pthread_create(&tid[1], NULL, complete_operations, NULL);
  pthread_join(tid[0], NULL);
  pthread_join(tid[1], NULL);
  pthread_barrier_destroy(&barrier);
  MPI_File_close(&file);

  int *window = NULL, value = rank;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
  MPI_Win_fence(0, win);
  MPI_Put(&value, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (window[0] != (rank + size - 1) % size) fail("MPI_Put put a wrong value");
  MPI_Win_free(&win);

  for (int t = 0; t < threads; ++t) MPI_Comm_free(&comms[t]);
  if (rank == 0)
    printf("expect threads_mixed ranks %d threads %d rounds %d\n", size, threads, rounds);
  MPI_Finalize();
  return 0;
}
