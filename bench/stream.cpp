// The writer end to end: N Peruse-shaped records written through perusetrace's emit() (one per
// callback), drained to the journal while the "program" runs, then encoded into the OTF2
// archive at MPI_Finalize. Prints events/s for both phases, the archive's bytes per event and
// the peak resident set. The runtime is linked in (the library exports nothing but the MPI
// functions); one rank (run_stream.py runs it, and once untraced for the memory baseline):
//   mpirun -np 1 build/bench/stream 10000000
#include <mpi.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "events/catalogue.hpp"
#include "lib/journal.hpp"
#include "lib/thread_buffer.hpp"

namespace {

long peak_rss_kib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  if (f != nullptr) std::fclose(f);
  return kib;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = argc > 1 ? std::atol(argv[1]) : 10'000'000;
  const bool traced = perusetrace::g_state.load() == perusetrace::TraceState::On;
  // A receive's life cycle over and over: the event kinds, peers, tags and growing request ids
  // of a real run, so the encoder sees realistic values, not one record repeated.
  using E = perusetrace::PeruseEvent;
  constexpr E kCycle[] = {E::REQ_ACTIVATE,
                          E::REQ_INSERT_IN_POSTED_Q,
                          E::MSG_ARRIVED,
                          E::MSG_MATCH_POSTED_REQ,
                          E::REQ_REMOVE_FROM_POSTED_Q,
                          E::REQ_XFER_BEGIN,
                          E::REQ_XFER_END,
                          E::REQ_COMPLETE,
                          E::REQ_NOTIFY};
  constexpr long kCycleLength = sizeof kCycle / sizeof kCycle[0];
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) {
    const long request = i / kCycleLength;
    perusetrace::emit(perusetrace::Record{
        0, perusetrace::RecordKind::Peruse, static_cast<std::uint8_t>(kCycle[i % kCycleLength]), 1,
        0, static_cast<std::int32_t>(request & 1), static_cast<std::int32_t>(request % 7), 1024,
        static_cast<std::uint64_t>(request), static_cast<std::uint64_t>(request % 3)});
  }
  const double t1 = MPI_Wtime();
  // The journal as the drains left it: its bytes for the records already drained (those still in
  // the buffer go out at MPI_Finalize).
  long long journal_bytes = 0, drained = 0;
  if (traced) {
    struct stat st;
    if (::stat(perusetrace::journal::records_file(0).c_str(), &st) == 0) journal_bytes = st.st_size;
    const perusetrace::ThreadBuffer* b = perusetrace::detail::t_buffer;
    drained = n - (b != nullptr ? b->next - b->begin : 0);
  }
  const std::uint64_t f0 = perusetrace::now_ns();
  MPI_Finalize();  // the archive is written here
  const double finalize_seconds = static_cast<double>(perusetrace::now_ns() - f0) * 1e-9;
  std::printf(
      "traced %d\nevents %ld\nrecord_seconds %.4f\nfinalize_seconds %.4f\n"
      "peak_rss_kib %ld\njournal_bytes %lld\ndrained %lld\n",
      traced ? 1 : 0, n, t1 - t0, finalize_seconds, peak_rss_kib(), journal_bytes, drained);
  return 0;
}
