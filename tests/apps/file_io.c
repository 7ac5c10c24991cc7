/* MPI-IO with every kind of call the tracer records, on any number of ranks (the tests use 4).
 * Each rank keeps a tally of what it did to each file and prints it at the end, one line per
 * file: "io RANK FILE KEY=VALUE ...", the ground truth the trace and the report are held to.
 *
 *   file_io.dat       12345 bytes before the run (rank 0 writes it with stdio, which the tracer
 *                     does not see), opened by all ranks on a duplicate of MPI_COMM_WORLD named
 *                     "io": per rank five writes and five reads of every kind (independent,
 *                     collective, nonblocking independent, nonblocking collective, split
 *                     collective), a sync, a seek; each block read is checked
 *   file_io_meta.dat  created by all on MPI_COMM_WORLD: preallocated, resized to 1000 bytes,
 *                     closed, opened again (its size then 1000), closed, deleted by rank 0
 *   file_io_self.R.dat  rank R's own, on MPI_COMM_SELF, MPI_MODE_DELETE_ON_CLOSE: one write
 *   file_io_other.dat   made by rank 1 with stdio and deleted with MPI_File_delete, never opened
 *
 *   file_io [exit]    exit: every rank exits after its writes and the sync, file_io.dat still
 *                     open, without MPI_Finalize (for `perusetrace recover`)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000, SELF_BYTES = 100, FILES = 4 };
static const long kPresize = 12345;
static const MPI_Offset kPreallocated = 65536, kResized = 1000;

/* What one rank did to one file. Kinds: independent, collective, and their nonblocking ones. */
enum { READ, WRITE };
enum { INDEPENDENT, COLLECTIVE, INDEPENDENT_NONBLOCKING, COLLECTIVE_NONBLOCKING, KINDS };
static const char* const kKinds[KINDS] = {"independent", "collective", "independent_nonblocking",
                                          "collective_nonblocking"};
struct tally {
  char name[64];
  int opens, closes, ops[2], kind_ops[KINDS], flushes, seeks, resizes, deletes;
  long bytes[2], kind_bytes[KINDS];
  char sizes[64];   /* the sizes at each open, "12345" or "0,1000" */
  char resized[64]; /* the sizes set or preallocated, in order */
};
static struct tally files[FILES];

static void check(int ok, int code) {
  if (!ok) MPI_Abort(MPI_COMM_WORLD, code);
}

static void io(struct tally* t, int mode, int kind, long bytes) {
  ++t->ops[mode];
  t->bytes[mode] += bytes;
  ++t->kind_ops[kind];
  t->kind_bytes[kind] += bytes;
}

static MPI_File opened(struct tally* t, MPI_Comm comm, int amode) {
  MPI_File fh;
  check(MPI_File_open(comm, t->name, amode, MPI_INFO_NULL, &fh) == MPI_SUCCESS, 2);
  MPI_Offset size;
  MPI_File_get_size(fh, &size);
  /* Opening is collective but need not synchronise: no rank writes before all saw the size. */
  MPI_Barrier(comm);
  snprintf(t->sizes + strlen(t->sizes), sizeof t->sizes - strlen(t->sizes), "%s%lld",
           t->opens ? "," : "", (long long)size);
  ++t->opens;
  return fh;
}

static void closed(struct tally* t, MPI_File* fh) {
  check(MPI_File_close(fh) == MPI_SUCCESS, 3);
  ++t->closes;
}

static void note_resize(struct tally* t, MPI_Offset size) {
  snprintf(t->resized + strlen(t->resized), sizeof t->resized - strlen(t->resized), "%s%lld",
           t->resizes ? "," : "", (long long)size);
  ++t->resizes;
}

static void print(int rank) {
  for (int f = 0; f < FILES; ++f) {
    const struct tally* t = &files[f];
    if (!t->opens && !t->deletes) continue;
    printf(
        "io %d %s opens=%d closes=%d sizes=%s reads=%d read_bytes=%ld writes=%d "
        "write_bytes=%ld flushes=%d seeks=%d resizes=%s deletes=%d",
        rank, t->name, t->opens, t->closes, t->opens ? t->sizes : "-", t->ops[READ], t->bytes[READ],
        t->ops[WRITE], t->bytes[WRITE], t->flushes, t->seeks, t->resizes ? t->resized : "-",
        t->deletes);
    for (int k = 0; k < KINDS; ++k)
      printf(" %s=%d %s_bytes=%ld", kKinds[k], t->kind_ops[k], kKinds[k], t->kind_bytes[k]);
    printf("\n");
  }
  fflush(stdout);
}

int main(int argc, char** argv) {
  const int die = argc > 1 && strcmp(argv[1], "exit") == 0;
  int rank, data[N], back[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct tally *shared = &files[0], *meta = &files[1], *self = &files[2], *other = &files[3];
  strcpy(shared->name, "file_io.dat");
  strcpy(meta->name, "file_io_meta.dat");
  snprintf(self->name, sizeof self->name, "file_io_self.%d.dat", rank);
  strcpy(other->name, "file_io_other.dat");
  if (rank == 0) { /* stdio, not MPI-IO: the file's size before the run opens it */
    FILE* f = fopen(shared->name, "wb");
    for (long i = 0; i < kPresize; ++i) fputc('x', f);
    fclose(f);
    remove(meta->name);
  }
  if (rank == 1) fclose(fopen(other->name, "wb"));
  MPI_Barrier(MPI_COMM_WORLD);

  MPI_Comm io_comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &io_comm);
  MPI_Comm_set_name(io_comm, "io");
  for (int i = 0; i < N; ++i) data[i] = rank * N + i;
  const MPI_Offset at = kPresize + (MPI_Offset)sizeof data * 5 * rank; /* this rank's 5 blocks */
  const MPI_Offset block = sizeof data;
  MPI_Request request;
  MPI_File fh = opened(shared, io_comm, MPI_MODE_RDWR);
  MPI_File_write_at(fh, at, data, N, MPI_INT, MPI_STATUS_IGNORE);
  io(shared, WRITE, INDEPENDENT, sizeof data);
  MPI_File_write_at_all(fh, at + block, data, N, MPI_INT, MPI_STATUS_IGNORE);
  io(shared, WRITE, COLLECTIVE, sizeof data);
  MPI_File_iwrite_at(fh, at + 2 * block, data, N / 2, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  io(shared, WRITE, INDEPENDENT_NONBLOCKING, sizeof data / 2);
  MPI_File_iwrite_at_all(fh, at + 3 * block, data, N, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  io(shared, WRITE, COLLECTIVE_NONBLOCKING, sizeof data);
  MPI_File_write_at_all_begin(fh, at + 4 * block, data, N, MPI_INT);
  MPI_File_write_at_all_end(fh, data, MPI_STATUS_IGNORE);
  io(shared, WRITE, COLLECTIVE_NONBLOCKING, sizeof data);
  MPI_File_sync(fh);
  ++shared->flushes;
  if (die) {
    print(rank);
    MPI_Barrier(MPI_COMM_WORLD); /* all printed: none dies while another still needs it */
    exit(0);
  }

  MPI_File_read_at_all_begin(fh, at + block, back, N, MPI_INT);
  MPI_File_read_at_all_end(fh, back, MPI_STATUS_IGNORE);
  io(shared, READ, COLLECTIVE_NONBLOCKING, sizeof back);
  check(memcmp(back, data, sizeof data) == 0, 4);
  MPI_File_read_at(fh, at, back, N, MPI_INT, MPI_STATUS_IGNORE);
  io(shared, READ, INDEPENDENT, sizeof back);
  check(memcmp(back, data, sizeof data) == 0, 4);
  MPI_File_iread_at(fh, at + 2 * block, back, N / 2, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  io(shared, READ, INDEPENDENT_NONBLOCKING, sizeof back / 2);
  check(memcmp(back, data, sizeof data / 2) == 0, 4);
  MPI_File_read_at_all(fh, at + 3 * block, back, N, MPI_INT, MPI_STATUS_IGNORE);
  io(shared, READ, COLLECTIVE, sizeof back);
  check(memcmp(back, data, sizeof data) == 0, 4);
  MPI_File_seek(fh, at + 4 * block, MPI_SEEK_SET);
  ++shared->seeks;
  MPI_File_read(fh, back, N, MPI_INT, MPI_STATUS_IGNORE);
  io(shared, READ, INDEPENDENT, sizeof back);
  check(memcmp(back, data, sizeof data) == 0, 4);
  closed(shared, &fh);

  fh = opened(meta, MPI_COMM_WORLD, MPI_MODE_CREATE | MPI_MODE_RDWR);
  MPI_File_preallocate(fh, kPreallocated);
  note_resize(meta, kPreallocated);
  MPI_File_set_size(fh, kResized);
  note_resize(meta, kResized);
  closed(meta, &fh);
  fh = opened(meta, MPI_COMM_WORLD, MPI_MODE_RDONLY);
  closed(meta, &fh);

  fh = opened(self, MPI_COMM_SELF, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE);
  MPI_File_write(fh, data, SELF_BYTES, MPI_BYTE, MPI_STATUS_IGNORE);
  io(self, WRITE, INDEPENDENT, SELF_BYTES);
  closed(self, &fh);
  ++self->deletes;

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    check(MPI_File_delete(meta->name, MPI_INFO_NULL) == MPI_SUCCESS, 5);
    check(MPI_File_delete(shared->name, MPI_INFO_NULL) == MPI_SUCCESS, 5);
    ++meta->deletes, ++shared->deletes;
  }
  if (rank == 1) {
    check(MPI_File_delete(other->name, MPI_INFO_NULL) == MPI_SUCCESS, 5);
    ++other->deletes;
  }
  MPI_Comm_free(&io_comm);
  print(rank);
  MPI_Finalize();
  return 0;
}
