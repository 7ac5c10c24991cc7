#include "tools/prv/chunk_writer.hpp"

#include <cerrno>
#include <cstring>

namespace perusetrace::prv {

ChunkWriter::ChunkWriter(std::FILE* out, std::size_t chunk_bytes, std::size_t chunks)
    : out_(out), chunks_(chunks, std::vector<char>(chunk_bytes)), used_(chunks, 0) {
  for (std::size_t i = 1; i < chunks; ++i) free_.push_back(i);
  thread_ = std::thread([this] { run(); });
}

ChunkWriter::~ChunkWriter() {
  finish();
}

void ChunkWriter::write(const char* data, std::size_t bytes) {
  while (bytes > 0) {
    std::vector<char>& chunk = chunks_[current_];
    const std::size_t n = std::min(bytes, chunk.size() - used_[current_]);
    std::memcpy(chunk.data() + used_[current_], data, n);
    used_[current_] += n;
    data += n;
    bytes -= n;
    if (used_[current_] == chunk.size()) hand_over();
  }
}

void ChunkWriter::hand_over() {
  std::unique_lock lock(mutex_);
  full_.push_back(current_);
  changed_.notify_all();
  changed_.wait(lock, [this] { return !free_.empty(); });
  current_ = free_.front();
  free_.pop_front();
  used_[current_] = 0;
}

void ChunkWriter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return !full_.empty() || closing_; });
    if (full_.empty()) return;
    const std::size_t i = full_.front();
    full_.pop_front();
    lock.unlock();
    // After a failure the rest is dropped: finish() reports the first error.
    bool ok = failed_ || std::fwrite(chunks_[i].data(), 1, used_[i], out_) == used_[i];
    const int error = errno;
    lock.lock();
    if (!ok && !failed_) failed_ = true, error_ = error;
    free_.push_back(i);
    changed_.notify_all();
  }
}

bool ChunkWriter::finish() {
  if (!finished_) {
    finished_ = true;
    if (used_[current_] > 0) {
      std::unique_lock lock(mutex_);
      full_.push_back(current_);
    }
    {
      std::unique_lock lock(mutex_);
      closing_ = true;
      changed_.notify_all();
    }
    thread_.join();
  }
  if (failed_) errno = error_;
  return !failed_;
}

}  // namespace perusetrace::prv
