/* Preloaded for the benchmark's mode (b): registers a callback that does nothing on every
 * Peruse event Open MPI supports, on MPI_COMM_WORLD, right after MPI_Init. It measures what
 * merely dispatching the callbacks costs: the floor any Peruse tracer stands on. */
#include <mpi.h>
#include <peruse.h>
#include <stdlib.h>

static int noop(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t* spec, void* param) {
  (void)h, (void)id, (void)spec, (void)param;
  return MPI_SUCCESS;
}

static void register_all(void) {
  int n = 0, *ids = NULL;
  char** names = NULL;
  if (PERUSE_Init() != PERUSE_SUCCESS) return;
  if (PERUSE_Query_supported_events(&n, &names, &ids) != PERUSE_SUCCESS) return;
  for (int i = 0; i < n; ++i) {
    peruse_event_h h;
    if (PERUSE_Event_comm_register(ids[i], MPI_COMM_WORLD, noop, NULL, &h) == PERUSE_SUCCESS)
      PERUSE_Event_activate(h);
    free(names[i]);
  }
  free(names);
  free(ids);
}

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) register_all();
  return rc;
}
