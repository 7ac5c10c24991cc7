/* A 1D Jacobi stencil on a ring of ranks, annotated (perusetrace/annotate.h): the program's
 * "phase" (compute, halo, residual) and "iteration", and the halo library's own "halo:phase"
 * (examples/halo.c). Every 5th iteration rank 0 computes 10 times longer: the other ranks wait for
 * its halo values, a late sender that `perusetrace report --by phase,iteration` puts in the halo
 * phase of those iterations.
 *   mpirun -np 4 annotated_stencil [ITERATIONS] [CELLS]
 * It runs the same without perusetrace: the annotations then do nothing. */
#include <mpi.h>
#include <perusetrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>

#include "examples/halo.h"

static void relax(double* u, double* next, int n, int sweeps) {
  for (int s = 0; s < sweeps; ++s) {
    for (int i = 1; i <= n; ++i) next[i] = 0.5 * (u[i - 1] + u[i + 1]);
    for (int i = 1; i <= n; ++i) u[i] = next[i];
  }
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 20;
  const int n = argc > 2 ? atoi(argv[2]) : 100000;
  const perusetrace_attribute_t phase = perusetrace_attribute("", "phase", 0);
  const perusetrace_attribute_t iteration = perusetrace_attribute("", "iteration", 0);
  int rank = 0, size = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* u = calloc((size_t)n + 2, sizeof *u);
  double* next = calloc((size_t)n + 2, sizeof *next);
  if (u == NULL || next == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 1; i <= n; ++i) u[i] = rank + (double)i / n;
  double residual = 0;
  for (int it = 0; it < iterations; ++it) {
    perusetrace_begin_int(iteration, it);
    perusetrace_begin(phase, "compute");
    relax(u, next, n, rank == 0 && it % 5 == 4 ? 200 : 20);
    perusetrace_end(phase);
    perusetrace_begin(phase, "halo");
    halo_exchange(u, n, MPI_COMM_WORLD);
    perusetrace_end(phase);
    perusetrace_begin(phase, "residual");
    double local = 0;
    for (int i = 1; i <= n; ++i) {
      const double r = u[i] - 0.5 * (u[i - 1] + u[i + 1]);
      local += r * r;
    }
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    perusetrace_end(phase);
    perusetrace_end(iteration);
  }
  if (rank == 0) printf("annotated_stencil: %d iterations, residual %g\n", iterations, residual);
  free(u);
  free(next);
  MPI_Finalize();
  return 0;
}
