/* Known phases for the annotation tests (tests/runtime/annotate_test.py), on 2 ranks.
 *
 *   annotated_phases ITERATIONS MESSAGES [mismatch | wrongname | die]
 *
 * Each iteration (attribute "iteration" begun as a nested value, "step" set as an integer,
 * "round" begun as an as-value attribute whose values replace each other) runs
 * phase "compute" (no message, 20 ms of work) and then phase "exchange": rank 0 sends MESSAGES
 * messages of 1 KiB to rank 1, which receives them. In iteration 3 only, rank 0 computes 200 ms
 * more before its first send, inside "exchange": rank 1 waits for it (a late sender). A second
 * module's own "phase" attribute ("lib:phase") brackets the run on rank 1 and must not mix with
 * the program's. With `mismatch`, rank 0 ends "phase" while "region=inner" is open in
 * iteration 1: the tracer reports it once and repairs it; with `wrongname` it ends region "outer"
 * while region=inner is open, which ends region=inner and is reported. With `die`, both ranks
 * exit(3) after the loop with values open, without MPI_Finalize. Built against
 * include/perusetrace/annotate.h only: it runs without the tracer too. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <perusetrace/annotate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 5;
  const int messages = argc > 2 ? atoi(argv[2]) : 10;
  const int mismatch = argc > 3 && strcmp(argv[3], "mismatch") == 0;
  const int die = argc > 3 && strcmp(argv[3], "die") == 0;
  const int wrong_name = argc > 3 && strcmp(argv[3], "wrongname") == 0;
  int rank = 0;
  char payload[1024];
  memset(payload, 1, sizeof payload);
  /* Before MPI_Init: created, used, and harmless. */
  const perusetrace_attribute_t phase = perusetrace_attribute(NULL, "phase", 0);
  const perusetrace_attribute_t iteration = perusetrace_attribute("", "iteration", 0);
  const perusetrace_attribute_t counter =
      perusetrace_attribute("", "step", PERUSETRACE_ATTR_AS_VALUE);
  const perusetrace_attribute_t lib_phase = perusetrace_attribute("lib", "phase", 0);
  const perusetrace_attribute_t round =
      perusetrace_attribute("", "round", PERUSETRACE_ATTR_AS_VALUE);
  perusetrace_begin(phase, "startup");
  perusetrace_end(phase);
  app_init(&argc, &argv, &rank, NULL);
  if (rank == 1) perusetrace_begin(lib_phase, "library");
  MPI_Barrier(MPI_COMM_WORLD);
  for (int it = 0; it < iterations; ++it) {
    perusetrace_begin_int(round, it); /* as-value: replaces the previous round, no end */
    perusetrace_begin_int(iteration, it);
    perusetrace_set_int(counter, it);
    perusetrace_begin(phase, "compute");
    app_busy(0.02);
    perusetrace_end(phase);
    perusetrace_begin(phase, "exchange");
    if (rank == 0) {
      if (it == 3) app_busy(0.2);
      if ((mismatch || wrong_name) && it == 1) perusetrace_region_begin("inner");
      for (int m = 0; m < messages; ++m)
        MPI_Send(payload, sizeof payload, MPI_CHAR, 1, m, MPI_COMM_WORLD);
      if (wrong_name && it == 1) perusetrace_region_end("outer"); /* ends region=inner */
    } else {
      for (int m = 0; m < messages; ++m)
        MPI_Recv(payload, sizeof payload, MPI_CHAR, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    perusetrace_end(phase); /* with `mismatch`: "region=inner" is still open on rank 0 */
    perusetrace_end(iteration);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  perusetrace_end(round);
  if (die) {
    /* Values left open, no MPI_Finalize: the journal is all there is (perusetrace recover). */
    perusetrace_begin(phase, "dying");
    exit(3);
  }
  if (rank == 1) perusetrace_end(lib_phase);
  MPI_Finalize();
  /* After MPI_Finalize: harmless. */
  perusetrace_begin(phase, "shutdown");
  perusetrace_end(phase);
  if (mismatch && rank == 0) perusetrace_end(phase); /* unbalanced: silent, after the first */
  if (rank == 0) printf("annotated_phases: done\n");
  return 0;
}
