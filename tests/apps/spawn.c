/* Dynamic processes with known counts. The parent job (any size) spawns two children of this
 * same program with MPI_Comm_spawn, or with MPI_Comm_spawn_multiple (one command per child),
 * from MPI_COMM_WORLD with its last rank as root. Over the intercommunicator every parent sends
 * each child TO_CHILD messages (MPI_Send, tag 10) and receives TO_PARENT from each
 * (MPI_Irecv/MPI_Waitall, tag 20; the children use MPI_Isend/MPI_Wait); both sides meet in one
 * MPI_Barrier on it. The children also exchange AMONG messages each way in their own
 * MPI_COMM_WORLD (MPI_Sendrecv, tag 30). Everyone disconnects and finalizes. Every message
 * carries (sender, index), checked on receipt; rank 0 of each side prints its expectations:
 *   parent: "spawn parent ranks P children 2 to_child N to_parent N"
 *   child:  "spawn child ranks 2 parents P among N"
 * With "untraced-children" the spawn's info sets "env" to "LD_PRELOAD=": children started from
 * a preloaded parent run without the tracer. With "children-exit" the children leave with
 * exit(0) after disconnecting, without MPI_Finalize (mpirun then reports them). With "nested"
 * the children, once done with their parent, spawn two children of their own the same way.
 *   spawn [single|multiple] [untraced-children|children-exit|nested] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kChildren = 2, kToChild = 3, kToParent = 2, kAmong = 4, kInts = 8 };

static void fill(int* buf, int sender, int index) {
  for (int i = 0; i < kInts; ++i) buf[i] = sender * 1009 + index * 31 + i;
}

static int check(const int* buf, int sender, int index) {
  for (int i = 0; i < kInts; ++i)
    if (buf[i] != sender * 1009 + index * 31 + i) return 0;
  return 1;
}

// `child_mode`: what the children do beyond their part ("exit", "nested"), or NULL.
static int parent(const char* self, int multiple, int untraced_children, char* child_mode) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int root = size - 1;
  char* child_args[] = {"child", child_mode, NULL};
  MPI_Comm inter;
  int codes[kChildren];
  MPI_Info info = MPI_INFO_NULL;
  if (untraced_children) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "env", "LD_PRELOAD=");
  }
  if (multiple) {
    char* commands[kChildren] = {(char*)self, (char*)self};
    char** argvs[kChildren] = {child_args, child_args};
    const int counts[kChildren] = {1, 1};
    const MPI_Info infos[kChildren] = {info, info};
    MPI_Comm_spawn_multiple(kChildren, commands, argvs, counts, infos, root, MPI_COMM_WORLD, &inter,
                            codes);
  } else {
    MPI_Comm_spawn(self, child_args, kChildren, info, root, MPI_COMM_WORLD, &inter, codes);
  }
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  int children = 0, bad = 0;
  MPI_Comm_remote_size(inter, &children);
  if (children != kChildren) {
    fprintf(stderr, "spawn: %d children, expected %d\n", children, kChildren);
    return 1;
  }
  int buf[kInts];
  for (int c = 0; c < kChildren; ++c)
    for (int i = 0; i < kToChild; ++i) {
      fill(buf, rank, i);
      MPI_Send(buf, kInts, MPI_INT, c, 10, inter);
    }
  int in[kChildren * kToParent][kInts];
  MPI_Request reqs[kChildren * kToParent];
  for (int c = 0; c < kChildren; ++c)
    for (int i = 0; i < kToParent; ++i)
      MPI_Irecv(in[c * kToParent + i], kInts, MPI_INT, c, 20, inter, &reqs[c * kToParent + i]);
  MPI_Waitall(kChildren * kToParent, reqs, MPI_STATUSES_IGNORE);
  for (int c = 0; c < kChildren; ++c)
    for (int i = 0; i < kToParent; ++i) bad += !check(in[c * kToParent + i], c, i);
  MPI_Barrier(inter);
  MPI_Comm_disconnect(&inter);
  if (rank == 0)
    printf("spawn parent ranks %d children %d to_child %d to_parent %d\n", size, kChildren,
           kToChild, kToParent);
  if (bad) fprintf(stderr, "spawn: parent %d received %d damaged messages\n", rank, bad);
  return bad != 0;
}

static int child(const char* self, MPI_Comm inter, const char* mode) {
  int rank, size, parents = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_remote_size(inter, &parents);
  int buf[kInts];
  for (int p = 0; p < parents; ++p)
    for (int i = 0; i < kToChild; ++i) {
      MPI_Recv(buf, kInts, MPI_INT, p, 10, inter, MPI_STATUS_IGNORE);
      bad += !check(buf, p, i);
    }
  for (int p = 0; p < parents; ++p)
    for (int i = 0; i < kToParent; ++i) {
      MPI_Request req;
      fill(buf, rank, i);
      MPI_Isend(buf, kInts, MPI_INT, p, 20, inter, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  const int other = (rank + 1) % size;
  int out[kInts];
  for (int i = 0; i < kAmong; ++i) {
    fill(out, rank, i);
    MPI_Sendrecv(out, kInts, MPI_INT, other, 30, buf, kInts, MPI_INT, other, 30, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    bad += !check(buf, other, i);
  }
  MPI_Barrier(inter);
  MPI_Comm_disconnect(&inter);
  if (rank == 0) printf("spawn child ranks %d parents %d among %d\n", size, parents, kAmong);
  if (bad) fprintf(stderr, "spawn: child %d received %d damaged messages\n", rank, bad);
  if (mode != NULL && strcmp(mode, "exit") == 0) {
    fflush(stdout);
    exit(bad != 0);
  }
  if (mode != NULL && strcmp(mode, "nested") == 0) bad += parent(self, 0, 0, NULL);
  return bad != 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm inter;
  MPI_Comm_get_parent(&inter);
  int failed;
  if (inter == MPI_COMM_NULL) {
    const int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
    const int untraced = argc > 2 && strcmp(argv[2], "untraced-children") == 0;
    const int children_exit = argc > 2 && strcmp(argv[2], "children-exit") == 0;
    const int nested = argc > 2 && strcmp(argv[2], "nested") == 0;
    if ((argc > 1 && !multiple && strcmp(argv[1], "single") != 0) ||
        (argc > 2 && !untraced && !children_exit && !nested)) {
      fprintf(stderr, "usage: spawn [single|multiple] [untraced-children|children-exit|nested]\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    failed = parent(argv[0], multiple, untraced, children_exit ? "exit" : nested ? "nested" : NULL);
  } else {
    failed = child(argv[0], inter, argc > 2 ? argv[2] : NULL);
  }
  MPI_Finalize();
  return failed;
}
