/* Keeps the dynamic loader busy while the sampler interrupts it: for SECONDS, each rank loads
 * and unloads MODULE (dlopen/dlclose) and walks the loaded objects with dl_iterate_phdr, whose
 * callback spins for about 20 us so that many samples land while the loader's lock is held.
 * WHAT is both (the default), dlopen or iterate. Prints "loader_churn rank R: cycles N".
 *   loader_churn SECONDS MODULE [both|dlopen|iterate] */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int spin(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info;
  (void)size;
  const double until = MPI_Wtime() + 20e-6;
  while (MPI_Wtime() < until) ++*(long*)data;
  return 1; /* the first object is enough */
}

/* Its own function, so that the samples taken outside the loader can be told by their stack. */
__attribute__((noinline)) static long churn(double seconds, const char* module, const char* what) {
  const int load = strcmp(what, "iterate") != 0, iterate = strcmp(what, "dlopen") != 0;
  long cycles = 0, spins = 0;
  const double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
    if (load) {
      void* h = dlopen(module, RTLD_NOW | RTLD_LOCAL);
      if (h == NULL) {
        fprintf(stderr, "loader_churn: %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      dlclose(h);
    }
    if (iterate) dl_iterate_phdr(spin, &spins);
    ++cycles;
  }
  return cycles;
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: loader_churn SECONDS MODULE [both|dlopen|iterate]\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long cycles = churn(atof(argv[1]), argv[2], argc == 4 ? argv[3] : "both");
  MPI_Barrier(MPI_COMM_WORLD);
  printf("loader_churn rank %d: cycles %ld\n", rank, cycles);
  MPI_Finalize();
  return 0;
}
