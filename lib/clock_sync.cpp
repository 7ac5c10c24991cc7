#include "lib/clock_sync.hpp"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <fstream>

#include "record/clock.hpp"

namespace perusetrace {

namespace {

constexpr int kTag = 0x7ace;
// Cristian's method: the round trip with the least delay bounds the offset tightest. On a busy
// or oversubscribed machine most round trips include a descheduled process, so exchanges go on
// until the best one has not improved for a while.
// A descheduled process stalls every round trip of a burst lasting milliseconds: the best one
// must also have stood for a while, not only for a number of exchanges (6 ranks on 2 cores gave a
// best of 494 us after 45 exchanges, and of 8 us in the other runs).
constexpr std::uint32_t kMinExchanges = 16;
constexpr std::uint32_t kMaxExchanges = 4000;
constexpr std::uint32_t kPatience = 32;            // exchanges without a better round trip
constexpr std::uint64_t kPatienceNs = 10'000'000;  // and time since the best one
constexpr std::uint64_t kBudgetNs = 200'000'000;   // per leader and measurement, at most

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string read_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Splits `comm` by a 64-bit key in two rounds of 31 bits each, since MPI's colours are ints.
MPI_Comm split_by_key(MPI_Comm comm, std::uint64_t key, int order) {
  MPI_Comm low = MPI_COMM_NULL, both = MPI_COMM_NULL;
  PMPI_Comm_split(comm, static_cast<int>(key & 0x7fffffff), order, &low);
  PMPI_Comm_split(low, static_cast<int>((key >> 32) & 0x7fffffff), order, &both);
  PMPI_Comm_free(&low);
  return both;
}

// Waits without spinning. Ranks that are not measuring would otherwise poll the progress
// engine on every core and deschedule the two that are: with 6 ranks on 2 cores the best of 70
// round trips took 4 ms, an error bound larger than the latency of the messages it orders.
void wait_idle(MPI_Request* request) {
  int done = 0;
  const timespec pause{0, 100'000};
  for (PMPI_Test(request, &done, MPI_STATUS_IGNORE); !done;
       PMPI_Test(request, &done, MPI_STATUS_IGNORE))
    ::nanosleep(&pause, nullptr);
}

// What a leader tells the next leader it measures: its own offset to rank 0 and its error.
struct Relay {
  std::int64_t offset;
  double error;
};

// A receive of the measurement itself, polled yielding the CPU between tests. With more
// measuring processes than cores (simulated hosts sharing two), a process whose partner is
// descheduled would otherwise spin out its time slice: round trips of 10 ms and offsets 140 us
// off, or 16 us off when yielding only after 50 us of spinning; yielding at once gave offsets
// within 1 us. On a host of its own a yield with nothing else to run returns at once.
void receive(void* data, int count, MPI_Datatype type, int from, MPI_Comm comm) {
  MPI_Request request;
  PMPI_Irecv(data, count, type, from, kTag, comm, &request);
  int done = 0;
  for (PMPI_Test(&request, &done, MPI_STATUS_IGNORE); !done;
       PMPI_Test(&request, &done, MPI_STATUS_IGNORE))
    ::sched_yield();
}

// Child side: waits for its parent's turn, then exchanges round trips with it. Returns the
// child's offset to the parent's clock.
trace::ClockOffset measure_against(int parent, MPI_Comm leaders, Relay& parent_relay) {
  MPI_Request request;
  PMPI_Irecv(&parent_relay, sizeof parent_relay, MPI_BYTE, parent, kTag, leaders, &request);
  wait_idle(&request);
  trace::ClockOffset best;
  std::uint64_t best_rtt = UINT64_MAX;
  std::uint32_t n = 0, since_better = 0;
  const std::uint64_t start = now_ns();
  std::uint64_t best_at = start;
  for (std::uint64_t now = start;
       n < kMinExchanges || ((since_better < kPatience || now - best_at < kPatienceNs) &&
                             n < kMaxExchanges && now - start < kBudgetNs);) {
    const int more = 1;
    std::uint64_t parent_time = 0;
    const std::uint64_t t0 = now_ns();
    PMPI_Send(&more, 1, MPI_INT, parent, kTag, leaders);
    receive(&parent_time, 1, MPI_UINT64_T, parent, leaders);
    const std::uint64_t t1 = now = now_ns();
    ++n;
    ++since_better;
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      best_at = t1;
      since_better = 0;
      best.local_time = t0 + (t1 - t0) / 2;
      best.offset = static_cast<std::int64_t>(parent_time - best.local_time);
    }
  }
  const int done = 0;
  PMPI_Send(&done, 1, MPI_INT, parent, kTag, leaders);
  best.error = static_cast<double>(best_rtt) / 2.0;
  best.exchanges = n;
  return best;
}

// Parent side: hands the child its turn with this leader's own offset, then answers the
// child's round trips until it says it is done.
void serve(int child, MPI_Comm leaders, const Relay& mine) {
  PMPI_Send(&mine, sizeof mine, MPI_BYTE, child, kTag, leaders);
  for (;;) {
    int more = 0;
    receive(&more, 1, MPI_INT, child, leaders);
    if (!more) break;
    const std::uint64_t now = now_ns();
    PMPI_Send(&now, 1, MPI_UINT64_T, child, kTag, leaders);
  }
}

// Leader i is measured against leader i - 2^k, k its highest bit, then measures i + 2^j for
// every j above k: a binomial tree, so all pairs of one round measure at once and the rounds
// grow with log2(hosts), not with the hosts. Offsets add up along the path to rank 0, and so
// do their error bounds.
trace::ClockOffset measure_leaders(MPI_Comm leaders) {
  int index = 0, count = 1;
  PMPI_Comm_rank(leaders, &index);
  PMPI_Comm_size(leaders, &count);
  trace::ClockOffset mine;
  int bit = 1;  // the first round this leader serves in
  if (index > 0) {
    while (bit * 2 <= index) bit *= 2;
    Relay parent{};
    mine = measure_against(index - bit, leaders, parent);
    mine.offset += parent.offset;
    mine.error += parent.error;
    bit *= 2;
  }
  const Relay relay{mine.offset, mine.error};
  for (; index + bit < count; bit *= 2) serve(index + bit, leaders, relay);
  if (index == 0) mine.local_time = now_ns();
  return mine;
}

// The name of the clock this process reads: the kernel's boot id and the time namespace
// (Linux), so that two containers or simulated hosts with their own time namespaces on one
// machine are told apart; the host name where /proc cannot say.
std::string clock_domain_name() {
  const std::string boot = read_line("/proc/sys/kernel/random/boot_id");
  char ns[128] = {0};
  const ssize_t n = ::readlink("/proc/self/ns/time", ns, sizeof ns - 1);
  if (!boot.empty()) return "boot " + boot + (n > 0 ? std::string(" ") + ns : std::string());
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return std::string("host ") + host;
}

}  // namespace

void ClockSync::join() {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  domain_ = clock_domain_name();
  domain_comm_ = split_by_key(MPI_COMM_WORLD, fnv1a(domain_), rank);
  int domain_rank = 0;
  PMPI_Comm_rank(domain_comm_, &domain_rank);
  leader_ = rank;  // the lowest world rank of the domain: rank 0 leads its own
  PMPI_Bcast(&leader_, 1, MPI_INT, 0, domain_comm_);
  PMPI_Comm_split(MPI_COMM_WORLD, domain_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders_comm_);
}

void ClockSync::measure() {
  trace::ClockOffset p;
  if (leaders_comm_ != MPI_COMM_NULL) p = measure_leaders(leaders_comm_);
  // The leader's point holds for every rank of its domain: they read the same clock.
  MPI_Request request;
  PMPI_Ibcast(&p, sizeof p, MPI_BYTE, 0, domain_comm_, &request);
  wait_idle(&request);
  points_.push_back(p);
}

void ClockSync::leave() {
  if (leaders_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&leaders_comm_);
  if (domain_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&domain_comm_);
}

}  // namespace perusetrace
