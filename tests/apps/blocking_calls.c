/* The program's own blocking calls, counted: every rank runs THREADS threads (MPI_THREAD_MULTIPLE,
 * each makes MPI calls, so each is sampled), and every thread makes each blocking call of the
 * list ROUNDS times with a timeout of MS milliseconds, measuring how long it took and whether it
 * failed with EINTR:
 *   nanosleep clock_nanosleep usleep poll ppoll select pselect epoll_wait sem_timedwait
 *   cond_timedwait read_pipe accept
 * (read_pipe: a read on a pipe another thread writes MS ms later; accept: on a local socket
 * another thread connects to MS ms later). With "stress N" each thread instead alternates a
 * compute burst with N short blocking calls (10 us; the list's sleeps and waits in turn).
 *   blocking_calls THREADS ROUNDS MS            prints per call: "call NAME n N eintr E short S
 *                                                                 min_us A median_us B total_us T"
 *   blocking_calls THREADS stress N             prints "stress calls N eintr E short S"
 * A call is short when it returned before its timeout (a sleep cut short; a wait that timed
 * out early). Rank 0 prints the sums over every rank and thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
  kNanosleep,
  kClockNanosleep,
  kUsleep,
  kPoll,
  kPpoll,
  kSelect,
  kPselect,
  kEpollWait,
  kSemTimedwait,
  kCondTimedwait,
  kReadPipe,
  kAccept,
  kCalls
};
static const char* const kNames[kCalls] = {
    "nanosleep", "clock_nanosleep", "usleep",        "poll",           "ppoll",     "select",
    "pselect",   "epoll_wait",      "sem_timedwait", "cond_timedwait", "read_pipe", "accept"};
enum { kMaxRounds = 64, kMaxThreads = 16 };

static int g_rounds, g_ms, g_stress;
static long long g_eintr[kMaxThreads][kCalls], g_short[kMaxThreads][kCalls];
static double g_took[kMaxThreads][kCalls][kMaxRounds];

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static struct timespec after_ns(clockid_t clock, long long ns) {
  struct timespec t;
  clock_gettime(clock, &t);
  t.tv_sec += (t.tv_nsec + ns) / 1000000000LL;
  t.tv_nsec = (t.tv_nsec + ns) % 1000000000LL;
  return t;
}

struct Later {
  int fd;         /* the pipe's write end, or -1 */
  char path[108]; /* the socket to connect to, or "" */
  long long us;
};

/* Writes a byte or connects, `us` from now. */
static void* later(void* arg) {
  struct Later* l = arg;
  struct timespec t = {l->us / 1000000, (l->us % 1000000) * 1000};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t) == EINTR) {
  }
  if (l->fd >= 0) {
    if (write(l->fd, "x", 1) != 1) abort();
  } else {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, l->path);
    if (connect(s, (struct sockaddr*)&a, sizeof a) != 0) abort();
    close(s);
  }
  return NULL;
}

/* One blocking call of kind `c` for `ns`; returns 1 on EINTR. */
static int blocking(int c, long long ns, int thread, int round) {
  static __thread sem_t sem;
  static __thread int sem_ready;
  if (!sem_ready) {
    sem_init(&sem, 0, 0);
    sem_ready = 1;
  }
  int rc = 0, err = 0;
  struct timespec span = {ns / 1000000000LL, ns % 1000000000LL};
  switch (c) {
    case kNanosleep:
      rc = nanosleep(&span, NULL);
      err = errno;
      break;
    case kClockNanosleep:
      err = clock_nanosleep(CLOCK_MONOTONIC, 0, &span, NULL);
      rc = err ? -1 : 0;
      break;
    case kUsleep:
      rc = usleep((useconds_t)(ns / 1000));
      err = errno;
      break;
    case kPoll: {
      int p[2];
      if (pipe(p)) abort();
      struct pollfd f = {p[0], POLLIN, 0};
      rc = poll(&f, 1, (int)(ns / 1000000));
      err = errno;
      close(p[0]);
      close(p[1]);
      break;
    }
    case kPpoll: {
      int p[2];
      if (pipe(p)) abort();
      struct pollfd f = {p[0], POLLIN, 0};
      rc = ppoll(&f, 1, &span, NULL);
      err = errno;
      close(p[0]);
      close(p[1]);
      break;
    }
    case kSelect: {
      struct timeval tv = {ns / 1000000000LL, (ns % 1000000000LL) / 1000};
      rc = select(0, NULL, NULL, NULL, &tv);
      err = errno;
      break;
    }
    case kPselect:
      rc = pselect(0, NULL, NULL, NULL, &span, NULL);
      err = errno;
      break;
    case kEpollWait: {
      int e = epoll_create1(0);
      struct epoll_event ev[1];
      rc = epoll_wait(e, ev, 1, (int)(ns / 1000000));
      err = errno;
      close(e);
      break;
    }
    case kSemTimedwait: {
      struct timespec deadline = after_ns(CLOCK_REALTIME, ns);
      rc = sem_timedwait(&sem, &deadline);
      err = errno;
      if (rc != 0 && err == ETIMEDOUT) rc = 0;
      break;
    }
    case kCondTimedwait: {
      pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
      pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
      struct timespec deadline = after_ns(CLOCK_REALTIME, ns);
      pthread_mutex_lock(&m);
      err = pthread_cond_timedwait(&cv, &m, &deadline);
      pthread_mutex_unlock(&m);
      rc = err == ETIMEDOUT || err == 0 ? 0 : -1;
      break;
    }
    case kReadPipe: {
      int p[2];
      if (pipe(p)) abort();
      struct Later l = {p[1], "", ns / 1000};
      pthread_t t;
      pthread_create(&t, NULL, later, &l);
      char b;
      rc = read(p[0], &b, 1) == 1 ? 0 : -1;
      err = errno;
      pthread_join(t, NULL);
      close(p[0]);
      close(p[1]);
      break;
    }
    case kAccept: {
      struct Later l = {-1, "", ns / 1000};
      snprintf(l.path, sizeof l.path, "/tmp/blocking-calls-%d-%d-%d", (int)getpid(), thread, round);
      int s = socket(AF_UNIX, SOCK_STREAM, 0);
      struct sockaddr_un a = {.sun_family = AF_UNIX};
      strcpy(a.sun_path, l.path);
      unlink(l.path);
      if (bind(s, (struct sockaddr*)&a, sizeof a) || listen(s, 1)) abort();
      pthread_t t;
      pthread_create(&t, NULL, later, &l);
      int c2 = accept(s, NULL, NULL);
      err = errno;
      rc = c2 >= 0 ? 0 : -1;
      if (c2 >= 0) close(c2);
      pthread_join(t, NULL);
      close(s);
      unlink(l.path);
      break;
    }
  }
  return rc != 0 && err == EINTR;
}

static volatile double g_sink;

static void* worker(void* arg) {
  const int id = (int)(long)arg;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* a record of this thread: its sampler starts */
  if (g_stress) {
    const int quick[] = {kNanosleep, kClockNanosleep, kUsleep,      kPpoll,
                         kSelect,    kPselect,        kSemTimedwait};
    for (int i = 0; i < g_stress; ++i) {
      if (i % 100 == 0)
        for (int k = 0; k < 20000; ++k) g_sink += k * 1e-9; /* a compute burst */
      const int c = quick[i % (int)(sizeof quick / sizeof quick[0])];
      const double t0 = now_us();
      g_eintr[id][c] += blocking(c, 10000, id, i);
      if (now_us() - t0 < 10.0) ++g_short[id][c];
    }
    return NULL;
  }
  for (int r = 0; r < g_rounds; ++r)
    for (int c = 0; c < kCalls; ++c) {
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      const double t0 = now_us();
      g_eintr[id][c] += blocking(c, g_ms * 1000000LL, id, r);
      const double took = now_us() - t0;
      g_took[id][c][r] = took;
      if (took < g_ms * 1000.0) ++g_short[id][c];
    }
  return NULL;
}

static int by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int provided, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 3 && strcmp(argv[2], "stress") == 0) {
    g_stress = atoi(argv[3]);
  } else {
    g_rounds = argc > 2 ? atoi(argv[2]) : 3;
    g_ms = argc > 3 ? atoi(argv[3]) : 20;
  }
  if (provided < MPI_THREAD_MULTIPLE || threads < 1 || threads > kMaxThreads ||
      (!g_stress && (g_rounds < 1 || g_rounds > kMaxRounds || g_ms < 1))) {
    fprintf(stderr, "usage: blocking_calls THREADS ROUNDS MS | THREADS stress N\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  pthread_t t[kMaxThreads];
  for (int i = 0; i < threads; ++i) pthread_create(&t[i], NULL, worker, (void*)(long)i);
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  long long eintr[kCalls] = {0}, shorts[kCalls] = {0}, all_eintr[kCalls], all_short[kCalls];
  for (int i = 0; i < threads; ++i)
    for (int c = 0; c < kCalls; ++c) {
      eintr[c] += g_eintr[i][c];
      shorts[c] += g_short[i][c];
    }
  MPI_Reduce(eintr, all_eintr, kCalls, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(shorts, all_short, kCalls, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_stress) {
    if (rank == 0) {
      long long e = 0, s = 0;
      for (int c = 0; c < kCalls; ++c) {
        e += all_eintr[c];
        s += all_short[c];
      }
      int size;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      printf("stress calls %lld eintr %lld short %lld\n", (long long)g_stress * threads * size, e,
             s);
    }
    MPI_Finalize();
    return 0;
  }
  /* Per call, rank 0's threads' shortest, median and summed durations (every rank's EINTR and
   * short counts). */
  for (int c = 0; c < kCalls; ++c) {
    double took[kMaxThreads * kMaxRounds];
    int n = 0;
    double total = 0;
    for (int i = 0; i < threads; ++i)
      for (int r = 0; r < g_rounds; ++r) total += took[n++] = g_took[i][c][r];
    qsort(took, (size_t)n, sizeof took[0], by_value);
    if (rank == 0)
      printf("call %s n %d eintr %lld short %lld min_us %.0f median_us %.0f total_us %.0f\n",
             kNames[c], n, all_eintr[c], all_short[c], took[0], took[n / 2], total);
  }
  MPI_Finalize();
  return 0;
}
