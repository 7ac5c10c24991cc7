/* Polling of every kind the tracer folds (tests/trace/poll_fold_test.py): on 4 ranks, pairs
 * 0-1 and 2-3; in each round the even rank polls with one function until its partner's
 * message, sent after -d MICROSECONDS, is there, then runs a round of polls that another call
 * ends (-n unsuccessful MPI_Test, then MPI_Wait). After each unsuccessful poll it computes for
 * -g MICROSECONDS (outside MPI: a fold's span is more than its time inside). Each rank writes, to
 * OUTDIR/counts.RANK, the calls of each MPI function it made and the ns it spent inside them by its
 * own clock: MPI_Test 1234 5678901 poll_kinds [-d MICROSECONDS] [-g MICROSECONDS] [-n POLLS] [-r
 * ROUNDS] OUTDIR */
#include "tests/apps/app_util.h"

enum { kTest, kTestany, kTestall, kTestsome, kIprobe, kImprobe, kGetStatus, kKinds };
static const char* const kNames[kKinds] = {
    "MPI_Test",   "MPI_Testany", "MPI_Testall",           "MPI_Testsome",
    "MPI_Iprobe", "MPI_Improbe", "MPI_Request_get_status"};
static long calls[kKinds];
static double inside[kKinds];

/* One poll of KIND on REQ (or, for the probes, for a message of TAG from PEER): 1 when it
 * found something. */
static int poll_once(int kind, MPI_Request* req, int peer, int tag, MPI_Message* msg) {
  int flag = 0, index = 0, outcount = 0, indices[1];
  const double t0 = app_now();
  switch (kind) {
    case kTest:
      MPI_Test(req, &flag, MPI_STATUS_IGNORE);
      break;
    case kTestany:
      MPI_Testany(1, req, &index, &flag, MPI_STATUS_IGNORE);
      break;
    case kTestall:
      MPI_Testall(1, req, &flag, MPI_STATUSES_IGNORE);
      break;
    case kTestsome:
      MPI_Testsome(1, req, &outcount, indices, MPI_STATUSES_IGNORE);
      flag = outcount > 0;
      break;
    case kIprobe:
      MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      break;
    case kImprobe:
      MPI_Improbe(peer, tag, MPI_COMM_WORLD, &flag, msg, MPI_STATUS_IGNORE);
      break;
    case kGetStatus:
      MPI_Request_get_status(*req, &flag, MPI_STATUS_IGNORE);
      break;
  }
  inside[kind] += app_now() - t0;
  ++calls[kind];
  return flag;
}

int main(int argc, char** argv) {
  /* -d delay us, -n polls ended by MPI_Wait, -r rounds, -g gap us */
  int opts[4] = {2000, 100, 2, 2};
  const char* usage = "poll_kinds [-d US] [-g US] [-n POLLS] [-r ROUNDS] OUTDIR";
  if (app_int_options(argc, argv, "dnrg", opts, usage)) return 2;
  if (optind >= argc) {
    fprintf(stderr, "usage: %s\n", usage);
    return 2;
  }
  const double gap = opts[3] * 1e-6;
  int rank, size;
  app_init(&argc, &argv, &rank, &size);
  if (size % 2 != 0) {
    if (rank == 0) fprintf(stderr, "poll_kinds: an even number of ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int poller = rank % 2 == 0, peer = poller ? rank + 1 : rank - 1;
  int payload = rank;
  for (int round = 0; round < opts[2]; ++round) {
    for (int kind = 0; kind < kKinds; ++kind) {
      const int tag = 100 * round + kind;
      if (!poller) {
        const struct timespec pause = {opts[0] / 1000000, (long)(opts[0] % 1000000) * 1000};
        nanosleep(&pause, NULL);
        MPI_Send(&payload, 1, MPI_INT, peer, tag, MPI_COMM_WORLD);
        continue;
      }
      MPI_Request req = MPI_REQUEST_NULL;
      MPI_Message msg = MPI_MESSAGE_NULL;
      const int probes = kind == kIprobe || kind == kImprobe;
      if (!probes) MPI_Irecv(&payload, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &req);
      while (!poll_once(kind, &req, peer, tag, &msg)) app_busy(gap);
      if (kind == kIprobe)
        MPI_Recv(&payload, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else if (kind == kImprobe)
        MPI_Mrecv(&payload, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
      else if (kind == kGetStatus)
        MPI_Wait(&req, MPI_STATUS_IGNORE); /* get_status leaves the request to free */
    }
    /* Polls that another call ends: the partner sends only after the barrier. */
    if (poller) {
      MPI_Request req;
      MPI_Irecv(&payload, 1, MPI_INT, peer, 999, MPI_COMM_WORLD, &req);
      for (int i = 0; i < opts[1]; ++i) {
        poll_once(kTest, &req, peer, 0, NULL);
        app_busy(gap);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Send(&payload, 1, MPI_INT, peer, 999, MPI_COMM_WORLD);
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/counts.%d", argv[optind], rank);
  FILE* f = fopen(path, "w");
  if (f == NULL) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int kind = 0; kind < kKinds; ++kind)
    fprintf(f, "%s %ld %.0f\n", kNames[kind], calls[kind], inside[kind] * 1e9);
  fclose(f);
  MPI_Finalize();
  return 0;
}
