/* Known-answer programs for the report's wait states (tests/analysis/wait_state_test.py), on 4
 * ranks.
 *
 *   wait_states SCENARIO [DELAY_MS]
 *
 * Each scenario starts together (MPI_Comm_dup: it synchronises every rank, and no wait-state
 * pattern covers it, so the skew of MPI_Init's ends adds to none of them) and injects one delay of
 * DELAY_MS (default 200) as computation on one rank, inside an annotation "phase=late" where it
 * says so; the waits it causes are the answer, on the ranks named: late-sender      rank 0 sends to
 * 1 late; 1 waits in MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) wrong-order      rank 1 sends to 2 at
 * once; 0 sends to 2 late, and 2 asks for 0's first late-receiver    rank 0 MPI_Send 1 MiB
 * (rendezvous) to 1, which receives late late-receiver-ssend   the same with a 4-byte MPI_Ssend
 *   late-receiver-isend   the same with MPI_Isend of 1 MiB and MPI_Wait
 *   barrier          rank 2 enters MPI_Barrier late: 0, 1, 3 wait
 *   nxn              rank 3 enters MPI_Allreduce late: 0, 1, 2 wait
 *   bcast            the root (1) enters MPI_Bcast late: 0, 2, 3 wait
 *   reduce           every rank but the root (0) enters MPI_Reduce late: 0 waits
 *   chain            rank 0 sends to 1 late (in phase=A); 1 (in phase=B) receives it, then sends
 *                    to 2: 1 waits for 0, 2 waits for 1 as long, through 1's waiting for 0
 *   fence            rank 1 enters MPI_Win_fence late: 0, 2, 3 wait
 *   late-post        rank 0 accesses rank 1's window (MPI_Win_start .. MPI_Win_complete); rank 1
 *                    posts its exposure epoch late: 0 waits
 *   early-wait       the same, but rank 0 computes late inside its access epoch: 1 waits in
 *                    MPI_Win_wait
 *   lock             rank 0 locks rank 2's window exclusively and computes before it unlocks;
 *                    rank 1 asks for the same lock after it (told by a message): 1 waits
 *   nonblocking      rank 3 starts MPI_Iallreduce late; 0, 1, 2 wait in MPI_Wait
 *   test-loop        rank 0 sends to 1 late; 1 polls MPI_Test on its MPI_Irecv until it is done
 *   probe-loop       rank 0 sends to 1 late; 1 polls MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG)
 *                    until it sees the message, then receives it with MPI_Recv
 *   alternating      4 iterations of MPI_Allreduce; in iteration i rank i computes DELAY_MS in
 *                    phase=slow, the others DELAY_MS / 4 in phase=fast: the critical path runs
 *                    through phase=slow for 4 x DELAY_MS
 * Work is busy computation on CLOCK_MONOTONIC (no sleep), so a sampler or a scheduler sees it
 * as the program's own. Built against include/perusetrace/annotate.h only. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <perusetrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static perusetrace_attribute_t phase;

/* DELAY seconds of computation in phase=NAME. */
static void compute(const char* name, double delay) {
  perusetrace_begin(phase, name);
  app_busy(delay);
  perusetrace_end(phase);
}

/* Rank 0's part of a late sender: DELAY seconds in phase=NAME, then VALUE to rank DEST. */
static void late_send(const char* name, double delay, int value, int dest, int tag) {
  compute(name, delay);
  MPI_Send(&value, 1, MPI_INT, dest, tag, MPI_COMM_WORLD);
}

enum { kLarge = 1 << 20 };

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: wait_states SCENARIO [DELAY_MS]\n");
    return 2;
  }
  const char* s = argv[1];
  const double delay = (argc > 2 ? atof(argv[2]) : 200.0) / 1e3;
  phase = perusetrace_attribute(NULL, "phase", 0);
  int rank = 0, size = 0;
  app_init(&argc, &argv, &rank, &size);
  app_require(size >= 4, "wait_states", "needs 4 ranks");
  char* buf = calloc(kLarge, 1);
  int value = rank, result = 0;
  MPI_Status status;
  MPI_Request request;
  MPI_Comm start;
  MPI_Win win = MPI_WIN_NULL;
  if (!strcmp(s, "fence") || !strcmp(s, "late-post") || !strcmp(s, "early-wait") ||
      !strcmp(s, "lock"))
    MPI_Win_create(buf, kLarge, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  /* wrong-order: the message that could have been received first is sent before the start. */
  if (!strcmp(s, "wrong-order") && rank == 1) MPI_Send(&value, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
  MPI_Comm_dup(MPI_COMM_WORLD, &start);
  if (!strcmp(s, "late-sender")) {
    if (rank == 0) {
      late_send("late", delay, value, 1, 7);
    } else if (rank == 1) {
      MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
      if (status.MPI_SOURCE != 0 || status.MPI_TAG != 7) return 1;
    }
  } else if (!strcmp(s, "wrong-order")) {
    if (rank == 0) {
      late_send("late", delay, value, 2, 2);
    } else if (rank == 2) {
      MPI_Recv(&result, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &status);
      MPI_Recv(&result, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &status);
    }
  } else if (!strcmp(s, "late-receiver") || !strcmp(s, "late-receiver-ssend") ||
             !strcmp(s, "late-receiver-isend")) {
    const int ssend = !strcmp(s, "late-receiver-ssend");
    const int count = ssend ? 4 : kLarge;
    if (rank == 0) {
      if (ssend) {
        MPI_Ssend(buf, count, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
      } else if (!strcmp(s, "late-receiver-isend")) {
        MPI_Isend(buf, count, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, &status);
      } else {
        MPI_Send(buf, count, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
      }
    } else if (rank == 1) {
      compute("late", delay);
      MPI_Recv(buf, count, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &status);
    }
  } else if (!strcmp(s, "barrier")) {
    if (rank == 2) compute("late", delay);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (!strcmp(s, "nxn")) {
    if (rank == 3) compute("late", delay);
    MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } else if (!strcmp(s, "bcast")) {
    if (rank == 1) compute("late", delay);
    MPI_Bcast(&value, 1, MPI_INT, 1, MPI_COMM_WORLD);
  } else if (!strcmp(s, "reduce")) {
    if (rank != 0) compute("late", delay);
    MPI_Reduce(&value, &result, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(s, "chain")) {
    if (rank == 0) {
      late_send("A", delay, value, 1, 4);
    } else if (rank == 1) {
      perusetrace_begin(phase, "B");
      MPI_Recv(&result, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, &status);
      MPI_Send(&value, 1, MPI_INT, 2, 5, MPI_COMM_WORLD);
      perusetrace_end(phase);
    } else if (rank == 2) {
      MPI_Recv(&result, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &status);
    }
  } else if (!strcmp(s, "fence")) {
    if (rank == 1) compute("late", delay);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
  } else if (!strcmp(s, "late-post") || !strcmp(s, "early-wait")) {
    const int late_post = !strcmp(s, "late-post");
    MPI_Group world, peer;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int other = rank == 0 ? 1 : 0;
    MPI_Group_incl(world, 1, &other, &peer);
    if (rank == 0) {
      MPI_Win_start(peer, 0, win);
      if (!late_post) compute("late", delay);
      MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
      MPI_Win_complete(win);
    } else if (rank == 1) {
      if (late_post) compute("late", delay);
      MPI_Win_post(peer, 0, win);
      MPI_Win_wait(win);
    }
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
  } else if (!strcmp(s, "lock")) {
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
      MPI_Put(&value, 1, MPI_INT, 2, 0, 1, MPI_INT, win);
      MPI_Win_flush(2, win); /* the lock is held from here on, lazily granted or not */
      MPI_Send(&value, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
      compute("late", delay);
      MPI_Win_unlock(2, win);
    } else if (rank == 1) {
      MPI_Recv(&result, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &status);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 2, 0, win);
      MPI_Put(&value, 1, MPI_INT, 2, 1, 1, MPI_INT, win);
      MPI_Win_unlock(2, win);
    }
    MPI_Win_free(&win);
  } else if (!strcmp(s, "nonblocking")) {
    if (rank == 3) compute("late", delay);
    MPI_Iallreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, &status);
  } else if (!strcmp(s, "test-loop")) {
    if (rank == 0) {
      late_send("late", delay, value, 1, 6);
    } else if (rank == 1) {
      int done = 0;
      MPI_Irecv(&result, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &request);
      while (!done) MPI_Test(&request, &done, &status);
    }
  } else if (!strcmp(s, "probe-loop")) {
    if (rank == 0) {
      late_send("late", delay, value, 1, 8);
    } else if (rank == 1) {
      int found = 0;
      while (!found) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &found, &status);
      MPI_Recv(&result, 1, MPI_INT, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &status);
    }
  } else if (!strcmp(s, "alternating")) {
    for (int i = 0; i < size; ++i) {
      compute(i == rank ? "slow" : "fast", i == rank ? delay : delay / 4);
      MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
  } else {
    if (rank == 0) fprintf(stderr, "wait_states: unknown scenario %s\n", s);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  free(buf);
  MPI_Comm_free(&start);
  MPI_Finalize();
  return 0;
}
