#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "record/record_file.hpp"
#include "record/record_packing.hpp"

using namespace perusetrace;

namespace {

// A 0-byte ping-pong's records and the odd ones a journal can hold: wide values, negative
// peers, times that go back (MPI_Init's Enter), and what a torn slot leaves (escaped).
std::vector<Record> sample(std::size_t n) {
  std::vector<Record> out;
  std::uint64_t t = 1'000'000'000'000ull;
  for (std::size_t i = 0; i < n; ++i) {
    Record r{};
    t += 90 + (i * 7919) % 2000;
    r.time = t;
    switch (i % 9) {
      case 0:
        r.kind = RecordKind::Enter;
        r.region = 38;
        r.event = static_cast<std::uint8_t>(RecordKind::MpiSend);
        r.peer = 1;
        r.bytes = i;
        break;
      case 1:
        r.kind = RecordKind::Leave;
        r.region = 38;
        break;
      case 2:
        r.kind = RecordKind::Peruse;
        r.event = static_cast<std::uint8_t>(i % 17);
        r.region = 1;
        r.peer = -1;  // MPI_ANY_SOURCE
        r.tag = -1;
        r.request = i / 9;
        r.aux = ~std::uint64_t{0} - i;  // large, and falling
        break;
      case 3:
        r.kind = RecordKind::Peruse;
        r.event = 200;  // no slot: escaped
        r.request = i;
        break;
      case 4:
        r.kind = static_cast<RecordKind>(0xee);  // torn: escaped, and the reader drops it
        r.time = 3;
        break;
      case 5:
        r.kind = RecordKind::Enter;
        r.region = 60000;  // shares a slot with other regions
        break;
      case 6:
        r.kind = RecordKind::Leave;
        r.region = 60000;
        r.time = t - 50'000;  // earlier than the record before
        break;
      case 7:
        r.kind = RecordKind::CollectiveEnd;
        r.comm = 0xfffffff0u;
        r.peer = std::int32_t{-2147483647 - 1};
        r.tag = 2147483647;
        r.bytes = std::uint64_t{1} << 63;
        break;
      default:
        r.kind = RecordKind::IoOperationComplete;
        r.comm = static_cast<std::uint32_t>(i);
        r.request = ~std::uint64_t{0};
        break;
    }
    out.push_back(r);
  }
  return out;
}

// One block of as many records from `in` as fit, the way a drain packs them; `taken` says how
// many.
std::size_t pack_block(const Record* in, std::size_t count, std::uint8_t* out, std::size_t capacity,
                       packing::History& history, std::size_t& taken) {
  packing::BlockFill fill;
  packing::block_start(history, fill);
  const Record* cursor = in;
  packing::block_add(cursor, in + count, out, capacity, history, fill);
  taken = static_cast<std::size_t>(cursor - in);
  return packing::block_finish(out, fill);
}

// Packs `in` into blocks of at most `capacity` bytes, one after the other.
std::vector<std::uint8_t> pack(const std::vector<Record>& in, std::size_t capacity,
                               std::size_t* blocks = nullptr) {
  std::vector<std::uint8_t> file, block(capacity);
  packing::History history;
  std::size_t done = 0, count = 0;
  while (done < in.size()) {
    std::size_t taken = 0;
    const std::size_t bytes =
        pack_block(in.data() + done, in.size() - done, block.data(), capacity, history, taken);
    REQUIRE(taken > 0);
    REQUIRE(bytes <= capacity);
    file.insert(file.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(bytes));
    done += taken;
    ++count;
  }
  if (blocks != nullptr) *blocks = count;
  return file;
}

std::vector<Record> unpack_all(const std::vector<std::uint8_t>& file) {
  std::vector<Record> out;
  packing::History history;
  std::size_t at = 0;
  while (at + sizeof(packing::BlockHeader) <= file.size()) {
    packing::BlockHeader h;
    std::memcpy(&h, file.data() + at, sizeof h);
    REQUIRE(h.magic == packing::kBlockMagic);
    const std::uint8_t* p = file.data() + at + sizeof h;
    const std::uint8_t* end = p + h.bytes;
    history.reset();
    Record r;
    std::size_t n = 0;
    while (packing::unpack_record(p, end, history, r) == packing::Unpacked::Record) {
      out.push_back(r);
      ++n;
    }
    CHECK(p == end);
    CHECK(n == h.records);
    at += sizeof h + h.bytes;
  }
  return out;
}

bool same(const Record& a, const Record& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct TempFile {
  std::string path;
  explicit TempFile(const std::vector<std::uint8_t>& bytes) {
    char name[] = "/tmp/perusetrace-records-XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    path = name;
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

// Reads a records file the way MPI_Finalize and recover do; ticks are ns (identity scale).
std::vector<Record> read_file(const std::vector<std::uint8_t>& bytes, RecordFile::Counts& counts) {
  TempFile file(bytes);
  RecordFile reader(400, 18);
  std::string error;
  REQUIRE(reader.open(file.path, error));
  std::vector<Record> out;
  Record chunk[7];  // small, so that reads end inside blocks
  while (const std::size_t n = reader.read(chunk, 7)) out.insert(out.end(), chunk, chunk + n);
  counts = reader.counts();
  return out;
}

// Well-formed records only, in time order, with their regions balanced.
std::vector<Record> ping_pong(std::size_t round_trips) {
  std::vector<Record> out;
  std::uint64_t t = 5'000;
  for (std::size_t i = 0; i < round_trips; ++i) {
    out.push_back(Record{t += 100, RecordKind::Enter, 0, 38, 0, 1, 0, 0, 0, 0});
    out.push_back(Record{t += 100, RecordKind::Leave, 0, 38, 0, 0, 0, 0, 0, 0});
    out.push_back(Record{t += 100, RecordKind::Enter, 0, 32, 0, 0, 0, 0, 0, 0});
    out.push_back(Record{t += 100, RecordKind::Peruse, 0, 1, 0, 1, 0, 0, i, 0});
    out.push_back(Record{t += 100, RecordKind::Peruse, 7, 1, 0, 1, 0, 0, i, 0});
    out.push_back(Record{t += 100, RecordKind::Leave, 0, 32, 0, 0, 0, 0, 0, 0});
  }
  return out;
}

}  // namespace

TEST_CASE("records come back from packing exactly as they went in") {
  const std::vector<Record> in = sample(5000);
  std::size_t blocks = 0;
  const auto file = pack(in, 4096, &blocks);  // small blocks: many fresh starts
  CHECK(blocks > 10);
  const std::vector<Record> out = unpack_all(file);
  REQUIRE(out.size() == in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    INFO("record " << i);
    REQUIRE(same(in[i], out[i]));
  }
}

TEST_CASE("a change in any one byte of any field comes back") {
  // Packing writes only the fields that changed since its slot's last record: a change in any one
  // byte of any field must be seen, whatever way the fields are compared.
  for (const RecordKind kind : {RecordKind::Peruse, RecordKind::Enter, RecordKind::CollectiveEnd}) {
    const Record base{1'000, kind, 3, 38, 7, -1, 99, 4096, 12, 5};
    std::vector<Record> in;
    std::uint64_t t = base.time;
    for (std::size_t byte = offsetof(Record, event); byte < sizeof(Record); ++byte) {
      for (const std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
        Record changed = base;
        reinterpret_cast<unsigned char*>(&changed)[byte] ^= flip;
        changed.time = t += 10;
        in.push_back(changed);
        Record again = base;
        again.time = t += 10;
        in.push_back(again);
      }
    }
    const std::vector<Record> out = unpack_all(pack(in, 1 << 16));
    REQUIRE(out.size() == in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      INFO("kind " << static_cast<int>(kind) << ", record " << i);
      REQUIRE(same(in[i], out[i]));
    }
  }
}

TEST_CASE("a ping-pong's records pack to a few bytes each") {
  const std::vector<Record> in = ping_pong(10'000);
  const auto file = pack(in, packing::kMaxBlockBytes);
  const double per_record = static_cast<double>(file.size()) / static_cast<double>(in.size());
  INFO(per_record << " bytes per record");
  CHECK(per_record < 6.0);  // 48 in memory
}

TEST_CASE("unpacking stops at the end of the bytes and refuses damage without reading past") {
  const std::vector<Record> in = sample(200);
  const auto file = pack(in, packing::kMaxBlockBytes);
  packing::BlockHeader h;
  std::memcpy(&h, file.data(), sizeof h);
  const std::vector<std::uint8_t> body(file.begin() + sizeof h, file.end());

  SECTION("every cut ends in End after the records wholly before it") {
    for (std::size_t cut = 0; cut < body.size(); cut += 3) {
      // The cut-off bytes live on the heap, so a read past them is AddressSanitizer's to see.
      std::vector<std::uint8_t> part(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(cut));
      packing::History history;
      history.reset();
      const std::uint8_t* p = part.data();
      Record r;
      std::size_t n = 0;
      packing::Unpacked got;
      while ((got = packing::unpack_record(p, part.data() + part.size(), history, r)) ==
             packing::Unpacked::Record) {
        REQUIRE(same(r, in[n]));
        ++n;
      }
      REQUIRE(got == packing::Unpacked::End);
      REQUIRE(n < in.size());
    }
  }
  SECTION("an unknown kind byte is damage") {
    const std::uint8_t bad[] = {0x40, 0, 0};
    packing::History history;
    history.reset();
    const std::uint8_t* p = bad;
    Record r;
    CHECK(packing::unpack_record(p, bad + sizeof bad, history, r) == packing::Unpacked::Malformed);
    CHECK(p == bad);
  }
  SECTION("a varint of more than ten bytes is damage") {
    std::vector<std::uint8_t> bad = {static_cast<std::uint8_t>(RecordKind::MpiSend), 0};
    bad.insert(bad.end(), 11, 0xff);
    bad.push_back(0);
    packing::History history;
    history.reset();
    const std::uint8_t* p = bad.data();
    Record r;
    CHECK(packing::unpack_record(p, bad.data() + bad.size(), history, r) ==
          packing::Unpacked::Malformed);
  }
}

TEST_CASE("a records file is read back whole, and around a torn or damaged end") {
  const std::vector<Record> in = ping_pong(3000);
  std::size_t blocks = 0;
  const auto file = pack(in, 2048, &blocks);
  REQUIRE(blocks > 5);

  SECTION("whole") {
    RecordFile::Counts counts;
    const auto out = read_file(file, counts);
    REQUIRE(out.size() == in.size());
    for (std::size_t i = 0; i < in.size(); ++i) REQUIRE(same(in[i], out[i]));
    CHECK(counts.kept == in.size());
    CHECK(counts.dropped == 0);
    CHECK(counts.torn_bytes == 0);
    CHECK(counts.closed_regions == 0);
  }
  SECTION("cut inside the last block: the records wholly written are kept") {
    const std::vector<std::uint8_t> cut(file.begin(), file.end() - 7);
    RecordFile::Counts counts;
    const auto out = read_file(cut, counts);
    CHECK(counts.torn_bytes > 0);
    CHECK(counts.dropped == 0);
    REQUIRE(counts.kept >= in.size() - 3);
    REQUIRE(counts.kept < in.size());
    for (std::size_t i = 0; i < counts.kept; ++i) REQUIRE(same(in[i], out[i]));
    // A region left open by the cut is closed at the last time kept.
    CHECK(out.size() == counts.kept + counts.closed_regions);
  }
  SECTION("cut between two records inside the last block: torn there, nothing dropped") {
    // The last block's record boundaries, found by reading its body record by record.
    std::size_t at = 0, last = 0;
    packing::BlockHeader h{};
    while (at < file.size()) {
      std::memcpy(&h, file.data() + at, sizeof h);
      last = at;
      at += sizeof h + h.bytes;
    }
    const std::uint8_t* p = file.data() + last + sizeof h;
    const std::uint8_t* end = p + h.bytes;
    packing::History history;
    history.reset();
    Record r;
    for (std::uint32_t i = 0; i < h.records / 2; ++i)
      REQUIRE(packing::unpack_record(p, end, history, r) == packing::Unpacked::Record);
    const std::vector<std::uint8_t> cut(file.data(), p);  // ends after the (records/2)th record
    RecordFile::Counts counts;
    const auto out = read_file(cut, counts);
    CHECK(counts.dropped == 0);
    CHECK(counts.torn_records == h.records - h.records / 2);
    CHECK(counts.kept == in.size() - counts.torn_records);
    for (std::size_t i = 0; i < counts.kept; ++i) REQUIRE(same(in[i], out[i]));
  }
  SECTION("cut inside a block header") {
    const std::vector<std::uint8_t> cut(file.begin(), file.begin() + 2048 + 5);
    RecordFile::Counts counts;
    read_file(cut, counts);
    CHECK(counts.kept > 0);
    CHECK(counts.torn_bytes > 0);
  }
  SECTION("a damaged header ends the file there; the blocks before it are kept") {
    std::vector<std::uint8_t> damaged = file;
    packing::BlockHeader h;
    std::memcpy(&h, damaged.data(), sizeof h);
    const std::size_t second = sizeof h + h.bytes;
    damaged[second] ^= 0xff;  // the second block's magic
    RecordFile::Counts counts;
    const auto out = read_file(damaged, counts);
    CHECK(counts.kept == h.records);
    CHECK(counts.torn_bytes == damaged.size() - second);
    for (std::size_t i = 0; i < counts.kept; ++i) REQUIRE(same(in[i], out[i]));
  }
  SECTION("damage inside a block costs that block's rest, not the next blocks") {
    std::vector<std::uint8_t> damaged = file;
    packing::BlockHeader h;
    std::memcpy(&h, damaged.data(), sizeof h);
    // Where the first block's 10th record starts: its kind byte becomes one no writer writes.
    packing::History history;
    history.reset();
    const std::uint8_t* p = damaged.data() + sizeof h;
    Record r;
    for (int i = 0; i < 10; ++i)
      REQUIRE(packing::unpack_record(p, p + h.bytes, history, r) == packing::Unpacked::Record);
    damaged[static_cast<std::size_t>(p - damaged.data())] = 0x40;
    RecordFile::Counts counts;
    const auto out = read_file(damaged, counts);
    const std::size_t lost = h.records - 10;
    CHECK(counts.dropped >= lost);
    CHECK(counts.dropped <= lost + 1);  // and a Leave whose Enter was lost
    CHECK(counts.kept + counts.dropped == in.size());
    for (std::size_t i = 0; i < 10; ++i) REQUIRE(same(in[i], out[i]));
    CHECK(same(out[10], in[h.records]));  // the next block, from its start
    CHECK(same(out[counts.kept - 1], in.back()));
  }
}
