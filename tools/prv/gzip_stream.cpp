#include "tools/prv/gzip_stream.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace perusetrace::prv {

namespace {

ssize_t write_gzip(void* cookie, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    // gzwrite takes an unsigned length: large writes go in pieces.
    const unsigned piece = static_cast<unsigned>(std::min<std::size_t>(size - done, INT_MAX));
    const int n = gzwrite(static_cast<gzFile>(cookie), data + done, piece);
    if (n <= 0) {
      errno = EIO;
      return done > 0 ? static_cast<ssize_t>(done) : -1;
    }
    done += static_cast<std::size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

int close_gzip(void* cookie) {
  if (gzclose(static_cast<gzFile>(cookie)) == Z_OK) return 0;
  errno = EIO;
  return -1;
}

}  // namespace

std::FILE* open_gzip(const std::string& path, int level) {
  const std::string mode = "wb" + std::to_string(level);
  gzFile gz = gzopen(path.c_str(), mode.c_str());
  if (gz == nullptr) return nullptr;
  // zlib's own buffer: large enough that the compressor works on big blocks.
  gzbuffer(gz, 1u << 20);
  cookie_io_functions_t io{};
  io.write = write_gzip;
  io.close = close_gzip;
  std::FILE* f = fopencookie(gz, "w", io);
  if (f == nullptr) gzclose(gz);
  return f;
}

}  // namespace perusetrace::prv
