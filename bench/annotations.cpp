// What an annotation costs on the hot path: ns per begin/end pair of a value already interned
// (the per-thread cache's hit: two records), next to ns per record shaped like a Peruse event
// (what a Peruse callback writes), and ns per pair when tracing is off (a call before MPI_Init or
// after MPI_Finalize). No drain inside a measurement: each is 20 000 records or fewer after a
// run that drained the buffer. The runtime is linked in, so it runs traced without a preload:
//   mpirun -np 1 --bind-to none build/bench/annotations [SCALE]
// SCALE divides every loop's length (a test's quick run: the times are then meaningless).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define PERUSETRACE_BUILDING_LIBRARY
#include "include/perusetrace/annotate.h"
#include "lib/thread_buffer.hpp"

namespace {

constexpr int kRepetitions = 7;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double records(long n) {
  const std::uint64_t t0 = perusetrace::now_ns();
  for (long i = 0; i < n; ++i)
    perusetrace::emit(perusetrace::Record{0, perusetrace::RecordKind::Peruse, 4, 1, 0, 1, 42, 40000,
                                          static_cast<std::uint64_t>(i), 0});
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

// ns per begin/end pair, alternating between two values as a phase loop does.
double pairs(perusetrace_attribute_t a, long n) {
  const std::uint64_t t0 = perusetrace::now_ns();
  for (long i = 0; i < n; ++i) {
    perusetrace_annotate_begin(a, (i & 1) != 0 ? "exchange" : "compute");
    perusetrace_annotate_end(a);
  }
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long scale = argc > 1 ? std::clamp(std::atol(argv[1]), 1L, 20'000L) : 1;
  const perusetrace_attribute_t phase = perusetrace_annotate_attribute("bench", "phase", 0);
  const bool traced = perusetrace::g_state.load() == perusetrace::TraceState::On;
  std::vector<double> record, pair;
  for (int r = 0; r < kRepetitions && traced; ++r) {
    records(2'000'000 / scale);  // drains: the measurements below fit the buffer
    record.push_back(records(20'000 / scale));
    pair.push_back(pairs(phase, 10'000 / scale));
  }
  MPI_Finalize();
  std::vector<double> off;
  for (int r = 0; r < kRepetitions; ++r) off.push_back(pairs(phase, 1'000'000 / scale));
  if (traced) {
    const double p = median(pair), one = median(record);
    std::printf(
        "annotations: %.1f ns per begin/end pair (2 records), %.1f ns per Peruse-shaped "
        "record: %.2f records' worth\n",
        p, one, p / one);
  }
  std::printf("annotations: %.1f ns per begin/end pair with tracing off\n", median(off));
  return 0;
}
