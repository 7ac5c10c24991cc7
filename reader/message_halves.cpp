#include "reader/message_halves.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace perusetrace::archive {

namespace {

void put(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// A signed difference as an unsigned varint: small either way.
void put_delta(std::string& out, std::uint64_t value, std::uint64_t base) {
  const auto d = static_cast<std::int64_t>(value - base);
  put(out, (static_cast<std::uint64_t>(d) << 1) ^ static_cast<std::uint64_t>(d >> 63));
}

class Cursor {
 public:
  explicit Cursor(const std::string& s) : p_(s.data()), end_(s.data() + s.size()) {}
  bool done() const { return p_ == end_; }
  std::uint64_t get() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) throw ArchiveError("an analysis rank sent a message half cut short");
      const auto b = static_cast<unsigned char>(*p_++);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw ArchiveError("an analysis rank sent a message half with a number too long");
  }
  std::uint64_t get_delta(std::uint64_t base) {
    const std::uint64_t z = get();
    return base + ((z >> 1) ^ (~(z & 1) + 1));
  }

 private:
  const char* p_;
  const char* end_;
};

// Bits of each half's first varint.
constexpr std::uint64_t kNewChannel = 1, kPhysical = 2, kSameLoc = 4, kSameBytes = 8;

}  // namespace

std::string encode_halves(std::vector<SendHalf> halves) {
  std::sort(halves.begin(), halves.end(), [](const SendHalf& a, const SendHalf& b) {
    return std::tie(a.key.from, a.key.to, a.key.comm, a.key.tag, a.seq) <
           std::tie(b.key.from, b.key.to, b.key.comm, b.key.tag, b.seq);
  });
  std::string out;
  out.reserve(halves.size() * 12);
  const SendHalf* before = nullptr;
  for (const SendHalf& h : halves) {
    const bool same_channel = before != nullptr && before->key == h.key;
    std::uint64_t flags = same_channel ? 0 : kNewChannel;
    if (h.has_physical != 0) flags |= kPhysical;
    if (before != nullptr && before->loc == h.loc) flags |= kSameLoc;
    if (before != nullptr && before->bytes == h.bytes) flags |= kSameBytes;
    put(out, flags);
    if (!same_channel) {
      put(out, h.key.from), put(out, h.key.to), put(out, h.key.comm), put(out, h.key.tag);
      put(out, h.seq);
    } else {
      put(out, h.seq - before->seq - 1);  // sorted: the next message of the channel is 0
    }
    if ((flags & kSameLoc) == 0) put(out, h.loc);
    if ((flags & kSameBytes) == 0) put(out, h.bytes);
    put(out, h.tag);
    put_delta(out, h.logical, before != nullptr ? before->logical : 0);
    if (h.has_physical != 0) put_delta(out, h.physical, h.logical);
    put_delta(out, h.began, h.logical);
    put_delta(out, h.flow, before != nullptr ? before->flow : 0);
    before = &h;
  }
  return out;
}

void decode_halves(const std::string& bytes, std::vector<SendHalf>& out) {
  Cursor in(bytes);
  SendHalf before{};
  bool first = true;
  while (!in.done()) {
    SendHalf h{};
    const std::uint64_t flags = in.get();
    if ((flags & kNewChannel) != 0) {
      h.key.from = static_cast<std::uint32_t>(in.get());
      h.key.to = static_cast<std::uint32_t>(in.get());
      h.key.comm = static_cast<std::uint32_t>(in.get());
      h.key.tag = static_cast<std::uint32_t>(in.get());
      h.seq = in.get();
    } else {
      if (first) throw ArchiveError("an analysis rank sent message halves without a channel");
      h.key = before.key;
      h.seq = before.seq + 1 + in.get();
    }
    h.loc = (flags & kSameLoc) != 0 ? before.loc : static_cast<std::uint32_t>(in.get());
    h.bytes = (flags & kSameBytes) != 0 ? before.bytes : in.get();
    h.tag = static_cast<std::uint32_t>(in.get());
    h.logical = in.get_delta(first ? 0 : before.logical);
    h.has_physical = (flags & kPhysical) != 0 ? 1u : 0u;
    if (h.has_physical != 0) h.physical = in.get_delta(h.logical);
    h.began = in.get_delta(h.logical);
    h.flow = in.get_delta(first ? 0 : before.flow);
    out.push_back(h);
    before = h;
    first = false;
  }
}

}  // namespace perusetrace::archive
