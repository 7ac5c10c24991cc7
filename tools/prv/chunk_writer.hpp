// Writes to a FILE* on a thread of its own, a few MiB at a time, so that the kernel's copy into
// the page cache (or zlib's compression, for --gzip) overlaps the formatting of the records that
// follow instead of stopping it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace perusetrace::prv {

class ChunkWriter {
 public:
  explicit ChunkWriter(std::FILE* out, std::size_t chunk_bytes = 1u << 20, std::size_t chunks = 4);
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Copies `bytes` into the current chunk, handing full ones to the writing thread.
  void write(const char* data, std::size_t bytes);
  // Waits until everything is written; false (errno set) if a write failed. The FILE* is the
  // caller's again afterwards.
  bool finish();

 private:
  void hand_over();  // the current chunk, to the writing thread
  void run();

  std::FILE* out_;
  std::vector<std::vector<char>> chunks_;
  std::vector<std::size_t> used_;  // bytes in each chunk
  std::deque<std::size_t> full_, free_;
  std::size_t current_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool closing_ = false, failed_ = false, finished_ = false;
  int error_ = 0;
  std::thread thread_;
};

}  // namespace perusetrace::prv
