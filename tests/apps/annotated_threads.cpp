// Thread-scope annotations under MPI_THREAD_MULTIPLE, through the C++ scopes of
// perusetrace/annotate.hpp (tests/runtime/annotate_test.py, case threads), on 2 ranks.
//
//   annotated_threads THREADS
//
// Thread t of each rank opens worker=t<t> (a perusetrace::Scope) and, inside it, rank 0's thread
// sends t + 1 messages with tag t to rank 1's thread t. Each thread's messages must count in its
// own worker value only. Two modules' "phase" (solver:phase and lib:phase) are open at once on
// every thread, and a Region too. The main thread opens stage=threaded, of process scope, around
// the threads' work, and sets epoch=5, a process-scope integer: both hold for each of them.
#include <mpi.h>
#include <perusetrace/annotate.hpp>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

const perusetrace::Attribute worker("", "worker");
const perusetrace::Attribute solver_phase("solver", "phase");
const perusetrace::Attribute lib_phase("lib", "phase");
const perusetrace::Attribute stage("", "stage", PERUSETRACE_ATTR_PROCESS_SCOPE);
const perusetrace::Attribute epoch("", "epoch", PERUSETRACE_ATTR_PROCESS_SCOPE);

void work(int rank, int t) {
  const std::string name = "t" + std::to_string(t);
  perusetrace::Scope w(worker, name.c_str());
  perusetrace::Scope outer(solver_phase, "solve");
  perusetrace::Scope inner(lib_phase, "pack");
  perusetrace::Region region("messages");
  int value = t;
  for (int m = 0; m <= t; ++m) {
    if (rank == 0)
      MPI_Send(&value, 1, MPI_INT, 1, t, MPI_COMM_WORLD);
    else
      MPI_Recv(&value, 1, MPI_INT, 0, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::stoi(argv[1]) : 4;
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "annotated_threads: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<std::thread> pool;
  {
    // Begun by the main thread, in force on every thread of the rank.
    perusetrace::Scope s(stage, "threaded");
    epoch.set(std::int64_t{5});
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, rank, t);
    for (std::thread& th : pool) th.join();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) std::printf("annotated_threads: done\n");
  return 0;
}
