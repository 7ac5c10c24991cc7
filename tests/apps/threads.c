/* MPI_THREAD_MULTIPLE: THREADS threads on each of 2 ranks; thread t of rank 0 and thread t of
 * rank 1 ping-pong MESSAGES messages (half each way) with tag t. Rank 0 prints the totals
 * the trace must hold.   mpirun -np 2 threads [THREADS] [MESSAGES] */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, messages;

static void* pingpong(void* arg) {
  const int tag = (int)(long)arg;
  int value = tag;
  for (int i = 0; i < messages / 2; ++i) {
    app_round_trip(rank, &value, &value, tag, tag);
    if (value != tag) {
      fprintf(stderr, "threads: thread %d got %d\n", tag, value);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  int size = 0;
  const int provided = app_init_multiple(&argc, &argv, &rank, &size);
  const int threads = argc > 1 ? atoi(argv[1]) : 4;
  messages = argc > 2 ? atoi(argv[2]) : 100000;
  app_require(provided == MPI_THREAD_MULTIPLE && size == 2 && threads >= 1 && threads <= 64,
              "threads", "needs MPI_THREAD_MULTIPLE and 2 ranks");
  pthread_t tid[64];
  for (long t = 0; t < threads; ++t) pthread_create(&tid[t], NULL, pingpong, (void*)t);
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("expect threads %d\nexpect messages_per_thread %d\n", threads, messages);
  MPI_Finalize();
  return 0;
}
