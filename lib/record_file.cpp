#include "record_file.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace perusetrace {

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RecordFile::open(const std::string& path, std::string& error) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd_, &st) == 0)
    counts_.torn_bytes = static_cast<std::uint64_t>(st.st_size) % sizeof(Record);
  return true;
}

namespace {
// An Enter or Leave carries no payload (event 0) or one of the MPI events (lib/record.hpp).
bool payload_valid(const Record& r) {
  const auto kind = static_cast<RecordKind>(r.event);
  return r.event == 0 || (kind > RecordKind::Peruse && kind <= RecordKind::IoOperationComplete);
}
}  // namespace

bool RecordFile::valid(const Record& r) {
  switch (r.kind) {
    case RecordKind::Enter:
      if (!payload_valid(r)) return false;
      if (r.region >= region_count_ || depth_ == kMaxDepth) return false;
      open_regions_[depth_++] = r.region;
      return true;
    case RecordKind::Leave:
      if (!payload_valid(r)) return false;
      if (depth_ == 0 || open_regions_[depth_ - 1] != r.region) return false;
      --depth_;
      return true;
    case RecordKind::Peruse:
      return r.event < event_count_;
    default:
      return r.kind <= RecordKind::IoOperationComplete;
  }
}

std::size_t RecordFile::read(Record* out, std::size_t capacity) {
  std::size_t n = 0;
  while (n < capacity && !at_end_) {
    const std::size_t want = (capacity - n) * sizeof(Record);
    std::size_t got = 0;
    char* into = reinterpret_cast<char*>(out + n);
    while (got < want) {
      const ssize_t r = ::read(fd_, into + got, want - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        at_end_ = true;
        break;
      }
      got += static_cast<std::size_t>(r);
    }
    // Keep the valid ones, in place.
    const std::size_t base = n, whole = got / sizeof(Record);
    for (std::size_t i = 0; i < whole; ++i) {
      Record r = out[base + i];
      // Order is checked on the ns the writer gets: a damaged time far from the clock's points
      // can convert to an earlier ns than a smaller tick count does, and OTF2 refuses an event
      // earlier than the one before it (and with it the rest of the archive). A time past the
      // limit is dropped alone, so that it does not put every later record out of order.
      const std::uint64_t ns = scale_.to_ns(r.time);
      if (ns >= counts_.last_time && ns <= time_limit_ && valid(r)) {
        r.time = ns;
        if (counts_.kept == 0) counts_.first_time = ns;
        counts_.last_time = ns;
        out[n++] = r;
        ++counts_.kept;
      } else {
        ++counts_.dropped;
      }
    }
  }
  // At the end: leave every region still open, innermost first.
  while (at_end_ && n < capacity && depth_ > 0) {
    out[n++] =
        Record{counts_.last_time, RecordKind::Leave, 0, open_regions_[--depth_], 0, 0, 0, 0, 0, 0};
    ++counts_.closed_regions;
  }
  return n;
}

}  // namespace perusetrace
