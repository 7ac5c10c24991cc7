#include "record/record_packing.hpp"

#include <atomic>
#include <cstring>

namespace perusetrace::packing {

namespace {

constexpr std::uint8_t kEscape = 0x7f;
constexpr std::uint8_t kPeruseBit = 0x80;
constexpr int kFields = 8;  // mask bits: event region comm peer tag bytes request aux

// Slot of a record, or -1 when it has none (it is escaped).
int slot_of(std::uint8_t kind, std::uint8_t event, std::uint16_t region) noexcept {
  switch (static_cast<RecordKind>(kind)) {
    case RecordKind::Peruse:
      return event < kPeruseSlots ? event : -1;
    case RecordKind::Enter:
      return static_cast<int>(kPeruseSlots + region % kRegionSlots);
    case RecordKind::Leave:
      return static_cast<int>(kPeruseSlots + kRegionSlots + region % kRegionSlots);
    default:
      return known_kind(kind) ? static_cast<int>(kPeruseSlots + 2 * kRegionSlots + kind) : -1;
  }
}

// The fields as 64-bit values, signed ones sign-extended, so that every difference is small
// when the values are close.
void fields_of(const Record& r, std::uint64_t (&f)[kFields]) noexcept {
  f[0] = r.event;
  f[1] = r.region;
  f[2] = r.comm;
  f[3] = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.peer));
  f[4] = static_cast<std::uint64_t>(static_cast<std::int64_t>(r.tag));
  f[5] = r.bytes;
  f[6] = r.request;
  f[7] = r.aux;
}

std::uint64_t zigzag(std::uint64_t difference) noexcept {
  return (difference << 1) ^
         static_cast<std::uint64_t>(static_cast<std::int64_t>(difference) >> 63);
}
std::uint64_t unzigzag(std::uint64_t v) noexcept {
  return (v >> 1) ^ (~(v & 1) + 1);
}

std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  if (v < 0x80) [[likely]] {  // most differences, and most times between two records
    *p = static_cast<std::uint8_t>(v);
    return p + 1;
  }
  if (v < 0x4000) {
    p[0] = static_cast<std::uint8_t>(v | 0x80);
    p[1] = static_cast<std::uint8_t>(v >> 7);
    return p + 2;
  }
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

// Reads a varint into `v`; false when it does not, with `failure` saying why: the bytes end
// inside it (End) or it runs past ten bytes, which no writer packs (Malformed).
bool get_varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v,
                Unpacked& failure) noexcept {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) {
      failure = Unpacked::End;
      return false;
    }
    const std::uint8_t byte = *p++;
    v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  failure = Unpacked::Malformed;
  return false;
}

std::uint8_t* pack_record(const Record& r, std::uint8_t* p, History& h) noexcept {
  const int slot = slot_of(static_cast<std::uint8_t>(r.kind), r.event, r.region);
  if (slot < 0) {
    *p++ = kEscape;
    std::memcpy(p, &r, sizeof r);
    h.time = r.time;
    return p + sizeof r;
  }
  if (r.kind == RecordKind::Peruse) {
    *p++ = static_cast<std::uint8_t>(kPeruseBit | r.event);
  } else {
    *p++ = static_cast<std::uint8_t>(r.kind);
    if (r.kind == RecordKind::Enter || r.kind == RecordKind::Leave) p = put_varint(p, r.region);
  }
  Record& last = h.last[slot];
  std::uint8_t* mask = p++;
  p = put_varint(p, zigzag(r.time - h.time));
  // Field by field rather than through fields_of(): the drain packs every record, and this
  // keeps both records in registers.
  unsigned bits = 0;
  const auto field = [&](unsigned bit, std::uint64_t now, std::uint64_t before) {
    if (now == before) return;
    bits |= bit;
    p = put_varint(p, zigzag(now - before));
  };
  const auto wide = [](std::int32_t v) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  };
  field(1u << 0, r.event, last.event);
  field(1u << 1, r.region, last.region);
  field(1u << 2, r.comm, last.comm);
  field(1u << 3, wide(r.peer), wide(last.peer));
  field(1u << 4, wide(r.tag), wide(last.tag));
  field(1u << 5, r.bytes, last.bytes);
  field(1u << 6, r.request, last.request);
  field(1u << 7, r.aux, last.aux);
  *mask = static_cast<std::uint8_t>(bits);
  last = r;
  h.time = r.time;
  return p;
}

}  // namespace

void History::reset() noexcept {
  std::memset(static_cast<void*>(last), 0, sizeof last);
  time = 0;
}

void block_start(History& history, BlockFill& fill) noexcept {
  history.reset();
  fill.used = sizeof(BlockHeader);
  fill.records = 0;
}

bool block_add(const Record*& cursor, const Record* end, std::uint8_t* out, std::size_t capacity,
               History& history, BlockFill& fill) noexcept {
  // A worst-case record is an escaped one; stop while one more surely fits.
  while (cursor != end) {
    if (capacity - fill.used < kMaxPackedRecord) return false;
    const std::uint8_t* p = pack_record(*cursor, out + fill.used, history);
    // The record's bytes first, then what says they are there.
    std::atomic_signal_fence(std::memory_order_release);
    fill.used = static_cast<std::size_t>(p - out);
    ++fill.records;
    ++cursor;
    std::atomic_signal_fence(std::memory_order_release);
  }
  return true;
}

std::size_t block_finish(std::uint8_t* out, const BlockFill& fill) noexcept {
  const BlockHeader header{kBlockMagic, static_cast<std::uint32_t>(fill.used - sizeof header),
                           fill.records, 0};
  std::memcpy(out, &header, sizeof header);
  return fill.used;
}

Unpacked unpack_record(const std::uint8_t*& at, const std::uint8_t* end, History& h,
                       Record& out) noexcept {
  const std::uint8_t* p = at;
  if (p == end) return Unpacked::End;
  const std::uint8_t head = *p++;
  if (head == kEscape) {
    if (static_cast<std::size_t>(end - p) < sizeof out) return Unpacked::End;
    std::memcpy(&out, p, sizeof out);
    h.time = out.time;
    at = p + sizeof out;
    return Unpacked::Record;
  }
  std::uint8_t kind, event = 0;
  std::uint16_t region = 0;
  std::uint64_t v;
  Unpacked failure;
  if (head & kPeruseBit) {
    kind = static_cast<std::uint8_t>(RecordKind::Peruse);
    event = head & static_cast<std::uint8_t>(~kPeruseBit);
  } else {
    kind = head;
  }
  const bool by_region = kind == static_cast<std::uint8_t>(RecordKind::Enter) ||
                         kind == static_cast<std::uint8_t>(RecordKind::Leave);
  if (by_region) {
    if (!get_varint(p, end, v, failure)) return failure;
    if (v > 0xffff) return Unpacked::Malformed;
    region = static_cast<std::uint16_t>(v);
  }
  const int slot = slot_of(kind, event, region);
  if (slot < 0) return Unpacked::Malformed;
  if (p == end) return Unpacked::End;
  const unsigned bits = *p++;
  if (!get_varint(p, end, v, failure)) return failure;
  Record r = h.last[slot];
  r.time = h.time + unzigzag(v);
  std::uint64_t f[kFields];
  fields_of(r, f);
  for (int i = 0; i < kFields; ++i) {
    if ((bits & (1u << i)) == 0) continue;
    if (!get_varint(p, end, v, failure)) return failure;
    f[i] += unzigzag(v);
  }
  r.kind = static_cast<RecordKind>(kind);
  r.event = static_cast<std::uint8_t>(f[0]);
  r.region = static_cast<std::uint16_t>(f[1]);
  r.comm = static_cast<std::uint32_t>(f[2]);
  r.peer = static_cast<std::int32_t>(f[3]);
  r.tag = static_cast<std::int32_t>(f[4]);
  r.bytes = f[5];
  r.request = f[6];
  r.aux = f[7];
  // The slot's key is byte 0's; a mask bit that changes it is damage.
  if ((kind == static_cast<std::uint8_t>(RecordKind::Peruse) && r.event != event) ||
      (by_region && r.region != region))
    return Unpacked::Malformed;
  h.last[slot] = r;
  h.time = r.time;
  out = r;
  at = p;
  return Unpacked::Record;
}

}  // namespace perusetrace::packing
