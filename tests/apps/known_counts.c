/* A program whose MPI traffic is known exactly. Rank 0 prints "expect KIND N" lines with the
 * totals over all ranks, which tests/common/trace_checks.py compares with the trace. Run with 4
 * ranks. Each kind of request completion (wait, waitall, waitany, waitsome, test, testall) and each
 * way to create a communicator the tracer must follow appears at least once. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { ROUNDS = 10 };

static int rank, size;
static long sends, recvs, isends, irecvs, collectives, nonblocking_collectives, comms;

static void exchange_blocking(MPI_Comm comm, int tag) {
  int me, n, value = 7;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const int partner = me ^ 1;
  if (partner >= n) return;
  if (me % 2 == 0) {
    MPI_Send(&value, 1, MPI_INT, partner, tag, comm);
    MPI_Recv(&value, 1, MPI_INT, partner, tag, comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(&value, 1, MPI_INT, partner, tag, comm, MPI_STATUS_IGNORE);
    MPI_Send(&value, 1, MPI_INT, partner, tag, comm);
  }
  sends++, recvs++;
}

static void ring_nonblocking(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[4] = {1, 2, 3, 4}, in[4];
  MPI_Request r[4];
  /* waitall */
  MPI_Irecv(&in[0], 1, MPI_INT, left, 20, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(&out[0], 1, MPI_INT, right, 20, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  /* wait, one by one, around blocking calls */
  char big_out[1000] = {0}, big_in[1000];
  MPI_Irecv(&in[1], 1, MPI_INT, left, 21, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(big_out, 1000, MPI_BYTE, right, 22, MPI_COMM_WORLD, &r[1]);
  MPI_Recv(big_in, 1000, MPI_BYTE, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&out[1], 1, MPI_INT, right, 21, MPI_COMM_WORLD);
  MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  /* waitany then waitsome */
  MPI_Irecv(&in[2], 1, MPI_INT, left, 23, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&in[3], 1, MPI_INT, left, 24, MPI_COMM_WORLD, &r[1]);
  MPI_Isend(&out[2], 1, MPI_INT, right, 23, MPI_COMM_WORLD, &r[2]);
  MPI_Isend(&out[3], 1, MPI_INT, right, 24, MPI_COMM_WORLD, &r[3]);
  int index, done = 0, outcount, indices[4];
  MPI_Waitany(4, r, &index, MPI_STATUS_IGNORE);
  done = 1;
  while (done < 4) {
    MPI_Waitsome(4, r, &outcount, indices, MPI_STATUSES_IGNORE);
    done += outcount;
  }
  /* test and testall */
  int flag = 0;
  MPI_Irecv(&in[0], 1, MPI_INT, left, 25, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(&out[0], 1, MPI_INT, right, 25, MPI_COMM_WORLD, &r[1]);
  while (!flag) MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
  flag = 0;
  while (!flag) MPI_Testall(1, &r[0], &flag, MPI_STATUSES_IGNORE);
  isends += 5, irecvs += 5, sends++, recvs++;
}

static void persistent(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = rank, in = -1;
  MPI_Request r[2];
  MPI_Recv_init(&in, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r[0]);
  MPI_Send_init(&out, 1, MPI_INT, right, 30, MPI_COMM_WORLD, &r[1]);
  for (int i = 0; i < 3; ++i) {
    MPI_Startall(2, r);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
  isends += 3, irecvs += 3;
}

static void misc_p2p(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out = rank, in;
  MPI_Sendrecv(&out, 1, MPI_INT, right, 40, &in, 1, MPI_INT, left, 40, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Sendrecv_replace(&out, 1, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  sends += 2, recvs += 2;
  /* Matched probes: the receive learns its communicator from the probe. */
  const int partner = rank ^ 1;
  MPI_Message message;
  MPI_Request request;
  int flag = 0;
  MPI_Send(&out, 1, MPI_INT, partner, 43, MPI_COMM_WORLD);
  MPI_Mprobe(partner, 43, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE);
  MPI_Mrecv(&in, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
  MPI_Send(&out, 1, MPI_INT, partner, 44, MPI_COMM_WORLD);
  while (!flag) MPI_Improbe(partner, 44, MPI_COMM_WORLD, &flag, &message, MPI_STATUS_IGNORE);
  MPI_Imrecv(&in, 1, MPI_INT, &message, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  sends += 2, recvs += 1, irecvs += 1;
  /* Messages to and from MPI_PROC_NULL are no messages: not recorded. */
  MPI_Send(&out, 1, MPI_INT, MPI_PROC_NULL, 42, MPI_COMM_WORLD);
  MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void world_collectives(void) {
  int v = rank, sum = 0, all[64], counts[64], displs[64];
  for (int i = 0; i < size; ++i) counts[i] = 1, displs[i] = i;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gatherv(&v, 1, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(all, 1, MPI_INT, all + 32, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(all, &v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  collectives += 12;
  nonblocking_collectives += 1;
}

static void communicators(void) {
  MPI_Comm dup, half, cart, row, evens = MPI_COMM_NULL, inter, merged, idup;
  int v = 1, sum;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);                    /* 1 communicator */
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half); /* 2: one per colour */
  int dims[2] = {2, size / 2}, periods[2] = {0, 0}, keep[2] = {0, 1};
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart); /* 1 */
  MPI_Cart_sub(cart, keep, &row);                              /* 2: one per row */
  MPI_Group world_group, even_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  int range[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(world_group, 1, range, &even_group);
  if (rank % 2 == 0) MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 5, &evens); /* 1 */
  /* Intercommunicator between the two halves; leaders are world ranks 0 and 1. */
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 6, &inter); /* 1 */
  MPI_Intercomm_merge(inter, rank % 2, &merged);                                   /* 1 */
  MPI_Request r;
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &r); /* 1 */
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  comms += 10;

  exchange_blocking(dup, 50);
  exchange_blocking(half, 51);
  exchange_blocking(merged, 52);
  exchange_blocking(idup, 53);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, row);
  collectives += 1;

  MPI_Group_free(&world_group);
  MPI_Group_free(&even_group);
  MPI_Comm_free(&idup);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  if (evens != MPI_COMM_NULL) MPI_Comm_free(&evens);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
}

int main(int argc, char** argv) {
  app_init(&argc, &argv, &rank, &size);
  app_require(size == 4, "known_counts", "run with 4 ranks");
  for (int i = 0; i < ROUNDS; ++i) exchange_blocking(MPI_COMM_WORLD, 10);
  ring_nonblocking();
  persistent();
  misc_p2p();
  world_collectives();
  communicators();

  long mine[6] = {sends, recvs, isends, irecvs, collectives, nonblocking_collectives}, total[6];
  MPI_Reduce(mine, total, 6, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  collectives++; /* that reduce */
  if (rank == 0) {
    printf("expect MpiSend %ld\nexpect MpiRecv %ld\n", total[0], total[1]);
    printf("expect MpiIsend %ld\nexpect MpiIsendComplete %ld\n", total[2], total[2]);
    printf("expect MpiIrecvRequest %ld\nexpect MpiIrecv %ld\n", total[3], total[3]);
    printf("expect MpiCollectiveBegin %ld\nexpect MpiCollectiveEnd %ld\n", total[4] + size,
           total[4] + size);
    printf("expect NonBlockingCollectiveRequest %ld\n", total[5]);
    printf("expect NonBlockingCollectiveComplete %ld\n", total[5]);
    printf("expect comms %ld\n", comms);
    printf("expect peruse_comms 6\n");
  }
  MPI_Finalize();
  return 0;
}
