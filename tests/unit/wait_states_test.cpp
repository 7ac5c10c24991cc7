// The wait-state analysis (analysis/wait_states.cpp) on small real archives kept in
// tests/data/wait_states/ (tests/data/make_archives.sh wrote them: 4 ranks, 400 ms
// delays), without mpirun: the patterns, causes and critical path each scenario injects, and
// the leaves adding up to at most each rank's time in MPI.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "analysis/archive_analysis.hpp"
#include "reader/progress_bar.hpp"

using namespace perusetrace;
using namespace perusetrace::report;

namespace {

constexpr double kDelay = 400e6;  // ns

report::Report analysed(const std::string& scenario) {
  archive::ProgressBar bar(true);
  return analyse_archive(std::string(PERUSETRACE_TEST_DATA) + "/wait_states/" + scenario, "", bar);
}

const WaitPatternStat& pattern(const Report& r, WaitPattern p) {
  return r.wait_states.patterns[static_cast<std::size_t>(p)];
}

// Within max(2 %, 2 ms) of `want` ns.
bool near(double got, double want) {
  return got >= want - std::max(0.02 * want, 2e6) && got <= want + std::max(0.02 * want, 2e6);
}

void check_invariant(const Report& r) {
  const WaitStates& w = r.wait_states;
  std::uint64_t all = 0;
  for (std::size_t rank = 0; rank < r.ranks.size(); ++rank) {
    std::uint64_t leaves = 0;
    for (const WaitPatternStat& p : w.patterns) leaves += p.ranks[rank];
    CHECK(leaves == w.rank_wait_ns[rank]);
    CHECK(leaves <= r.ranks[rank].mpi_ns);
    all += leaves;
  }
  CHECK(all == w.total_ns);
}

}  // namespace

TEST_CASE("a chain of late senders: direct and propagated costs of rank 0's phase=A") {
  const Report r = analysed("chain");
  check_invariant(r);
  const WaitPatternStat& ls = pattern(r, WaitPattern::LateSender);
  CHECK(near(static_cast<double>(ls.ranks[1]), kDelay));
  CHECK(near(static_cast<double>(ls.ranks[2]), kDelay));
  const auto a = r.wait_states.causes.find({0, "compute in phase=A"});
  REQUIRE(a != r.wait_states.causes.end());
  CHECK(near(static_cast<double>(a->second.direct), kDelay));
  CHECK(near(static_cast<double>(a->second.propagated), kDelay));
  bool through_b = false;
  for (const auto& [lost, c] : ls.worst.items())
    if (c.rank == 2)
      through_b = c.cause.find("phase=A") != std::string::npos &&
                  c.cause.find("phase=B") != std::string::npos;
  CHECK(through_b);
}

TEST_CASE("MPI_Isend's MPI_Wait waits for a late receiver") {
  const Report r = analysed("late-receiver-isend");
  check_invariant(r);
  const WaitPatternStat& lr = pattern(r, WaitPattern::LateReceiver);
  CHECK(near(static_cast<double>(lr.ranks[0]), kDelay));
  CHECK(lr.functions.count("MPI_Wait") == 1);
  CHECK(pattern(r, WaitPattern::LateSender).total < 2e6);
}

TEST_CASE("a message sent earlier waits while the receiver asks for a late one: wrong order") {
  const Report r = analysed("wrong-order");
  check_invariant(r);
  CHECK(near(static_cast<double>(pattern(r, WaitPattern::LateSenderWrongOrder).ranks[2]), kDelay));
  CHECK(pattern(r, WaitPattern::LateSender).total < 2e6);
}

TEST_CASE("a nonblocking allreduce waits in the MPI_Wait that completes it") {
  const Report r = analysed("nonblocking");
  check_invariant(r);
  const WaitPatternStat& nxn = pattern(r, WaitPattern::WaitAtNxN);
  for (std::size_t rank : {0, 1, 2}) CHECK(near(static_cast<double>(nxn.ranks[rank]), kDelay));
  CHECK(nxn.ranks[3] < 2e6);
  REQUIRE(nxn.functions.size() == 1);
  CHECK(nxn.functions.begin()->first == "MPI_Wait");
}

TEST_CASE("an imbalance that moves between ranks: the critical path runs through phase=slow") {
  const Report r = analysed("alternating");
  check_invariant(r);
  const WaitPatternStat& nxn = pattern(r, WaitPattern::WaitAtNxN);
  for (std::size_t rank = 0; rank < 4; ++rank)
    CHECK(near(static_cast<double>(nxn.ranks[rank]), 3 * 0.75 * kDelay));
  const auto slow = r.wait_states.critical.find("compute in phase=slow");
  REQUIRE(slow != r.wait_states.critical.end());
  CHECK(near(static_cast<double>(slow->second.ns), 4 * kDelay));
  CHECK(near(static_cast<double>(slow->second.mean_ns), kDelay));
  CHECK_FALSE(r.wait_states.critical_truncated);
}
