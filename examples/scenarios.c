/* scenarios: the message patterns of the Open MPI Peruse paper, on demand.
 *
 *   mpirun -np 2 scenarios SCENARIO [-d DELAY_MS] [-n COUNT] [-r REPEAT]
 *
 * Rank 0 sends COUNT ints to rank 1; other ranks only take part in the barriers.
 *   late-sender    the sender is delayed, the receive is posted first (the paper's "early
 *                  receiver"): rank 1 waits in MPI_Recv for DELAY_MS.       alias: early-receiver
 *   late-receiver  the receiver is delayed: rank 0 sends (MPI_Isend), both enter a barrier, in
 *                  which rank 1's MPI moves the message into its unexpected queue; rank 1
 *                  posts the receive DELAY_MS later, while rank 0 waits in MPI_Wait. (Without
 *                  that barrier a sleeping receiver never sees the message arrive: Open MPI
 *                  progresses messages only inside MPI calls.)
 *   late-wait      rank 1 posts MPI_Irecv, the message completes during a barrier, and rank 1
 *                  calls MPI_Wait DELAY_MS later.
 *   long-message   REPEAT messages of COUNT ints (default 1 Mi ints = 4 MiB), sent in fragments.
 *   flood          REPEAT small messages (COUNT ints each) sent before rank 1 posts any receive,
 *                  building an unexpected queue REPEAT deep.
 *   all            each of the above once, separated by barriers.
 *
 * Every message carries a known pattern; the receiver checks it, so a tracer that corrupts
 * data or deadlocks the program makes this exit non-zero. */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c11 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_LATE_SENDER = 1, TAG_LATE_RECEIVER, TAG_LATE_WAIT, TAG_LONG, TAG_FLOOD };

struct options {
  const char* scenario;
  int delay_ms;
  int count;
  int repeat;
};

static int rank, size;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

static int* make_buffer(int count) {
  int* buf = malloc((size_t)(count > 0 ? count : 1) * sizeof(int));
  if (!buf) {
    fprintf(stderr, "scenarios: cannot allocate %d ints\n", count);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return buf;
}

static void fill(int* buf, int count, int seed) {
  for (int i = 0; i < count; ++i) buf[i] = seed * 7919 + i;
}

static void check(const int* buf, int count, int seed, const char* what) {
  for (int i = 0; i < count; ++i) {
    if (buf[i] != seed * 7919 + i) {
      fprintf(stderr, "scenarios: %s: element %d is %d, expected %d\n", what, i, buf[i],
              seed * 7919 + i);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

/* Rank 0's message to rank 1 carries the pattern `seed` gives; rank 1 checks it on receipt. */
static void send_pattern(int* buf, const struct options* o, int seed, int tag) {
  fill(buf, o->count, seed);
  MPI_Send(buf, o->count, MPI_INT, 1, tag, MPI_COMM_WORLD);
}

static void receive_pattern(int* buf, const struct options* o, int seed, int tag,
                            const char* what) {
  MPI_Recv(buf, o->count, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  check(buf, o->count, seed, what);
}

static void late_sender(const struct options* o) {
  int* buf = make_buffer(o->count);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    sleep_ms(o->delay_ms);
    send_pattern(buf, o, 1, TAG_LATE_SENDER);
  } else if (rank == 1) {
    receive_pattern(buf, o, 1, TAG_LATE_SENDER, "late-sender");
  }
  free(buf);
}

static void late_receiver(const struct options* o) {
  int* buf = make_buffer(o->count);
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    fill(buf, o->count, 2);
    MPI_Isend(buf, o->count, MPI_INT, 1, TAG_LATE_RECEIVER, MPI_COMM_WORLD, &request);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    sleep_ms(o->delay_ms);
    receive_pattern(buf, o, 2, TAG_LATE_RECEIVER, "late-receiver");
  }
  free(buf);
}

static void late_wait(const struct options* o) {
  int* buf = make_buffer(o->count);
  MPI_Request request = MPI_REQUEST_NULL;
  if (rank == 1) MPI_Irecv(buf, o->count, MPI_INT, 0, TAG_LATE_WAIT, MPI_COMM_WORLD, &request);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) send_pattern(buf, o, 3, TAG_LATE_WAIT);
  /* The receive progresses (and, for an eager message, completes) inside this barrier. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    sleep_ms(o->delay_ms);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    check(buf, o->count, 3, "late-wait");
  }
  free(buf);
}

static void long_message(const struct options* o) {
  int* buf = make_buffer(o->count);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < o->repeat; ++r) {
    if (rank == 0)
      send_pattern(buf, o, 4 + r, TAG_LONG);
    else if (rank == 1)
      receive_pattern(buf, o, 4 + r, TAG_LONG, "long-message");
  }
  free(buf);
}

static void flood(const struct options* o) {
  int* buf = make_buffer(o->count);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (int r = 0; r < o->repeat; ++r) send_pattern(buf, o, 100 + r, TAG_FLOOD);
  }
  /* Rank 1 enters the barrier (and so progresses the incoming messages into its unexpected
   * queue) before it posts a single receive. */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    sleep_ms(o->delay_ms);
    for (int r = 0; r < o->repeat; ++r) receive_pattern(buf, o, 100 + r, TAG_FLOOD, "flood");
  }
  free(buf);
}

static int usage(const char* why) {
  if (rank == 0) {
    fprintf(stderr,
            "scenarios: %s\n"
            "usage: mpirun -np 2 scenarios SCENARIO [-d DELAY_MS] [-n COUNT] [-r REPEAT]\n"
            "  SCENARIO: late-sender (alias early-receiver), late-receiver, late-wait,\n"
            "            long-message, flood, all\n",
            why);
  }
  return 1;
}

static int parse_int(const char* text, int min, int* out) {
  char* end = NULL;
  long value = strtol(text, &end, 10);
  if (!text[0] || *end || value < min || value > 1 << 30) return 0;
  *out = (int)value;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  struct options o = {argc > 1 ? argv[1] : NULL, 1000, -1, -1};
  int ok = o.scenario != NULL;
  for (int i = 2; ok && i < argc; i += 2) {
    int* target = !strcmp(argv[i], "-d")   ? &o.delay_ms
                  : !strcmp(argv[i], "-n") ? &o.count
                  : !strcmp(argv[i], "-r") ? &o.repeat
                                           : NULL;
    ok = target && i + 1 < argc && parse_int(argv[i + 1], 0, target);
  }
  if (!ok) {
    int rc = usage("missing or malformed arguments");
    MPI_Finalize();
    return rc;
  }
  if (size < 2) {
    int rc = usage("needs at least 2 ranks");
    MPI_Finalize();
    return rc;
  }
  const int all = !strcmp(o.scenario, "all");
  const int is_long = !strcmp(o.scenario, "long-message");
  const int is_flood = !strcmp(o.scenario, "flood");
  const int is_small = is_flood || !strcmp(o.scenario, "late-wait"); /* eager-sized by default */
  if (o.count < 0) o.count = is_long ? 1 << 20 : is_small ? 16 : 10000;
  if (o.repeat < 1) o.repeat = is_long ? 4 : is_flood ? 64 : 1;

  int ran = 0;
  double t0 = MPI_Wtime();
  if (all || !strcmp(o.scenario, "late-sender") || !strcmp(o.scenario, "early-receiver")) {
    late_sender(&o);
    ran++;
  }
  if (all || !strcmp(o.scenario, "late-receiver")) {
    late_receiver(&o);
    ran++;
  }
  if (all || !strcmp(o.scenario, "late-wait")) {
    struct options small = o;
    if (all) small.count = 16; /* eager: completes before the late MPI_Wait */
    late_wait(&small);
    ran++;
  }
  if (all || is_long) {
    struct options big = o;
    if (all) big.count = 1 << 20, big.repeat = 4;
    long_message(&big);
    ran++;
  }
  if (all || is_flood) {
    struct options small = o;
    if (all) small.count = 16, small.repeat = 64;
    flood(&small);
    ran++;
  }
  if (!ran) {
    int rc = usage("unknown scenario");
    MPI_Finalize();
    return rc;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("scenarios: %s done on %d ranks in %.3f s (delay %d ms, count %d, repeat %d)\n",
           o.scenario, size, MPI_Wtime() - t0, o.delay_ms, o.count, o.repeat);
  }
  MPI_Finalize();
  return 0;
}
