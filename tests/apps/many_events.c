/* A long run for the memory bound: 2 ranks ping-pong ROUNDS small messages, then each rank
 * prints its peak resident memory (VmHWM) after MPI_Finalize.
 *   many_events [ROUNDS [WATCH]]
 * With WATCH, the run ends AFTER rounds after the path WATCH has gone (or after ROUNDS), so a
 * test that removes it knows the removal landed while the ranks still record. */
#include "tests/apps/app_util.h"
#include <mpi.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kib;
}

int main(int argc, char** argv) {
  int rank;
  app_init(&argc, &argv, &rank, NULL);
  const long rounds = argc > 1 ? atol(argv[1]) : 500000;
  const char* watch = argc > 2 ? argv[2] : NULL;
  enum { kAfter = 200000, kCheckEvery = 1000 };
  int value = 0;   // rank 0 sets it to 1, for both ranks, once WATCH is gone
  long left = -1;  // rounds still to run once it is
  for (long i = 0; i < rounds && left != 0; ++i) {
    if (watch && rank == 0 && value == 0 && i % kCheckEvery == 0 && access(watch, F_OK) != 0)
      value = 1;
    app_round_trip(rank, &value, &value, 0, 0);
    // Both ranks see the flag by the end of the same round, and count down together.
    if (left > 0) {
      --left;
    } else if (value == 1 && left < 0) {
      left = kAfter;
    }
  }
  MPI_Finalize();
  printf("rank %d peak_kib %ld\n", rank, peak_kib());
  return 0;
}
