// The writer and the reader against each other, without MPI: records written with the project's
// own writer (`perusetrace recover`'s path, write_archive_offline) into an archive in a temporary
// directory, read back by the reader as the same events with the same fields.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lib/mpi_functions.hpp"
#include "lib/regions.hpp"
#include "otf2_writer/writer.hpp"
#include "reader/archive_reader.hpp"

using namespace perusetrace;

namespace {

Record record(std::uint64_t time, RecordKind kind) {
  Record r{};
  r.time = time;
  r.kind = kind;
  return r;
}

Record call(std::uint64_t time, RecordKind kind, Fn fn) {
  Record r = record(time, kind);
  r.region = static_cast<std::uint16_t>(fn);
  return r;
}

Record message(std::uint64_t time, RecordKind kind, int peer, int tag, std::uint64_t bytes,
               std::uint64_t request) {
  Record r = record(time, kind);
  r.comm = 0;  // MPI_COMM_WORLD, the rank's first communicator
  r.peer = peer;
  r.tag = tag;
  r.bytes = bytes;
  r.request = request;
  return r;
}

// Rank 0 sends 64 bytes with tag 7 (MPI_Send); rank 1 receives them with MPI_Irecv + MPI_Wait.
std::vector<Record> records_of(int rank) {
  if (rank == 0)
    return {call(1000, RecordKind::Enter, Fn::MPI_Send),
            message(1100, RecordKind::MpiSend, 1, 7, 64, 0),
            call(1200, RecordKind::Leave, Fn::MPI_Send)};
  return {call(900, RecordKind::Enter, Fn::MPI_Irecv),
          message(950, RecordKind::MpiIrecvRequest, 0, 0, 0, 42),
          call(960, RecordKind::Leave, Fn::MPI_Irecv),
          call(970, RecordKind::Enter, Fn::MPI_Wait),
          message(1300, RecordKind::MpiIrecv, 0, 7, 64, 42),
          call(1310, RecordKind::Leave, Fn::MPI_Wait)};
}

trace::ProcessInfo process_of(int rank) {
  trace::ProcessInfo p;
  p.host = "host-a";
  trace::CommInfo world;
  world.local_id = 0;
  world.name = "MPI_COMM_WORLD";
  world.world_ranks = {0, 1};
  p.comms.push_back(world);
  p.start_time = 0;
  p.end_time = 2000;
  p.clock_leader = 0;
  (void)rank;
  return p;
}

struct Seen : archive::EventSink {
  const archive::Definitions& defs;
  std::vector<std::string> lines;
  explicit Seen(const archive::Definitions& d) : defs(d) {}
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    lines.push_back(std::to_string(loc) + " " + std::to_string(t) + " enter " +
                    defs.regions.at(region).name);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    lines.push_back(std::to_string(loc) + " " + std::to_string(t) + " leave " +
                    defs.regions.at(region).name);
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    lines.push_back(std::to_string(loc) + " " + std::to_string(t) + " p2p " +
                    std::to_string(static_cast<int>(e.kind)) + " peer " + std::to_string(e.peer) +
                    " tag " + std::to_string(e.tag) + " bytes " + std::to_string(e.bytes) +
                    " request " + std::to_string(e.request) + (e.blocking ? " blocking" : ""));
  }
};

}  // namespace

TEST_CASE("what the writer writes, the reader reads back field by field") {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("writer_reader_test." + std::to_string(::getpid())))
                              .string();
  std::filesystem::remove_all(dir);
  trace::ArchiveSpec spec;
  spec.directory = dir;
  spec.size = 2;
  spec.regions = region_table();
  spec.peruse_region_base = kPeruseRegionBase;
  spec.otf2_memory_bytes = 2u << 20;
  spec.settings = "MPITRACE_PERUSE_EVENTS=none";
  std::vector<trace::OfflineRank> ranks = {{process_of(0), 1}, {process_of(1), 1}};
  std::vector<bool> given(2, false);
  auto read = [&](int rank, std::uint32_t, Record* out, std::size_t capacity) -> std::size_t {
    if (given[static_cast<std::size_t>(rank)]) return 0;
    given[static_cast<std::size_t>(rank)] = true;
    const std::vector<Record> r = records_of(rank);
    REQUIRE(r.size() <= capacity);
    std::copy(r.begin(), r.end(), out);
    return r.size();
  };
  std::string error;
  REQUIRE(trace::write_archive_offline(spec, ranks, read, error));
  INFO(error);

  archive::ArchiveReader reader(dir);
  const archive::Definitions& d = reader.definitions();
  REQUIRE(d.ranks.size() == 2);
  CHECK(d.nodes.size() == 1);
  CHECK(d.nodes[0].name == "host-a");
  CHECK(d.settings.find("MPITRACE_PERUSE_EVENTS=none") != std::string::npos);
  Seen seen(d);
  reader.read_events(seen, [](std::uint64_t, std::uint64_t) {});
  // Times are ns since the trace's start (the earliest record, rank 1's at 900).
  const std::vector<std::string> want = {
      "1 0 enter MPI_Irecv",  "1 50 p2p 2 peer 0 tag 0 bytes 0 request 42",
      "1 60 leave MPI_Irecv", "1 70 enter MPI_Wait",
      "0 100 enter MPI_Send", "0 200 p2p 0 peer 1 tag 7 bytes 64 request 0 blocking",
      "0 300 leave MPI_Send", "1 400 p2p 3 peer 0 tag 7 bytes 64 request 42",
      "1 410 leave MPI_Wait",
  };
  CHECK(seen.lines == want);
  std::filesystem::remove_all(dir);
}
