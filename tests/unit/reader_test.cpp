// The archive reader (reader/) on small real archives kept in tests/data/ (written by
// tests/data/make_archives.sh), without mpirun: definitions, every event family against the
// counts the traced program printed itself, the same stream whatever the number of reading
// threads, and clear errors for what it cannot read.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/location_share.hpp"

using namespace perusetrace::archive;

namespace {

void no_progress(std::uint64_t, std::uint64_t) {}

std::string data(const std::string& name) {
  return std::string(PERUSETRACE_TEST_DATA) + "/" + name;
}

// Counts each family and kind, and checks that each location's times never go back.
class Counter : public EventSink {
 public:
  explicit Counter(std::size_t locations) : last_(locations, 0) {}
  std::map<std::string, std::uint64_t> n;
  bool ordered = true;
  std::uint64_t global_last = 0;
  bool globally_ordered = true;

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t) override { at(loc, t, "Enter"); }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) override { at(loc, t, "Leave"); }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t, const PeruseFields&) override {
    at(loc, t, "Peruse");
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override {
    static const char* const kNames[] = {"Send", "SendComplete", "RecvRequest", "Recv",
                                         "Cancelled"};
    std::string name = kNames[static_cast<int>(e.kind)];
    if (e.kind == P2pKind::Send || e.kind == P2pKind::Recv) name += e.blocking ? "" : "-nb";
    at(loc, t, name);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    at(loc, t, c.request == 0 ? "CollectiveEnd" : "CollectiveComplete");
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t) override {
    at(loc, t, "CollectiveRequest");
  }

 private:
  void at(std::uint32_t loc, std::uint64_t t, const std::string& kind) {
    ++n[kind];
    if (t < last_.at(loc)) ordered = false;
    if (t < global_last) globally_ordered = false;
    last_[loc] = global_last = t;
  }
  std::vector<std::uint64_t> last_;
};

// Every callback as one line, to compare two reads.
class Transcript : public EventSink {
 public:
  std::ostringstream out;
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t r) override {
    out << "E " << loc << ' ' << t << ' ' << r << '\n';
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t r) override {
    out << "L " << loc << ' ' << t << ' ' << r << '\n';
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t r, const PeruseFields& f) override {
    out << "P " << loc << ' ' << t << ' ' << r << ' ' << f.request << ' ' << f.peer << ' ' << f.tag
        << ' ' << f.bytes << '\n';
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override {
    out << "M " << loc << ' ' << t << ' ' << static_cast<int>(e.kind) << ' ' << e.peer << ' '
        << e.tag << ' ' << e.bytes << ' ' << e.request << '\n';
  }
};

std::string transcript(const std::string& path, unsigned threads) {
  ArchiveReader reader(path);
  reader.set_reading_threads(threads);
  Transcript t;
  reader.read_events(t, no_progress);
  return t.out.str();
}

std::map<std::string, std::uint64_t> expected_counts(const std::string& file) {
  std::map<std::string, std::uint64_t> counts;
  std::ifstream in(file);
  std::string word, kind;
  std::uint64_t n = 0;
  while (in >> word >> kind >> n) counts[kind] = n;
  return counts;
}

std::string error_of(const std::string& path) {
  try {
    ArchiveReader reader(path);
    Counter c(reader.definitions().locations.size());
    reader.read_events(c, no_progress);
  } catch (const ArchiveError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("definitions: ranks, locations, communicators, regions") {
  ArchiveReader reader(data("known_counts"));
  const Definitions& d = reader.definitions();
  REQUIRE(d.ranks.size() == 4);
  REQUIRE(d.locations.size() >= 4);
  for (std::uint32_t r = 0; r < 4; ++r) CHECK(d.locations[r].rank == r);
  CHECK(d.timer_resolution == 1'000'000'000);
  CHECK(d.trace_length > 0);
  bool world = false;
  for (const CommDef& c : d.comms) world = world || (c.world_ranks.size() == 4 && !c.self);
  CHECK(world);
  bool send = false;
  for (const RegionDef& r : d.regions)
    send = send || (r.name == "MPI_Send" && r.kind == RegionKind::MpiFunction);
  CHECK(send);
  CHECK(d.settings.find("MPITRACE_PERUSE_EVENTS=none") != std::string::npos);
}

TEST_CASE("every message and collective the program counted, in time order") {
  ArchiveReader reader(data("known_counts"));
  Counter c(reader.definitions().locations.size());
  reader.read_events(c, no_progress);
  const auto expect = expected_counts(data("known_counts/expect.txt"));
  REQUIRE(expect.size() >= 10);
  CHECK(c.n["Send"] == expect.at("MpiSend"));
  CHECK(c.n["Send-nb"] == expect.at("MpiIsend"));
  CHECK(c.n["SendComplete"] == expect.at("MpiIsendComplete"));
  CHECK(c.n["Recv"] == expect.at("MpiRecv"));
  CHECK(c.n["Recv-nb"] == expect.at("MpiIrecv"));
  CHECK(c.n["RecvRequest"] == expect.at("MpiIrecvRequest"));
  CHECK(c.n["CollectiveEnd"] == expect.at("MpiCollectiveEnd"));
  CHECK(c.n["CollectiveRequest"] == expect.at("NonBlockingCollectiveRequest"));
  CHECK(c.n["CollectiveComplete"] == expect.at("NonBlockingCollectiveComplete"));
  CHECK(c.n["Enter"] == c.n["Leave"]);
  CHECK(c.n["Peruse"] == 0);  // traced with MPITRACE_PERUSE_EVENTS=none
  CHECK(c.ordered);
  CHECK(c.globally_ordered);
}

TEST_CASE("Peruse events with their fields") {
  ArchiveReader reader(data("late_sender"));
  const Definitions& d = reader.definitions();
  REQUIRE(d.peruse_events.size() >= 10);
  std::map<std::string, std::uint64_t> seen;
  struct Names : EventSink {
    const Definitions& d;
    std::map<std::string, std::uint64_t>& seen;
    bool fields = true;
    Names(const Definitions& defs, std::map<std::string, std::uint64_t>& s) : d(defs), seen(s) {}
    void peruse(std::uint32_t, std::uint64_t, std::uint32_t region,
                const PeruseFields& f) override {
      const std::string& name = d.peruse_events.at(d.regions.at(region).peruse_index);
      ++seen[name];
      // A request's events name it and its communicator.
      if (name.rfind("REQ_", 0) == 0) fields = fields && f.request != 0 && f.comm != kNoComm;
    }
  } names(d, seen);
  reader.read_events(names, no_progress);
  // The paper's early receiver: activated, inserted in the posted queue, the message arrived
  // and matched, transferred, completed.
  for (const char* e : {"REQ_ACTIVATE", "REQ_INSERT_IN_POSTED_Q", "MSG_ARRIVED", "REQ_XFER_BEGIN",
                        "REQ_XFER_END", "REQ_COMPLETE"}) {
    INFO(e);
    CHECK(seen[e] > 0);
  }
  CHECK(names.fields);
}

TEST_CASE("the same events in the same order whatever the number of reading threads") {
  for (const char* archive : {"known_counts", "late_sender", "rma"}) {
    INFO(archive);
    const std::string one = transcript(data(archive), 1);
    CHECK(!one.empty());
    CHECK(transcript(data(archive), 2) == one);
    CHECK(transcript(data(archive), 4) == one);
  }
}

// The lines of a transcript whose location (the second word) is one of `locations`.
std::string lines_of(const std::string& transcript, const std::vector<std::uint32_t>& locations) {
  std::istringstream in(transcript);
  std::string line, out;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    std::uint32_t loc = 0;
    words >> kind >> loc;
    if (std::find(locations.begin(), locations.end(), loc) != locations.end()) out += line + '\n';
  }
  return out;
}

TEST_CASE("a parallel analysis' shares: whole ranks, contiguous, every event once, in order") {
  for (const char* archive : {"known_counts", "late_sender", "rma"}) {
    INFO(archive);
    const std::string all = transcript(data(archive), 2);
    ArchiveReader whole(data(archive));
    const Definitions& defs = whole.definitions();
    for (unsigned parts = 1; parts <= defs.ranks.size() + 2; ++parts) {
      INFO(parts << " parts");
      std::vector<std::uint32_t> ranks_seen;
      std::uint64_t events = 0;
      for (unsigned part = 0; part < parts; ++part) {
        const std::vector<std::uint32_t> ranks = ranks_of_share(defs, part, parts);
        // Parts get a rank each while there are ranks enough.
        CHECK(ranks.empty() == (part >= defs.ranks.size()));
        ranks_seen.insert(ranks_seen.end(), ranks.begin(), ranks.end());
        const std::vector<std::uint32_t> locations = location_share(defs, part, parts);
        for (const std::uint32_t l : locations) {
          CHECK(std::find(ranks.begin(), ranks.end(), defs.locations[l].rank) != ranks.end());
          events += defs.locations[l].events;
        }
        if (locations.empty()) continue;
        // The share's events are the whole read's events of its locations, in the same order.
        ArchiveReader reader(data(archive));
        reader.set_locations(locations);
        Transcript t;
        reader.read_events(t, no_progress);
        CHECK(t.out.str() == lines_of(all, locations));
      }
      std::vector<std::uint32_t> every(defs.ranks.size());
      for (std::uint32_t r = 0; r < every.size(); ++r) every[r] = r;
      CHECK(ranks_seen == every);
      CHECK(events == defs.total_events);
    }
  }
}

TEST_CASE("shares balance the ranks' events") {
  Definitions defs;
  // Ranks 0..7 with 1, 1, 1, 1, 10, 10, 1, 1 events (ranks 4 and 5 heavy).
  const std::uint64_t events[] = {1, 1, 1, 1, 10, 10, 1, 1};
  for (std::uint32_t r = 0; r < 8; ++r) {
    defs.ranks.push_back(RankDef{});
    LocationDef l;
    l.rank = r;
    l.events = events[r];
    defs.locations.push_back(l);
  }
  CHECK(ranks_of_share(defs, 0, 2) == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
  CHECK(ranks_of_share(defs, 1, 2) == std::vector<std::uint32_t>{5, 6, 7});
  CHECK(ranks_of_share(defs, 0, 3) == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(ranks_of_share(defs, 1, 3) == std::vector<std::uint32_t>{4});
  CHECK(ranks_of_share(defs, 2, 3) == std::vector<std::uint32_t>{5, 6, 7});
  CHECK(ranks_of_share(defs, 3, 3).empty());
  CHECK_THROWS_AS(ArchiveReader(data("known_counts")).set_locations({999}), std::invalid_argument);
}

TEST_CASE("an archive of a later format is refused by name, older ones read") {
  CHECK(archive_version_problem("", "a/traces.otf2", "perusetrace 0.1.0").empty());
  CHECK(archive_version_problem("1", "a/traces.otf2", "perusetrace 0.1.0").empty());
  const std::string later = archive_version_problem("99", "a/traces.otf2", "perusetrace 9.0");
  CHECK(later.find("a/traces.otf2 is an archive of version 99 (written by perusetrace 9.0)") == 0);
  CHECK(later.find("Read it with the perusetrace that wrote it") != std::string::npos);
  CHECK(!archive_version_problem("x", "a/traces.otf2", "").empty());
}

TEST_CASE("what the reader cannot read, it names with the fix") {
  CHECK(error_of(data("no-such-trace")).find("does not exist") != std::string::npos);
  const std::string tmp =
      (std::filesystem::temp_directory_path() / ("reader_test." + std::to_string(::getpid())))
          .string();
  std::filesystem::remove_all(tmp);
  std::filesystem::create_directories(tmp);
  CHECK(error_of(tmp).find("traces.otf2") != std::string::npos);
  // A copy whose event file of rank 1 is cut in half: damaged, named, never misread.
  std::filesystem::copy(data("known_counts"), tmp + "/cut",
                        std::filesystem::copy_options::recursive);
  const std::string evt = tmp + "/cut/traces/1.evt";
  std::filesystem::resize_file(evt, std::filesystem::file_size(evt) / 2);
  const std::string cut = error_of(tmp + "/cut");
  CHECK(cut.find("1.evt") != std::string::npos);
  CHECK(cut.find("trace the program again") != std::string::npos);
  std::filesystem::remove_all(tmp);
}
