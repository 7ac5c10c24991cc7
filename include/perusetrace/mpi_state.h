/* The MPI state of the calling thread, for profilers: perusetrace's take on the MPI State
 * Profiling proposal. A sampler finds the function through the runtime linker, so a program runs
 * the same with or without perusetrace loaded:
 *
 *   typedef int (*state_fn)(void*);
 *   state_fn f = (state_fn)dlsym(RTLD_DEFAULT, "perusetrace_mpi_state");
 *   int state = f ? f(NULL) : PERUSETRACE_STATE_UNKNOWN;
 *
 * Both functions are async-signal-safe: no lock, no allocation, thread-local state in the
 * initial-exec TLS model (no __tls_get_addr), one read of the clock. The argument is reserved
 * (pass NULL). */
#ifndef PERUSETRACE_MPI_STATE_H
#define PERUSETRACE_MPI_STATE_H

#ifdef __cplusplus
extern "C" {
#endif

enum perusetrace_mpi_state {
  PERUSETRACE_NOT_IN_MPI = 0, /* the thread runs the program's own code */
  PERUSETRACE_MPI_WORK = 1,   /* inside MPI, which makes progress for it */
  PERUSETRACE_MPI_STALL = 2,  /* inside MPI, waiting: no progress for it lately */
  PERUSETRACE_STATE_UNKNOWN = -1
};

/* What the thread inside MPI is busy with or waiting for. */
enum perusetrace_mpi_activity {
  PERUSETRACE_ACTIVITY_NONE = 0,       /* outside MPI, or a call that does not wait */
  PERUSETRACE_ACTIVITY_MESSAGE = 1,    /* a point-to-point operation: the peer, the match */
  PERUSETRACE_ACTIVITY_TRANSFER = 2,   /* a message whose transfer has begun */
  PERUSETRACE_ACTIVITY_COLLECTIVE = 3, /* a collective operation */
  PERUSETRACE_ACTIVITY_IO = 4          /* MPI-IO */
};

int perusetrace_mpi_state(void* reserved);
int perusetrace_mpi_activity(void* reserved);

#ifdef __cplusplus
}
#endif

#endif
