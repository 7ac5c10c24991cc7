// Reads one thread's journal file back (at MPI_Finalize, and in `perusetrace recover`). A file
// left by a dying program may end in a half-written block, hold a torn record from a thread
// that was writing while a crash handler saved its buffer, or stop inside MPI calls: such
// records are dropped (a damaged block costs the rest of that block), and the regions the
// thread never left are closed at its last timestamp, so the archive stays well-formed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <memory>
#include <vector>

#include "record/global_clock.hpp"
#include "record/record.hpp"
#include "record/record_packing.hpp"

namespace perusetrace {

class RecordFile {
 public:
  struct Counts {
    std::uint64_t kept = 0;
    std::uint64_t dropped = 0;         // not a record this build writes, or out of order
    std::uint64_t closed_regions = 0;  // Leaves added at the end
    std::uint64_t torn_bytes = 0;      // at the end of the file, not readable as records
    std::uint64_t torn_records = 0;    // promised by the block the file ends in, not in it
    bool torn_in_buffer = false;       // the torn records are in the buffer file: none lost
    std::uint64_t from_buffer = 0;     // of those kept, read from the thread's buffer file
    std::uint64_t first_time = 0;      // global ns, of the first record kept
    std::uint64_t last_time = 0;       // global ns
  };

  RecordFile(std::uint16_t region_count, std::uint8_t peruse_event_count)
      : region_count_(region_count), event_count_(peruse_event_count) {}
  ~RecordFile();
  RecordFile(const RecordFile&) = delete;
  RecordFile& operator=(const RecordFile&) = delete;

  // The thread's records file; "": it left none (only a buffer file).
  bool open(const std::string& path, std::string& error);
  // The thread's buffer file (BufferHead, record/journal_format.hpp), read after the records
  // file: the records it committed that its records file does not hold. False, with `error`
  // saying why, when the file is not a buffer file; its records are then not read.
  bool add_buffer(const std::string& path, std::string& error);
  // Records hold ticks of the rank's clock; what read() returns holds the run's global ns.
  void set_clock(const GlobalClock& clock) { clock_ = clock; }
  // Records later than this (local ns) are damaged: the rank noted a clock point after its last
  // one.
  void set_time_limit(std::uint64_t ns) { time_limit_ = ns; }
  // Fills `out` with the next valid records; 0 at the end.
  std::size_t read(Record* out, std::size_t capacity);
  const Counts& counts() const { return counts_; }

 private:
  bool valid(const Record& r);
  bool next_block();
  bool next_raw(Record& r);  // from the blocks, then from the buffer; false at the end
  std::size_t read_fully(void* into, std::size_t bytes);
  int fd_ = -1;
  bool at_end_ = false;
  std::vector<std::uint8_t> block_;
  const std::uint8_t* pos_ = nullptr;
  const std::uint8_t* end_ = nullptr;
  std::uint32_t block_left_ = 0;  // records the block's header promises that are not read yet
  bool block_cut_ = false;        // the file ends inside this block
  // Records the blocks hold (read, or promised by a complete block's header): the sequence
  // number of the next record, which the buffer's slots are numbered by.
  std::uint64_t sequence_ = 0;
  std::uint64_t torn_end_ = 0;      // the sequence number after a torn block's last record
  std::vector<Record> buffer_;      // the buffer file's committed records
  std::uint64_t buffer_first_ = 0;  // the sequence number of buffer_[0]
  std::size_t buffer_pos_ = 0;
  bool in_buffer_ = false;
  // A fold of polls the buffer's head says was open when the process ended (BufferHead): its
  // Leave is written with the open regions' at the end (fold_.kind PollFold; Enter: none).
  Record fold_{};
  std::unique_ptr<packing::History> history_ = std::make_unique<packing::History>();
  std::uint16_t region_count_;
  std::uint8_t event_count_;
  static constexpr int kMaxDepth = 64;
  std::uint16_t open_regions_[kMaxDepth];
  int depth_ = 0;
  Counts counts_;
  GlobalClock clock_;
  std::uint64_t time_limit_ = ~std::uint64_t{0};
};

}  // namespace perusetrace
