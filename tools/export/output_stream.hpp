// A large text output written in big blocks: an exported trace can be gigabytes, so the formats
// append to a buffer that goes out whenever it passes a block. "-" is standard output. A failed
// write (a full disk) throws, and the partial file is removed: a truncated trace is no trace.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace perusetrace::exporter {

class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputStream {
 public:
  explicit OutputStream(std::string path);
  ~OutputStream();  // an output not closed() is removed
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  // The buffer to append to; call flush_if_full() after each event.
  std::string& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= kBlock) flush();
  }
  void write(std::string_view text) {
    buffer_.append(text);
    flush_if_full();
  }
  // Overwrites what was written at byte `offset` with `text` (room a writer left, e.g. for an id
  // known later), in the buffer or in the file. Throws OutputError.
  void patch(std::uint64_t offset, std::string_view text);
  // Leaves the next `bytes` of the file to other writers (the parts of a parallel export, which
  // they place there themselves) and goes on after them. Not for standard output.
  void skip(std::uint64_t bytes);
  void close();
  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return written_ + buffer_.size(); }

 private:
  static constexpr std::size_t kBlock = 1u << 20;
  void flush();
  [[noreturn]] void fail(const char* what);

  std::string path_;
  std::FILE* file_ = nullptr;
  bool stdout_ = false;
  std::string buffer_;
  std::uint64_t written_ = 0;
};

}  // namespace perusetrace::exporter
