/* Communicators named with MPI_Comm_set_name, on 4 ranks (3 or more): the trace
 * must call each by the name the program gave it, one name across ranks. Every rank sends one
 * message around a ring on each communicator but MPI_COMM_SELF. Rank 0 prints the names the
 * archive must hold, "expect_name NAME", and "expect unnamed 1" for the one left unnamed.
 *
 *   MPI_COMM_WORLD          renamed "everyone" by every rank
 *   MPI_COMM_SELF           renamed by ranks 1 and 3, "me-1" and "me-3": the lowest rank's wins
 *   MPI_Comm_split_type     shared memory, named "node" by every rank
 *   a duplicate             named "scratch", then "dup", by every rank: the latest name holds
 *   a reversed split        every rank names it "rev-by-RANK": its rank 0 (world rank size-1)
 *                           wins over the lower world ranks
 *   another duplicate       named "partial-2" by rank 2 only
 *   a third duplicate       never named: "comm N (MPI_Comm_dup)"
 */
#include <mpi.h>
#include <stdio.h>

static void ring(MPI_Comm comm) {
  int rank, size, got = -1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size,
               7, comm, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  int rank, size;
  char name[MPI_MAX_OBJECT_NAME];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) fprintf(stderr, "comm_names: run it on 3 ranks or more\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  MPI_Comm_set_name(MPI_COMM_WORLD, "everyone");
  if (rank % 2 == 1) {
    snprintf(name, sizeof name, "me-%d", rank);
    MPI_Comm_set_name(MPI_COMM_SELF, name);
  }
  MPI_Comm node, dup, rev, partial, unnamed;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_set_name(node, "node");
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_name(dup, "scratch");
  MPI_Comm_set_name(dup, "dup");
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  snprintf(name, sizeof name, "rev-by-%d", rank);
  MPI_Comm_set_name(rev, name);
  MPI_Comm_dup(MPI_COMM_WORLD, &partial);
  if (rank == 2) MPI_Comm_set_name(partial, "partial-2");
  MPI_Comm_dup(MPI_COMM_WORLD, &unnamed);

  MPI_Comm comms[] = {MPI_COMM_WORLD, node, dup, rev, partial, unnamed};
  for (int i = 0; i < (int)(sizeof comms / sizeof comms[0]); ++i) ring(comms[i]);
  if (rank == 0) {
    printf(
        "expect_name everyone\nexpect_name me-1\nexpect_name node\nexpect_name dup\n"
        "expect_name rev-by-%d\nexpect_name partial-2\nexpect unnamed 1\n",
        size - 1);
    fflush(stdout);
  }
  MPI_Comm_free(&node);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&rev);
  MPI_Comm_free(&partial);
  MPI_Comm_free(&unnamed);
  MPI_Finalize();
  return 0;
}
