// Every analysis of analysis/ on small real archives kept in tests/data/ (written by
// tests/data/make_archives.sh), without mpirun, each held to what its traced program did: the
// Peruse analysis' queues and messages, the clock condition, MPI-IO against each rank's own
// tally, RMA, datatypes, MPI_T and annotation contexts. (The wait states: wait_states_test.cpp.)
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/archive_analysis.hpp"

using namespace perusetrace;
using namespace perusetrace::report;

namespace {

std::string data(const std::string& name) {
  return std::string(PERUSETRACE_TEST_DATA) + "/" + name;
}

Report analysed(const std::string& archive, const std::string& by = "") {
  archive::ProgressBar bar(true);
  return analyse_archive(data(archive), by, bar);
}

// file_io's tally: "io RANK FILE KEY=VALUE ..." -> (rank, file) -> key -> value.
std::map<std::pair<int, std::string>, std::map<std::string, std::string>> io_truth() {
  std::map<std::pair<int, std::string>, std::map<std::string, std::string>> truth;
  std::ifstream in(data("file_io/truth.txt"));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string io, file, kv;
    int rank = 0;
    words >> io >> rank >> file;
    while (words >> kv) {
      const auto eq = kv.find('=');
      truth[{rank, file}][kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  return truth;
}

std::uint64_t number(const std::map<std::string, std::string>& tally, const std::string& key) {
  return std::stoull(tally.at(key));
}

}  // namespace

TEST_CASE("Peruse analysis: the early receiver's time in the posted queue") {
  const Report r = analysed("late_sender");  // scenarios late-sender -d 100, 2 ranks
  REQUIRE(r.ranks.size() == 2);
  CHECK(r.missing.empty());  // every Peruse event traced
  CHECK(r.ranks[0].sent >= 1);
  CHECK(r.ranks[1].received >= 1);
  // Rank 1's receive waited in the posted queue about as long as rank 0 computed: 100 ms.
  CHECK(r.posted_queue.count >= 1);
  CHECK(r.posted_queue.total >= 90'000'000);
  CHECK(r.posted_queue.total <= 200'000'000);
  CHECK(r.observed.count("REQ_INSERT_IN_POSTED_Q") == 1);
  CHECK(r.clock.messages >= 1);
  CHECK(r.clock.backwards == 0);
}

TEST_CASE("Peruse analysis: without Peruse events it names the setting that enables it") {
  const Report r = analysed("known_counts");  // MPITRACE_PERUSE_EVENTS=none
  const Missing* m = r.missing_for("posted_queue");
  REQUIRE(m != nullptr);
  CHECK(m->setting.find("MPITRACE_PERUSE_EVENTS=") == 0);
  // The message matrix still comes from the MPI records: every rank sent and received.
  for (const RankStats& rank : r.ranks) {
    CHECK(rank.sent > 0);
    CHECK(rank.received > 0);
  }
}

TEST_CASE("polls folded: each test and probe function's calls as each rank counted them") {
  const Report r = analysed("polls");
  std::ifstream in(data("polls/truth.txt"));
  int rank = 0, lines = 0;
  std::string name;
  std::uint64_t calls = 0;
  double ns = 0;
  while (in >> rank >> name >> calls >> ns) {
    INFO("rank " << rank << " " << name << ": " << calls << " calls, " << ns << " ns");
    ++lines;
    const auto& functions = r.ranks.at(static_cast<std::size_t>(rank)).functions;
    const auto it = functions.find(name);
    CHECK((it == functions.end() ? 0 : it->second.calls) == calls);
    if (calls == 0 || it == functions.end()) continue;
    // Inside the calls, not the folds' spans (2 us of computing after each call): at most what
    // the program's own clock around the calls says, and most of it.
    CHECK(static_cast<double>(it->second.ns) <= ns);
    CHECK(static_cast<double>(it->second.ns) >= ns / 2);
  }
  CHECK(lines == 4 * 7);
}

TEST_CASE("clock condition: rank 1's clock moved 50 ms back") {
  const Report r = analysed("broken_clock");
  CHECK(r.clock.messages >= 1);
  CHECK(r.clock.backwards >= 1);
  CHECK(r.clock.worst_sender == 0);
  CHECK(r.clock.worst_receiver == 1);
  CHECK(r.clock.worst_ns > 0);
  CHECK(r.clock.worst_ns <= 50'000'000);
}

TEST_CASE("MPI-IO: each rank's use of each file as the program counted it") {
  const Report r = analysed("file_io");
  REQUIRE(r.io.present);
  const auto truth = io_truth();
  REQUIRE(truth.size() >= 8);
  for (const auto& [key, tally] : truth) {
    const auto& [rank, name] = key;
    INFO("rank " << rank << " file " << name);
    const IoFileStat* file = nullptr;
    for (const IoFileStat& f : r.io.files)
      if (f.name.size() >= name.size() &&
          f.name.compare(f.name.size() - name.size(), name.size(), name) == 0)
        file = &f;
    if (number(tally, "opens") == 0 && number(tally, "deletes") == 0) continue;
    REQUIRE(file != nullptr);
    const IoRankStat& s = file->ranks.at(rank);
    CHECK(s.opens == number(tally, "opens"));
    CHECK(s.closes == number(tally, "closes"));
    CHECK(s.reads.operations == number(tally, "reads"));
    CHECK(s.reads.bytes == number(tally, "read_bytes"));
    CHECK(s.writes.operations == number(tally, "writes"));
    CHECK(s.writes.bytes == number(tally, "write_bytes"));
    CHECK(s.flushes.operations == number(tally, "flushes"));
    CHECK(s.seeks == number(tally, "seeks"));
    CHECK(s.deletes == number(tally, "deletes"));
    for (unsigned k = 0; k < kIoKinds; ++k) {
      INFO(kIoKindNames[k]);
      CHECK(s.kinds[k].operations == number(tally, kIoKindNames[k]));
      CHECK(s.kinds[k].bytes == number(tally, std::string(kIoKindNames[k]) + "_bytes"));
    }
  }
}

TEST_CASE("RMA: the halo window's puts and gets, every operation completed") {
  const Report r = analysed("rma");  // tests/apps/rma.c, 4 ranks
  REQUIRE(r.rma.present);
  const RmaWindowStat* halo = nullptr;
  for (const RmaWindowStat& w : r.rma.windows)
    if (w.name == "halo window") halo = &w;
  REQUIRE(halo != nullptr);
  // Per rank one put to r+1 in each of two fence epochs, plus two PSCW puts; a get from r+2.
  CHECK(halo->traffic.puts == 10);
  CHECK(halo->traffic.gets == 4);
  for (std::uint32_t origin = 0; origin < 4; ++origin) {
    INFO("origin " << origin);
    CHECK(r.rma.pairs.count({origin, (origin + 1) % 4}) == 1);
  }
  CHECK(r.rma.never_completed == 0);
}

TEST_CASE("datatypes: bytes per type, packed or contiguous") {
  const Report r = analysed("datatypes");  // tests/apps/datatypes.c, 4 ranks
  REQUIRE(r.has_datatypes);
  const DatatypeStat* column = nullptr;
  for (const DatatypeStat& t : r.datatypes)
    if (t.name == "column") column = &t;
  REQUIRE(column != nullptr);
  // vector(4, 1, 8) of MPI_DOUBLE: 32 bytes with gaps, sent once by each rank of the ring.
  CHECK(!column->contiguous);
  CHECK(column->size == 32);
  CHECK(column->sends == 4);
  CHECK(column->send_bytes == 128);
  for (std::size_t i = 1; i < r.datatypes.size(); ++i)
    CHECK(r.datatypes[i - 1].bytes() >= r.datatypes[i].bytes());  // most bytes first
}

TEST_CASE("MPI_T: the unexpected queue of the flooded rank") {
  const Report r = analysed("mpit");  // mpit_counts 100 20: rank 1 gets 20 messages unexpected
  REQUIRE(r.mpit.present);
  bool found = false;
  for (const PvarStat& p : r.mpit.pvars) {
    if (p.name.rfind("pml_ob1_unexpected_msgq_length (MPI_COMM_WORLD) [peer 0]", 0) != 0) continue;
    found = true;
    REQUIRE(p.ranks.size() == 2);
    CHECK(p.ranks[1].max >= 20);
    CHECK(p.ranks[0].max == 0);
  }
  CHECK(found);
}

TEST_CASE("contexts: messages per annotation value") {
  // annotated_phases 5 20: 5 iterations; in each, rank 0 sends 20 messages in phase "exchange".
  const Report r = analysed("annotated", "iteration,phase");
  REQUIRE(r.by_context.attributes.size() == 2);
  std::uint64_t sent = 0, received = 0;
  for (const ContextStat& c : r.by_context.contexts) {
    INFO(c.values[0] << " " << c.values[1]);
    if (c.values[1] == "exchange") {
      CHECK(c.sent == 20);
      CHECK(c.received == 20);
    } else {
      CHECK(c.sent == 0);
    }
    sent += c.sent;
    received += c.received;
  }
  CHECK(sent == 100);
  CHECK(received == 100);
}
