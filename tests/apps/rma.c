/* One-sided communication with counts the trace checks know (tests/common/trace_checks.py,
 * check_rma): on 4 ranks, every operation, every way of synchronising and every kind of window,
 * each step's data checked. r+k means rank (r + k) % 4.
 *
 *   A  "halo window" (MPI_Win_create, then MPI_Win_set_name) on MPI_COMM_WORLD, 3 fences:
 *      epoch 1: MPI_Put of 4 ints to r+1, MPI_Get of 2 ints from r+2, MPI_Accumulate of 3 ints
 *      to r+3, an MPI_Put to MPI_PROC_NULL (moves nothing); epoch 2: MPI_Put of 1 int to r+1.
 *   B  the same window, PSCW: rank 0 -> 1 (MPI_Put of 8 ints, MPI_Get_accumulate of 2 ints)
 *      with rank 1 in MPI_Win_wait; rank 2 -> 3 (MPI_Put of 8 ints) with rank 3 in an
 *      MPI_Win_test loop.
 *   C  MPI_Win_allocate window, passive target: an exclusive lock on r+1 (MPI_Put of 2 ints,
 *      MPI_Fetch_and_op of 1 int), a shared lock on itself (MPI_Compare_and_swap of 1 int), then
 *      MPI_Win_lock_all: MPI_Put of 1 int to r+1, MPI_Win_flush(r+1), MPI_Put of 1 int to r+2,
 *      MPI_Win_flush_local(r+2), MPI_Get of 1 int from r+3, MPI_Win_flush_local_all,
 *      MPI_Win_sync, MPI_Put of 1 int to r+1, MPI_Win_unlock_all.
 *   D  the same window in MPI_Win_lock_all: MPI_Rput of 4 ints to r+1 (MPI_Wait), MPI_Rget of
 *      4 ints from r+2 (an MPI_Test loop), MPI_Raccumulate of 2 ints to r+3 and
 *      MPI_Rget_accumulate of 1 int with r+1 (one MPI_Waitall), MPI_Win_unlock_all.
 *   E  MPI_Win_allocate_shared on MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): 2 fences around an
 *      MPI_Put of 1 int to r+1.
 *   F  MPI_Win_create_dynamic with a buffer attached: MPI_Win_lock_all, MPI_Put of 1 int to
 *      r+1, MPI_Win_unlock_all, then detached.
 *
 * With the argument `die-in-epoch`, rank 1 calls abort() inside phase C's exclusive-lock epoch
 * (after its MPI_Put, before MPI_Win_unlock): the crash test recovers that journal. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "rma: rank %d: %s is wrong\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

static int peer(int k) {
  return (rank + k) % size;
}

int main(int argc, char** argv) {
  app_init(&argc, &argv, &rank, &size);
  app_require(size == 4, "rma", "run on 4 ranks");
  const int die = argc > 1 && strcmp(argv[1], "die-in-epoch") == 0;

  /* A: fences. */
  int halo[64], mine[8], got[2];
  for (int i = 0; i < 64; ++i) halo[i] = 1000 * rank + i;
  for (int i = 0; i < 8; ++i) mine[i] = 100 * rank + i;
  MPI_Win win_a;
  MPI_Win_create(halo, sizeof halo, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win_a);
  MPI_Win_set_name(win_a, "halo window");
  MPI_Win_fence(0, win_a);
  MPI_Put(mine, 4, MPI_INT, peer(1), 0, 4, MPI_INT, win_a);
  MPI_Get(got, 2, MPI_INT, peer(2), 10, 2, MPI_INT, win_a);
  MPI_Accumulate(mine, 3, MPI_INT, peer(3), 20, 3, MPI_INT, MPI_SUM, win_a);
  MPI_Put(mine, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win_a);
  MPI_Win_fence(0, win_a);
  check(got[0] == 1000 * peer(2) + 10 && got[1] == 1000 * peer(2) + 11, "MPI_Get's data");
  check(halo[0] == 100 * peer(3) && halo[3] == 100 * peer(3) + 3, "MPI_Put's data");
  check(halo[20] == 1000 * rank + 20 + 100 * peer(1), "MPI_Accumulate's data");
  MPI_Put(&mine[7], 1, MPI_INT, peer(1), 30, 1, MPI_INT, win_a);
  MPI_Win_fence(0, win_a);
  check(halo[30] == 100 * peer(3) + 7, "the second epoch's MPI_Put");

  /* B: PSCW between 0 -> 1 and 2 -> 3. */
  MPI_Group world_group, partner;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int other = rank % 2 == 0 ? rank + 1 : rank - 1;
  MPI_Group_incl(world_group, 1, &other, &partner);
  if (rank % 2 == 0) {
    int fetched[2];
    MPI_Win_start(partner, 0, win_a);
    MPI_Put(mine, 8, MPI_INT, other, 40, 8, MPI_INT, win_a);
    if (rank == 0)
      MPI_Get_accumulate(mine, 2, MPI_INT, fetched, 2, MPI_INT, other, 50, 2, MPI_INT, MPI_SUM,
                         win_a);
    MPI_Win_complete(win_a);
    if (rank == 0) check(fetched[0] == 1000 + 50, "MPI_Get_accumulate's result");
  } else {
    MPI_Win_post(partner, 0, win_a);
    if (rank == 1) {
      MPI_Win_wait(win_a);
    } else {
      int done = 0;
      while (!done) MPI_Win_test(win_a, &done);
    }
    check(halo[47] == 100 * other + 7, "the PSCW MPI_Put");
    if (rank == 1) check(halo[50] == 1000 + 50, "MPI_Get_accumulate's sum");
  }
  MPI_Group_free(&partner);
  MPI_Group_free(&world_group);
  MPI_Barrier(MPI_COMM_WORLD);

  /* C: passive target. */
  int* shared_base = NULL;
  MPI_Win win_c;
  MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &shared_base,
                   &win_c);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win_c);
  for (int i = 0; i < 64; ++i) shared_base[i] = 0;
  MPI_Win_unlock(rank, win_c);
  MPI_Barrier(MPI_COMM_WORLD);
  /* The self lock above is the program's own: the trace checks count from here. */
  int one = 1, old = -1, expected_old = 0, swap_in = 7, swapped = -1;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer(1), 0, win_c);
  MPI_Put(mine, 2, MPI_INT, peer(1), 0, 2, MPI_INT, win_c);
  if (die && rank == 1) abort(); /* inside an open passive-target epoch */
  MPI_Fetch_and_op(&one, &old, MPI_INT, peer(1), 10, MPI_SUM, win_c);
  MPI_Win_unlock(peer(1), win_c);
  check(old == 0, "MPI_Fetch_and_op's old value");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c);
  MPI_Compare_and_swap(&swap_in, &expected_old, &swapped, MPI_INT, rank, 11, win_c);
  MPI_Win_unlock(rank, win_c);
  check(swapped == 0, "MPI_Compare_and_swap's old value");
  MPI_Barrier(MPI_COMM_WORLD);
  int fetched = -1;
  MPI_Win_lock_all(0, win_c);
  MPI_Put(&mine[1], 1, MPI_INT, peer(1), 20, 1, MPI_INT, win_c);
  MPI_Win_flush(peer(1), win_c);
  MPI_Put(&mine[2], 1, MPI_INT, peer(2), 21, 1, MPI_INT, win_c);
  MPI_Win_flush_local(peer(2), win_c);
  MPI_Get(&fetched, 1, MPI_INT, peer(3), 0, 1, MPI_INT, win_c);
  MPI_Win_flush_local_all(win_c);
  MPI_Win_sync(win_c);
  MPI_Put(&mine[3], 1, MPI_INT, peer(1), 22, 1, MPI_INT, win_c);
  MPI_Win_unlock_all(win_c);
  check(fetched == 100 * peer(2), "the passive MPI_Get");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c);
  check(shared_base[0] == 100 * peer(3) && shared_base[10] == 1 && shared_base[11] == 7 &&
            shared_base[20] == 100 * peer(3) + 1 && shared_base[21] == 100 * peer(2) + 2 &&
            shared_base[22] == 100 * peer(3) + 3,
        "the passive-target data");
  MPI_Win_unlock(rank, win_c);
  MPI_Barrier(MPI_COMM_WORLD);

  /* D: request-based operations. */
  int rget[4], racc[2] = {5, 6}, rga_in = 2, rga_out = -1, flag = 0;
  MPI_Request put_request, get_request, pair[2];
  MPI_Win_lock_all(0, win_c);
  MPI_Rput(mine, 4, MPI_INT, peer(1), 30, 4, MPI_INT, win_c, &put_request);
  MPI_Wait(&put_request, MPI_STATUS_IGNORE);
  MPI_Rget(rget, 4, MPI_INT, peer(2), 0, 4, MPI_INT, win_c, &get_request);
  while (!flag) MPI_Test(&get_request, &flag, MPI_STATUS_IGNORE);
  MPI_Raccumulate(racc, 2, MPI_INT, peer(3), 40, 2, MPI_INT, MPI_SUM, win_c, &pair[0]);
  MPI_Rget_accumulate(&rga_in, 1, MPI_INT, &rga_out, 1, MPI_INT, peer(1), 50, 1, MPI_INT, MPI_SUM,
                      win_c, &pair[1]);
  MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
  MPI_Win_unlock_all(win_c);
  check(rget[0] == 100 * peer(1), "MPI_Rget's data");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win_c);
  check(shared_base[33] == 100 * peer(3) + 3 && shared_base[40] == 5 && shared_base[50] == 2,
        "the request-based data");
  MPI_Win_unlock(rank, win_c);
  MPI_Barrier(MPI_COMM_WORLD);

  /* E: a shared-memory window. */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  int* node_base = NULL;
  MPI_Win win_e;
  MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &node_base, &win_e);
  MPI_Win_fence(0, win_e);
  MPI_Put(&node_rank, 1, MPI_INT, (node_rank + 1) % node_size, 0, 1, MPI_INT, win_e);
  MPI_Win_fence(0, win_e);
  check(*node_base == (node_rank + node_size - 1) % node_size, "the shared window's data");

  /* F: a dynamic window. */
  int attached = -1;
  MPI_Aint address, addresses[4];
  MPI_Win win_f;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win_f);
  MPI_Win_attach(win_f, &attached, sizeof attached);
  MPI_Get_address(&attached, &address);
  MPI_Allgather(&address, 1, MPI_AINT, addresses, 1, MPI_AINT, MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win_f);
  MPI_Put(&rank, 1, MPI_INT, peer(1), addresses[peer(1)], 1, MPI_INT, win_f);
  MPI_Win_unlock_all(win_f);
  MPI_Barrier(MPI_COMM_WORLD);
  check(attached == peer(3), "the dynamic window's data");
  MPI_Win_detach(win_f, &attached);

  MPI_Win_free(&win_f);
  MPI_Win_free(&win_e);
  MPI_Win_free(&win_c);
  MPI_Win_free(&win_a);
  MPI_Comm_free(&node);
  if (rank == 0) printf("rma: every check passed\n");
  MPI_Finalize();
  return 0;
}
