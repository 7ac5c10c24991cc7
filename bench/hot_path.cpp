// The hot path alone: ns per record written through perusetrace's own emit() (what a Peruse
// callback does), with and without the buffer drains it causes, on one and on two threads; and
// ns per traced MPI call (an Enter/Leave pair around MPI_Comm_rank). Run it under the tracer:
//   mpirun -np 1 -x LD_PRELOAD=build/lib/libperusetrace.so build/bench/hot_path
// and once with MPITRACE_ENABLED=0 for the untraced MPI_Comm_rank (run_hot_path.py does both).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <thread>
#include <vector>

#include "thread_buffer.hpp"

namespace {

constexpr int kRepetitions = 7;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ns per record for `n` records shaped like a Peruse event.
double records(long n) {
  const std::uint64_t t0 = perusetrace::now_ns();  // measurement, not a record
  for (long i = 0; i < n; ++i) {
    perusetrace::emit(perusetrace::Record{0, perusetrace::RecordKind::Peruse, 4, 1, 0, 1, 42, 40000,
                                          static_cast<std::uint64_t>(i), 0});
  }
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

double records_on_threads(int threads, long n) {
  std::vector<double> per(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  // Each thread first fills and drains its buffer (its first record also opens its journal
  // file), then measures as one thread does: recording alone, no drain inside.
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      records(2'000'000);
      per[t] = records(n);
    });
  for (auto& t : pool) t.join();
  return *std::max_element(per.begin(), per.end());
}

double mpi_calls(long n) {
  int rank = 0;
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return (MPI_Wtime() - t0) * 1e9 / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool traced = perusetrace::g_state.load() == perusetrace::TraceState::On;
  std::vector<double> hot, drained, two, calls;
  for (int r = 0; r < kRepetitions; ++r) {
    if (traced) {
      // 20 000 records fit any buffer of 1 MiB or more: no drain inside the measurement
      // once the buffer has just been drained by the previous, larger run.
      drained.push_back(records(2'000'000));
      hot.push_back(records(20'000));
      two.push_back(records_on_threads(2, 20'000));
    }
    calls.push_back(mpi_calls(1'000'000));
  }
  if (traced) {
    std::printf("record_ns_hot %.2f\nrecord_ns_with_drains %.2f\nrecord_ns_two_threads %.2f\n",
                median(hot), median(drained), median(two));
  }
  std::printf("mpi_comm_rank_ns %.2f\n", median(calls));
  MPI_Finalize();
  return 0;
}
