// How a thread's records are packed into its journal file. Writing the 48-byte records as they
// sit in memory made the drain, not the hot path, the dominant cost of tracing on a virtual disk
// (docs/performance.md): the page cache takes them at disk speed. They are packed first, each
// record as the fields that changed since the last record of its kind: by the drain, or ahead of it
// while the thread waits (pack_ahead, thread_buffer.hpp).
//
// File: blocks, each a BlockHeader and `bytes` of packed records. The packing state starts
// afresh in every block, so a damaged block costs only its own records. A record is:
//   byte 0    0x80 | event       a Peruse event (event < kPeruseSlots)
//             kind               any other kind; Enter and Leave follow it with their region
//                                (varint)
//             kEscape            the 48 raw bytes follow (anything the slots cannot hold)
//   mask      one bit per field (event, region, comm, peer, tag, bytes, request, aux: bit 0 to
//             7) that differs from the record the same slot held last
//   time      zigzag varint: ticks since the previous record of the block
//   fields    per set mask bit, in bit order: zigzag varint of (value - slot's last value)
// The slot of a record is its Peruse event, its Enter/Leave region (modulo a table size), or its
// kind: whatever byte 0 says in full, so the reader finds the same slot before the fields.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/record.hpp"

namespace perusetrace::packing {

inline constexpr std::uint32_t kBlockMagic = 0x31425450;  // "PTB1"
struct BlockHeader {
  std::uint32_t magic;
  std::uint32_t bytes;    // packed records after the header
  std::uint32_t records;  // how many
  std::uint32_t reserved;
};
static_assert(sizeof(BlockHeader) == 16);

inline constexpr std::size_t kMaxPackedRecord = 1 + sizeof(Record);  // an escaped record
// A reader takes a larger block for damage: writers use blocks of at most this.
inline constexpr std::size_t kMaxBlockBytes = std::size_t{1} << 20;

inline constexpr std::size_t kPeruseSlots = 32, kRegionSlots = 64;
inline constexpr std::size_t kSlots = kPeruseSlots + 2 * kRegionSlots + kRecordKindCount;

// The last record of every slot and of the block. Lives with its thread's buffer (or its
// reader), not on a stack a signal handler may be short of.
struct History {
  Record last[kSlots];
  std::uint64_t time;
  void reset() noexcept;
};

// A block being filled: its bytes so far (header included) and its records.
struct BlockFill {
  std::size_t used;
  std::uint32_t records;
};

// Starts a block: the packing state afresh, room for the header.
void block_start(History& history, BlockFill& fill) noexcept;
// Packs records from `cursor` up to `end` into the block at `out` while one more surely fits in
// `capacity` bytes (at least sizeof(BlockHeader) + kMaxPackedRecord), advancing `cursor` and
// `fill` record by record: a signal handler on this thread that interrupts it finds both
// describing the same records. Returns whether it packed all of them (false: the block is full).
// Async-signal-safe.
bool block_add(const Record*& cursor, const Record* end, std::uint8_t* out, std::size_t capacity,
               History& history, BlockFill& fill) noexcept;
// Writes the block's header; returns the block's size.
std::size_t block_finish(std::uint8_t* out, const BlockFill& fill) noexcept;

enum class Unpacked { Record, End, Malformed };
// Reads one record at `p` (not past `end`) into `out` and moves `p` past it. End: `p` is at
// `end`, or the bytes stop inside a record (a torn write); `p` is unchanged then.
Unpacked unpack_record(const std::uint8_t*& p, const std::uint8_t* end, History& history,
                       Record& out) noexcept;

}  // namespace perusetrace::packing
