/* Where each rank runs and how its CLOCK_MONOTONIC compares with rank 0's, for the simulated
 * cluster (scripts/fake-cluster, tests/cluster/cluster_smoke_test.py). Rank 0 prints
 *
 *   rank R host NAME monotonic_offset_vs_rank0 SECONDS
 *
 * per rank, after a ring of MPI_Sendrecv (checked, so the transport between hosts carries
 * data), then "ring ok". With SCRATCH_DIR every rank writes a file named after its host there,
 * then counts what it sees: on node-local disks only its own host's files, printed as
 *
 *   rank R scratch_entries N foreign M
 *
 *   clock_probe [SCRATCH_DIR] */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 9, NAME = 64, RING = 1 << 18 };

static double monotonic(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Both neighbours' data checked: a transport that drops or mixes up bytes fails here. */
static int ring(int rank, int size) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int* out = malloc(RING * sizeof *out);
  int* in = malloc(RING * sizeof *in);
  int bad = 0;
  for (int i = 0; i < RING; ++i) out[i] = rank * 7919 + i;
  MPI_Sendrecv(out, RING, MPI_INT, right, 1, in, RING, MPI_INT, left, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  for (int i = 0; i < RING; ++i) bad += in[i] != left * 7919 + i;
  free(out);
  free(in);
  return bad;
}

/* Counts the entries in dir, and those not named after this host. */
static void scratch(const char* dir, const char* host, int rank, int counts[2]) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.rank%d", dir, host, rank);
  FILE* f = fopen(path, "w");
  if (!f || fputs(host, f) < 0 || fclose(f) != 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* every rank's file is written before anyone looks */
  counts[0] = counts[1] = 0;
  DIR* d = opendir(dir);
  if (!d) {
    perror(dir);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const size_t len = strlen(host);
  for (struct dirent* e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    ++counts[0];
    counts[1] += strncmp(e->d_name, host, len) != 0 || e->d_name[len] != '.';
  }
  closedir(d);
}

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char host[NAME] = {0};
  gethostname(host, NAME - 1);

  int bad = ring(rank, size), total_bad = 0;
  MPI_Reduce(&bad, &total_bad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

  /* Each round every rank reads its clock right after the same barrier; the median of the
   * per-round differences keeps one slow barrier exit from skewing the result. */
  double* rounds = malloc(sizeof(double) * ROUNDS * (size_t)size);
  for (int r = 0; r < ROUNDS; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double now = monotonic();
    MPI_Gather(&now, 1, MPI_DOUBLE, rounds + (size_t)r * size, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  }
  char* names = malloc((size_t)size * NAME);
  MPI_Gather(host, NAME, MPI_CHAR, names, NAME, MPI_CHAR, 0, MPI_COMM_WORLD);

  int counts[2] = {0, 0};
  int* all_counts = malloc(sizeof(int) * 2 * (size_t)size);
  if (argc > 1) scratch(argv[1], host, rank, counts);
  MPI_Gather(counts, 2, MPI_INT, all_counts, 2, MPI_INT, 0, MPI_COMM_WORLD);

  if (rank == 0) {
    for (int p = 0; p < size; ++p) {
      double diff[ROUNDS];
      for (int r = 0; r < ROUNDS; ++r)
        diff[r] = rounds[(size_t)r * size + p] - rounds[(size_t)r * size];
      qsort(diff, ROUNDS, sizeof *diff, by_value);
      printf("rank %d host %s monotonic_offset_vs_rank0 %.6f\n", p, names + (size_t)p * NAME,
             diff[ROUNDS / 2]);
    }
    if (argc > 1)
      for (int p = 0; p < size; ++p)
        printf("rank %d scratch_entries %d foreign %d\n", p, all_counts[2 * p],
               all_counts[2 * p + 1]);
    if (total_bad)
      printf("ring FAILED: %d bad values\n", total_bad);
    else
      printf("ring ok\n");
    fflush(stdout);
  }
  free(rounds);
  free(names);
  free(all_counts);
  MPI_Finalize();
  return total_bad != 0;
}
