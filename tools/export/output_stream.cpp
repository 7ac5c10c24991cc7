#include "tools/export/output_stream.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace perusetrace::exporter {

OutputStream::OutputStream(std::string path) : path_(std::move(path)) {
  stdout_ = path_ == "-";
  file_ = stdout_ ? stdout : std::fopen(path_.c_str(), "w");
  if (file_ == nullptr) fail("cannot write");
  buffer_.reserve(kBlock + (64u << 10));
}

OutputStream::~OutputStream() {
  if (file_ == nullptr || stdout_) return;
  std::fclose(file_);
  ::unlink(path_.c_str());
}

void OutputStream::flush() {
  if (buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) fail("writing");
  written_ += buffer_.size();
  buffer_.clear();
}

void OutputStream::patch(std::uint64_t offset, std::string_view text) {
  if (offset >= written_) {
    buffer_.replace(static_cast<std::size_t>(offset - written_), text.size(), text);
    return;
  }
  // Written already: past stdio's buffer, straight into the file at the offset.
  if (stdout_ || file_ == nullptr || std::fflush(file_) != 0 ||
      ::pwrite(::fileno(file_), text.data(), text.size(), static_cast<off_t>(offset)) !=
          static_cast<ssize_t>(text.size()))
    fail(stdout_ ? "cannot go back in" : "patching");
}

void OutputStream::skip(std::uint64_t bytes) {
  flush();
  if (stdout_ || file_ == nullptr ||
      ::fseeko(file_, static_cast<off_t>(written_ + bytes), SEEK_SET) != 0)
    fail(stdout_ ? "cannot leave room in" : "seeking in");
  written_ += bytes;
}

void OutputStream::close() {
  flush();
  std::FILE* f = file_;
  file_ = nullptr;
  if (stdout_ ? std::fflush(f) != 0 : std::fclose(f) != 0) {
    if (!stdout_) ::unlink(path_.c_str());
    throw OutputError(
        fmt::format("writing {} failed: {}. Check that the directory has free "
                    "space, or write elsewhere with -o FILE.",
                    stdout_ ? "standard output" : path_, std::strerror(errno)));
  }
}

void OutputStream::fail(const char* what) {
  const std::string why = std::strerror(errno);
  const bool partial = file_ != nullptr && !stdout_;
  if (partial) {
    std::fclose(file_);
    ::unlink(path_.c_str());
  }
  file_ = nullptr;
  throw OutputError(
      fmt::format("{} {}: {}{}. Check that the directory exists, is writable and "
                  "has free space, or write elsewhere with -o FILE.",
                  what, stdout_ ? "standard output" : path_, why,
                  partial ? " (the partial file is removed)" : ""));
}

}  // namespace perusetrace::exporter
