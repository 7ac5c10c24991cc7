/* Steps of a ring on every thread, each one counted in a side file as it completes, until the
 * rank is killed: the ground truth for tests/trace/kill_test.py, which kills ranks at moments of
 * its choosing and checks that the recovered trace holds every step the side files count.
 *
 *   kill_steps DIR THREADS
 *
 * Each rank writes its pid to DIR/pid.RANK, then each of its THREADS threads
 * (MPI_THREAD_MULTIPLE) runs a ring on a communicator of its own: MPI_Irecv from the left,
 * MPI_Isend to the right, MPI_Waitall, and stores the steps it completed in
 * DIR/steps.RANK.THREAD (a fixed-width line rewritten in place: the page cache keeps it when
 * the process dies). A step's MPI calls have returned before it is counted. Each step ends with
 * a 200 us sleep: a run of a second or two holds a few thousand steps, an archive the test
 * reads quickly, and still dozens of buffer drains.
 */
#include "tests/apps/app_util.h"
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kMaxThreads = 8 };
static const char* g_dir;
static int g_rank, g_size;
static MPI_Comm g_comms[kMaxThreads];

static void* ring(void* arg) {
  const long t = (long)arg;
  char path[4096];
  snprintf(path, sizeof path, "%s/steps.%d.%ld", g_dir, g_rank, t);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int left = (g_rank + g_size - 1) % g_size, right = (g_rank + 1) % g_size;
  for (long step = 1;; ++step) {
    long in = 0, out = step;
    MPI_Request requests[2];
    MPI_Irecv(&in, 1, MPI_LONG, left, 7, g_comms[t], &requests[0]);
    MPI_Isend(&out, 1, MPI_LONG, right, 7, g_comms[t], &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    char line[32];
    const int n = snprintf(line, sizeof line, "%20ld\n", step);
    if (pwrite(fd, line, (size_t)n, 0) != n) {
      perror(path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const struct timespec pause = {0, 200000};
    nanosleep(&pause, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: kill_steps DIR THREADS\n");
    return 2;
  }
  g_dir = argv[1];
  const long threads = atol(argv[2]);
  const int provided = app_init_multiple(&argc, &argv, &g_rank, &g_size);
  app_require((threads == 1 || provided == MPI_THREAD_MULTIPLE) && threads >= 1 &&
                  threads <= kMaxThreads && g_size >= 2,
              "kill_steps", "needs 2 ranks or more, 1 to 8 threads, MPI_THREAD_MULTIPLE");
  for (long t = 0; t < threads; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[t]);
  char path[4096];
  snprintf(path, sizeof path, "%s/pid.%d", g_dir, g_rank);
  FILE* pid = fopen(path, "w");
  if (pid == NULL) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fprintf(pid, "%d\n", (int)getpid());
  fclose(pid);
  pthread_t tid[kMaxThreads];
  for (long t = 1; t < threads; ++t) pthread_create(&tid[t], NULL, ring, (void*)t);
  ring((void*)0);
  MPI_Finalize(); /* never reached: the test kills the job */
  return 0;
}
