/* Known-answer programs for what only Peruse shows (tests/analysis/inside_mpi_test.py): costs
 * inside MPI that no MPI call's own times reveal.
 *
 *   inside_mpi SCENARIO [-d DELAY_MS] [-b BYTES] [-n COUNT] [-t TEST_MS] [-p 1]
 *
 * Each scenario starts together (MPI_Comm_dup synchronises every rank):
 *   stall       ranks pair up (0 -> 1, 2 -> 3, ...): the even rank posts MPI_Isend of BYTES
 *               (default 4 MiB) at once and computes DELAY_MS (default 200) in phase=compute
 *               before its MPI_Wait; the odd rank posts MPI_Irecv at once and waits in MPI_Wait.
 *               With -t TEST_MS the sender calls MPI_Test on its request every TEST_MS of the
 *               computation (the fix: MPI progresses the transfer).
 *   stall-receiver  the other way round: the odd rank posts MPI_Irecv before the start (so it is
 *               posted before the message can arrive) and computes DELAY_MS (with -t, calling
 *               MPI_Test) before its MPI_Wait; the even rank posts MPI_Isend of BYTES 10 ms
 *               after the start and waits in MPI_Wait.
 *   protocol    ranks pair up: COUNT (default 50) round trips of BYTES (default 8192) each way,
 *               with MPI_Send and MPI_Recv: messages above the transport's eager limit pay its
 *               rendezvous handshake.
 *   unexpected  after a barrier, every rank but 0 sends COUNT (default 20) messages of BYTES
 *               (default 1024) to rank 0 at once; rank 0 computes DELAY_MS first (testing a
 *               receive on MPI_COMM_SELF each ms, so that MPI makes progress), then receives
 *               them, one MPI_Recv per message: (ranks - 1) x COUNT messages wait in the
 *               unexpected queue and are copied twice. With -p 1 rank 0 posts the
 *               receives (MPI_Irecv) before it computes and then waits for them all (the fix:
 *               none is unexpected), and its barrier follows the posting.
 *   deep-posted rank 0 posts COUNT (default 200) MPI_Irecv(MPI_ANY_SOURCE, tag i) for tags 0 ..
 *               COUNT - 1, then rank 1 sends one message per tag from the highest down: each
 *               arriving message searches the posted queue past every receive still in it.
 *               With -p 1 rank 1 sends them in the order they were posted (the fix: each
 *               message matches the queue's first receive).
 * Work is busy computation on CLOCK_MONOTONIC (no sleep). Built against
 * include/perusetrace/annotate.h only. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <perusetrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static perusetrace_attribute_t phase;

/* SECONDS of computation in phase=compute, calling MPI_Test on *REQUEST every TEST seconds when
 * TEST > 0. */
static void compute(double seconds, double test, MPI_Request* request) {
  perusetrace_begin(phase, "compute");
  const double until = app_now() + seconds;
  int done = 0;
  while (app_now() < until) {
    const double step = test > 0 ? test : until - app_now();
    app_busy(step < until - app_now() ? step : until - app_now());
    if (test > 0 && !done) MPI_Test(request, &done, MPI_STATUS_IGNORE);
  }
  perusetrace_end(phase);
}

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    fprintf(stderr,
            "usage: inside_mpi SCENARIO [-d DELAY_MS] [-b BYTES] [-n COUNT] [-t TEST_MS] [-p 1]\n");
    return 2;
  }
  const char* s = argv[1];
  int opts[5] = {200, -1, -1, 0, 0}; /* d b n t p */
  if (app_int_options(
          argc - 1, argv + 1, "dbntp", opts,
          "inside_mpi SCENARIO [-d DELAY_MS] [-b BYTES] [-n COUNT] [-t TEST_MS] [-p 1]"))
    return 2;
  const double delay = opts[0] / 1e3, test = opts[3] / 1e3;
  phase = perusetrace_attribute(NULL, "phase", 0);
  int rank = 0, size = 0;
  app_init(&argc, &argv, &rank, &size);
  app_require(size >= 2, "inside_mpi", "needs at least 2 ranks");
  const int partner = rank ^ 1;
  const int paired = partner < size;
  const int stall = !strcmp(s, "stall") || !strcmp(s, "stall-receiver");
  const int stall_bytes = opts[1] > 0 ? opts[1] : 4 << 20;
  char* stall_buf = stall ? calloc((size_t)stall_bytes, 1) : NULL;
  MPI_Request stall_request = MPI_REQUEST_NULL;
  if (paired && rank % 2 == 1 && !strcmp(s, "stall-receiver"))
    MPI_Irecv(stall_buf, stall_bytes, MPI_BYTE, partner, 5, MPI_COMM_WORLD, &stall_request);
  MPI_Comm start;
  MPI_Comm_dup(MPI_COMM_WORLD, &start);
  if (stall) {
    const int bytes = stall_bytes;
    const int late = !strcmp(s, "stall") ? 0 : 1; /* the rank that computes */
    char* buf = stall_buf;
    MPI_Request request = stall_request;
    /* The receiver must have left the start (MPI_Comm_dup, which moves messages too) when the
     * message comes: 10 ms on, the sender's own outside any region. */
    if (paired && rank % 2 == 0 && late == 1) app_busy(0.01);
    if (paired && rank % 2 == 0)
      MPI_Isend(buf, bytes, MPI_BYTE, partner, 5, MPI_COMM_WORLD, &request);
    else if (paired && late == 0)
      MPI_Irecv(buf, bytes, MPI_BYTE, partner, 5, MPI_COMM_WORLD, &request);
    if (paired && rank % 2 == late) compute(delay, test, &request);
    if (paired) MPI_Wait(&request, MPI_STATUS_IGNORE);
    free(buf);
  } else if (!strcmp(s, "protocol")) {
    const int bytes = opts[1] > 0 ? opts[1] : 8192, count = opts[2] > 0 ? opts[2] : 50;
    char* buf = calloc((size_t)bytes, 1);
    for (int i = 0; paired && i < count; ++i) {
      if (rank % 2 == 0) {
        MPI_Send(buf, bytes, MPI_BYTE, partner, 6, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, bytes, MPI_BYTE, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, partner, 6, MPI_COMM_WORLD);
      }
    }
    free(buf);
  } else if (!strcmp(s, "unexpected")) {
    const int bytes = opts[1] > 0 ? opts[1] : 1024, count = opts[2] > 0 ? opts[2] : 20;
    char* buf = calloc((size_t)bytes, 1);
    if (rank == 0 && opts[4]) {
      const int n = (size - 1) * count;
      char* all = calloc((size_t)n * (size_t)bytes, 1);
      MPI_Request* requests = calloc((size_t)n, sizeof *requests);
      for (int i = 0; i < n; ++i)
        MPI_Irecv(all + (size_t)i * (size_t)bytes, bytes, MPI_BYTE, MPI_ANY_SOURCE, 8,
                  MPI_COMM_WORLD, &requests[i]);
      // The senders start once the receives are posted: a rank 0 descheduled at its start
      // (more ranks than cores) would otherwise post after some messages arrived.
      MPI_Barrier(MPI_COMM_WORLD);
      compute(delay, 0, NULL);
      MPI_Waitall(n, requests, MPI_STATUSES_IGNORE);
      free(requests);
      free(all);
    } else if (rank == 0) {
      // The delay counts from when every sender is past MPI_Init (a sender still starting, with
      // more ranks than cores, would send after the receives were posted), and messages reach
      // the unexpected queue only while rank 0 makes progress: it tests a receive of its own
      // on MPI_COMM_SELF, which no sender's message matches, every millisecond of the delay,
      // as a program polling for work does.
      MPI_Request self;
      int token = 0;
      MPI_Irecv(&token, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &self);
      MPI_Barrier(MPI_COMM_WORLD);
      compute(delay, 0.001, &self);
      MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_SELF);
      MPI_Wait(&self, MPI_STATUS_IGNORE);
      for (int i = 0; i < (size - 1) * count; ++i)
        MPI_Recv(buf, bytes, MPI_BYTE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      for (int i = 0; i < count; ++i) MPI_Send(buf, bytes, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
    }
    free(buf);
  } else if (!strcmp(s, "deep-posted")) {
    const int count = opts[2] > 0 ? opts[2] : 200;
    int* values = calloc((size_t)count, sizeof *values);
    MPI_Request* requests = calloc((size_t)count, sizeof *requests);
    if (rank == 0) {
      for (int i = 0; i < count; ++i)
        MPI_Irecv(&values[i], 1, MPI_INT, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &requests[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Waitall(count, requests, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
      for (int k = 0; k < count; ++k) {
        int tag = opts[4] ? k : count - 1 - k;
        MPI_Send(&tag, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
      }
    }
    free(values);
    free(requests);
  } else {
    app_require(0, "inside_mpi", "unknown scenario");
  }
  MPI_Comm_free(&start);
  MPI_Finalize();
  return 0;
}
