// The send halves a parallel `prv` ships between analysis ranks (reader/message_halves.hpp):
// what is encoded decodes to the same halves, in channel order, whatever their order before;
// bytes it did not write are an error, never halves made up.
#include <catch2/catch.hpp>

#include <cstdint>
#include <tuple>
#include <vector>

#include "reader/message_halves.hpp"

using perusetrace::archive::decode_halves;
using perusetrace::archive::encode_halves;
using perusetrace::archive::SendHalf;

namespace {

SendHalf half(std::uint32_t from, std::uint32_t to, std::uint32_t tag, std::uint64_t seq,
              std::uint64_t logical, bool physical, std::uint64_t bytes, std::uint32_t loc) {
  SendHalf h{};
  h.key = {from, to, 0, tag};
  h.seq = seq;
  h.logical = logical;
  h.has_physical = physical ? 1u : 0u;
  h.physical = physical ? logical + 700 : 0;
  h.began = logical - 150;
  h.bytes = bytes;
  h.loc = loc;
  h.tag = tag;
  h.flow = seq * 4 + from;
  return h;
}

auto fields(const SendHalf& h) {
  return std::tie(h.key.from, h.key.to, h.key.comm, h.key.tag, h.seq, h.logical, h.physical,
                  h.has_physical, h.began, h.bytes, h.loc, h.tag, h.flow);
}

}  // namespace

TEST_CASE("message halves decode to what was encoded, in channel order") {
  // Out of order, two channels, a gap in one channel's places (a send cancelled), a physical
  // send before the logical one and one far after, a time near the top of the range.
  std::vector<SendHalf> halves = {
      half(1, 2, 7, 1, 5'000'000, true, 8, 3),
      half(0, 2, 7, 0, 4'000'000, false, 8, 0),
      half(1, 2, 7, 0, 4'500'000, true, 8, 3),
      half(1, 2, 7, 4, 9'000'000, true, 1 << 20, 4),
      half(0, 2, 9, 0, ~std::uint64_t{0} >> 2, true, 0, 0),
  };
  halves[2].physical = halves[2].logical - 300;
  halves[3].physical = halves[3].logical + (std::uint64_t{1} << 40);
  const std::string bytes = encode_halves(halves);
  CHECK(bytes.size() < halves.size() * 24);

  std::vector<SendHalf> got;
  decode_halves(bytes, got);
  REQUIRE(got.size() == halves.size());
  const std::vector<std::size_t> order = {1, 4, 2, 0, 3};  // by (from, to, comm, tag, seq)
  for (std::size_t i = 0; i < order.size(); ++i) {
    INFO("half " << i);
    CHECK(fields(got[i]) == fields(halves[order[i]]));
  }
}

TEST_CASE("message halves: no halves are no bytes, and bytes cut short are an error") {
  CHECK(encode_halves({}).empty());
  std::vector<SendHalf> got;
  decode_halves("", got);
  CHECK(got.empty());
  const std::string bytes = encode_halves({half(0, 1, 0, 0, 123'456'789, true, 64, 0)});
  CHECK_THROWS_AS(decode_halves(bytes.substr(0, bytes.size() - 1), got),
                  perusetrace::archive::ArchiveError);
  // A first half that says it continues a channel before it.
  CHECK_THROWS_AS(decode_halves(std::string(1, '\0') + bytes.substr(1), got),
                  perusetrace::archive::ArchiveError);
}
