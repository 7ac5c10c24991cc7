// Every callback the archive reader makes, one line each with all its arguments, for
// tests/analysis/reader_order_test.py: the sequence must not depend on how many threads decode the
// archive, nor on whether the sink is a PipelinedSink (whose batches the reader fills itself).
//   reader_dump ARCHIVE THREADS [--pipelined]
// First a line per location ("location INDEX OTF2_ID RANK"), then "T LOC CALLBACK ARGS..." per
// callback; then says on stderr how many threads read ("threads N").
#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "reader/archive_reader.hpp"
#include "reader/pipelined_sink.hpp"

namespace {

using namespace perusetrace::archive;

class Dump final : public EventSink {
 public:
  explicit Dump(std::FILE* out) : out_(out) {}
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    line("enter", loc, t, fmt::format("{}", region));
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    line("leave", loc, t, fmt::format("{}", region));
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    line("peruse", loc, t,
         fmt::format("{} {} {} {} {} {} {}", region, f.request, f.peer, f.tag, f.bytes, f.operation,
                     f.comm));
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override {
    static constexpr const char* kNames[] = {"send", "send_complete", "recv_request", "recv",
                                             "request_cancelled"};
    const char* name = kNames[static_cast<int>(e.kind)];
    if (e.kind == P2pKind::Send || e.kind == P2pKind::Recv)
      line(name, loc, t,
           fmt::format("{} {} {} {} {} {}", e.peer, e.comm, e.tag, e.bytes, e.request, e.blocking));
    else
      line(name, loc, t, fmt::format("{}", e.request));
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    line("metric", loc, t, fmt::format("{} {}", metric, value));
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    line("real_metric", loc, t, fmt::format("{} {}", metric, value));
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    line("sample", loc, t,
         fmt::format("{} {} {} {} {}", s.context, s.state, s.activity, s.mpi_function, s.weight));
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    line("rma", loc, t,
         fmt::format("{} {} {} {} {} {} {} {} {}", static_cast<int>(e.kind), e.window, e.target,
                     e.sent, e.received, e.matching, e.group, e.sync_level, e.exclusive));
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size_at_open) override {
    line("io_created", loc, t, fmt::format("{} {}", handle, size_at_open));
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    line("io_destroyed", loc, t, fmt::format("{}", handle));
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    line("io_begin", loc, t,
         fmt::format("{} {} {} {} {}", handle, static_cast<int>(op.mode), op.flags, op.bytes,
                     op.matching));
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const IoComplete& done) override {
    const auto bytes = done.bytes;
    const auto matching = done.matching;
    line("io_complete", loc, t, fmt::format("{} {} {}", handle, bytes, matching));
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
               const IoSeek& seek) override {
    const auto offset = seek.offset;
    const auto from = seek.from;
    const auto reached = seek.reached;
    line("io_seek", loc, t,
         fmt::format("{} {} {} {}", handle, offset, static_cast<int>(from), reached));
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                 const IoResize& resize) override {
    const auto region = resize.region;
    const auto size = resize.size;
    line("io_resize", loc, t, fmt::format("{} {} {}", handle, region, size));
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    line("io_delete", loc, t, fmt::format("{}", file));
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    line("collective", loc, t,
         fmt::format("{} {} {} {} {}", c.comm, c.root, c.sent, c.received, c.request));
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    line("collective_request", loc, t, fmt::format("{}", request));
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, const DatatypeBytes& use_of) override {
    const auto datatype = use_of.datatype;
    const auto use = use_of.use;
    const auto bytes = use_of.bytes;
    line("datatype_use", loc, t, fmt::format("{} {} {}", datatype, static_cast<int>(use), bytes));
  }

 private:
  void line(const char* what, std::uint32_t loc, std::uint64_t t, const std::string& rest) {
    fmt::print(out_, "{} {} {} {}\n", t, loc, what, rest);
  }
  std::FILE* out_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: reader_dump ARCHIVE THREADS [--pipelined]\n");
    return 2;
  }
  try {
    ArchiveReader reader(argv[1]);
    reader.set_reading_threads(static_cast<unsigned>(std::atoi(argv[2])));
    for (std::size_t i = 0; i < reader.definitions().locations.size(); ++i) {
      const LocationDef& l = reader.definitions().locations[i];
      fmt::print("location {} {} {}\n", i, l.id, l.rank);
    }
    Dump dump(stdout);
    auto quiet = [](std::uint64_t, std::uint64_t) {};
    if (argc > 3 && std::strcmp(argv[3], "--pipelined") == 0) {
      PipelinedSink pipeline(dump);
      reader.read_events(pipeline, quiet);
      pipeline.finish();
    } else {
      reader.read_events(dump, quiet);
    }
    std::fprintf(stderr, "threads %u\n", reader.reading_threads());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reader_dump: %s\n", e.what());
    return 1;
  }
  return 0;
}
