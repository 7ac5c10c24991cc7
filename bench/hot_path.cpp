// The hot path alone: ns per record written through perusetrace's own emit() (what a Peruse
// callback does), with and without the buffer drains it causes, on one and on two threads, and
// without the record's clock read; ns per traced MPI call (an Enter/Leave pair around
// MPI_Comm_rank); and ns per 0-byte message a rank sends itself (MPI_Irecv, MPI_Send, MPI_Wait
// on MPI_COMM_SELF), with the records it writes: the real callbacks and wrappers, all on one
// core. The runtime is linked in (the library exports nothing but the MPI functions), so it runs
// traced without a preload:
//   mpirun -np 1 --bind-to none build/bench/hot_path [SCALE [multiple]]
// and once with MPITRACE_ENABLED=0 for the untraced calls (run_hot_path.py runs it untraced,
// PMPI only and with all Peruse events). SCALE (default 1) divides every loop's length: a test's
// quick run, whose counts of records and events still come out exact and its times meaningless.
// With "multiple" it starts the MPI with MPI_THREAD_MULTIPLE and times only MPI_Comm_rank, on
// one thread and on two at once: a separate process, since that level changes what Open MPI
// and the tracer do on every other path measured here.
//
// Two threads run on two CPUs, each pinned to its own: the main thread pins itself to the first
// CPU the process may use, and mpirun must leave it more than one (--bind-to none), or the two
// "at once" would take turns on one core. With one CPU the two-thread figures are not measured.
#include <mpi.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "lib/mpi_handlers.hpp"
#include "lib/thread_buffer.hpp"

namespace {

constexpr int kRepetitions = 7;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A record shaped like a Peruse event (a transfer's begin) of request `request`.
perusetrace::Record peruse_shaped(std::uint64_t time, std::uint64_t request) {
  return perusetrace::Record{time, perusetrace::RecordKind::Peruse, 4, 1, 0, 1, 42, 40000, request,
                             0};
}

// ns per record for `n` records shaped like a Peruse event.
double records(long n) {
  const std::uint64_t t0 = perusetrace::now_ns();  // measurement, not a record
  for (long i = 0; i < n; ++i) perusetrace::emit(peruse_shaped(0, static_cast<std::uint64_t>(i)));
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

// The same records stamped with a time taken once before the loop and counted up by one tick
// per record: what a record costs without its clock read. The buffer is made to hold them all
// first, so that no drain (whose flush region has real times) lands among them and the times
// written stay in order: the loop takes more than a tick per record.
double records_without_clock(long n) {
  using perusetrace::TraceState;
  const perusetrace::ThreadBuffer* b = perusetrace::detail::t_buffer;
  if (b == nullptr) return 0;
  // The emit that drains leaves the flush region and itself (3 records) in the buffer.
  if (b->end - b->begin < n + 4) n = b->end - b->begin - 4;  // a small --buffer-size
  // Stops when tracing does (a failed drain): the buffer would never empty.
  while (b->end - b->next < n && perusetrace::g_state.load() == TraceState::On)
    perusetrace::emit(peruse_shaped(0, 0));
  if (n <= 0 || perusetrace::g_state.load() != TraceState::On) return 0;
  const std::uint64_t t0 = perusetrace::now_ns();  // measurement, not a record
  const std::uint64_t stamp = perusetrace::now_ticks();
  for (long i = 0; i < n; ++i) {
    const auto u = static_cast<std::uint64_t>(i);
    perusetrace::emit_first(peruse_shaped(stamp + u, u));
  }
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

// ns per clock read alone, back to back.
double clock_reads(long n) {
  const std::uint64_t t0 = perusetrace::now_ns();
  std::uint64_t sum = 0;
  for (long i = 0; i < n; ++i) sum += perusetrace::now_ticks();
  const double ns = static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
  return sum == 0 ? 0 : ns;  // keeps the reads
}

// The CPUs this process may run on, read before any thread pins itself.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Runs `work` on two threads at once, pinned to the first two CPUs of `cpus`, and adds the
// slower thread's figure to `figures`; nothing when there are fewer CPUs or a pin fails.
template <class Work>
void on_two_cpus(const std::vector<int>& cpus, std::vector<double>& figures, Work work) {
  if (cpus.size() < 2) return;
  double per[2];
  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t) pool.emplace_back([&, t] { per[t] = pin_to(cpus[t]) ? work() : -1; });
  for (auto& t : pool) t.join();
  if (per[0] >= 0 && per[1] >= 0) figures.push_back(std::max(per[0], per[1]));
}

// What keeping the thread's MPI state costs a call (lib/mpi_state.hpp): what Call does for it at
// the outermost call's entry and exit, alone.
double state_keeping(long n) {
  const std::uint64_t t0 = perusetrace::now_ns();
  for (long i = 0; i < n; ++i) {
    const perusetrace::InMpi in_mpi(perusetrace::Fn::MPI_Comm_rank);
    asm volatile("" ::: "memory");  // every call's stores stay
  }
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

double mpi_calls(long n) {
  int rank = 0;
  const double t0 = MPI_Wtime();
  for (long i = 0; i < n; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return (MPI_Wtime() - t0) * 1e9 / static_cast<double>(n);
}

// ns per 0-byte message a rank sends itself: the receive is posted first, so every message
// takes the early-receiver path (posted queue, match, completion) through the real callbacks.
double self_messages(long n) {
  char buf[1];
  const std::uint64_t t0 = perusetrace::now_ns();  // not MPI_Wtime: traced with MPITRACE_GROUPS=all
  for (long i = 0; i < n; ++i) {
    MPI_Request request;
    MPI_Irecv(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF, &request);
    MPI_Send(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_SELF);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  return static_cast<double>(perusetrace::now_ns() - t0) / static_cast<double>(n);
}

struct PerMessage {
  double records = 0, events = 0;  // events: records and the events they carry
};

// Records one self message writes, and the events they hold, counted in the thread's buffer
// over a batch without a drain.
PerMessage written_per_self_message() {
  constexpr long kBatch = 16;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const perusetrace::ThreadBuffer* b = perusetrace::detail::t_buffer;
    if (b == nullptr) return {};
    const perusetrace::Record* before = b->next;
    const bool room = b->end - before > kBatch * 64;
    self_messages(kBatch);
    if (!room || b->next <= before) continue;
    long events = 0;
    for (const perusetrace::Record* r = before; r != b->next; ++r) {
      ++events;
      perusetrace::CarriedPeruse c;
      if (r->kind == perusetrace::RecordKind::Peruse)
        for (unsigned slot = 0; perusetrace::carried_peruse(*r, slot, c); ++slot) ++events;
    }
    return {static_cast<double>(b->next - before) / kBatch, static_cast<double>(events) / kBatch};
  }
  return {};
}

// MPI_THREAD_MULTIPLE: a traced MPI_Comm_rank on one thread, and on two threads at once.
void calls_on_threads(long scale, const std::vector<int>& cpus) {
  std::vector<double> one, two;
  for (int r = 0; r < kRepetitions; ++r) {
    one.push_back(mpi_calls(1'000'000 / scale));
    on_two_cpus(cpus, two, [=] { return mpi_calls(1'000'000 / scale); });
  }
  std::printf("mt_mpi_comm_rank_ns %.2f\n", median(one));
  if (!two.empty()) std::printf("mt_mpi_comm_rank_ns_two_threads %.2f\n", median(two));
}

}  // namespace

int main(int argc, char** argv) {
  const bool multiple = argc > 2 && std::strcmp(argv[2], "multiple") == 0;
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  const long scale = argc > 1 ? std::clamp(std::atol(argv[1]), 1L, 20'000L) : 1;  // loops >= 1
  const std::vector<int> cpus = allowed_cpus();
  if (!cpus.empty()) pin_to(cpus[0]);  // the one-thread figures, as under mpirun's core binding
  if (multiple) {
    if (provided == MPI_THREAD_MULTIPLE) calls_on_threads(scale, cpus);
    MPI_Finalize();
    return 0;
  }
  const bool traced = perusetrace::g_state.load() == perusetrace::TraceState::On;
  std::vector<double> hot, drained, two, unclocked, clock, calls, messages, states;
  for (int r = 0; r < kRepetitions; ++r) {
    if (traced) {
      // 20 000 records fit any buffer of 1 MiB or more: no drain inside the measurement
      // once the buffer has just been drained by the previous, larger run.
      drained.push_back(records(2'000'000 / scale));
      hot.push_back(records(20'000 / scale));
      // Each thread first fills and drains its buffer (its first record also opens its journal
      // file), then measures as one thread does: recording alone, no drain inside.
      on_two_cpus(cpus, two, [=] {
        records(2'000'000 / scale);
        return records(20'000 / scale);
      });
      unclocked.push_back(records_without_clock(20'000 / scale));
      clock.push_back(clock_reads(1'000'000 / scale));
      states.push_back(state_keeping(10'000'000 / scale));
    }
    calls.push_back(mpi_calls(1'000'000 / scale));
    messages.push_back(self_messages(20'000 / scale));
  }
  if (traced) {
    std::printf("record_ns_hot %.2f\nrecord_ns_with_drains %.2f\n", median(hot), median(drained));
    if (!two.empty()) std::printf("record_ns_two_threads %.2f\n", median(two));
    std::printf("record_ns_without_clock %.2f\nclock_read_ns %.2f\nstate_ns %.2f\n",
                median(unclocked), median(clock), median(states));
    const PerMessage written = written_per_self_message();
    std::printf("records_per_self_message %.2f\nevents_per_self_message %.2f\n", written.records,
                written.events);
  }
  std::printf("mpi_comm_rank_ns %.2f\nself_message_ns %.2f\n", median(calls), median(messages));
  MPI_Finalize();
  return 0;
}
