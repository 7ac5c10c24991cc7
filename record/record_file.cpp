#include "record/record_file.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "record/journal_format.hpp"

namespace perusetrace {

RecordFile::~RecordFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool RecordFile::open(const std::string& path, std::string& error) {
  if (path.empty()) {
    at_end_ = true;
    return true;
  }
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

bool RecordFile::add_buffer(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  journal::BufferHead head{};
  const bool whole = ::pread(fd, &head, sizeof head, 0) == static_cast<ssize_t>(sizeof head);
  if (!whole || head.magic != journal::kBufferMagic || head.record_bytes != sizeof(Record) ||
      (head.next != 0 && (head.begin == 0 || head.end < head.begin || head.next < head.begin ||
                          head.next > head.end || (head.end - head.begin) % sizeof(Record) != 0 ||
                          (head.next - head.begin) % sizeof(Record) != 0))) {
    ::close(fd);
    error = path +
            " is not a perusetrace buffer file, or its head is damaged: its records are "
            "not read";
    return false;
  }
  // next 0: closed, every record of the thread is in its records file.
  const std::uint64_t committed = head.next == 0 ? 0 : (head.next - head.begin) / sizeof(Record);
  buffer_.resize(committed);
  const ssize_t got = committed == 0 ? 0
                                     : ::pread(fd, buffer_.data(), committed * sizeof(Record),
                                               static_cast<off_t>(journal::kBufferRecordsAt));
  ::close(fd);
  buffer_.resize(got > 0 ? static_cast<std::size_t>(got) / sizeof(Record) : 0);
  buffer_first_ = head.drained;
  if (head.fold_calls != 0)
    fold_ = Record{head.fold_last,
                   RecordKind::PollFold,
                   0,
                   static_cast<std::uint16_t>(head.fold_region),
                   0,
                   0,
                   0,
                   head.fold_calls,
                   0,
                   head.fold_inside};
  return true;
}

namespace {
// An Enter or Leave carries no payload (event 0) or one of the MPI events (record/record.hpp).
bool payload_valid(const Record& r) {
  const auto kind = static_cast<RecordKind>(r.event);
  return r.event == 0 || (kind > RecordKind::Peruse && known_kind(r.event));
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
    case RecordKind::Peruse: {
      if (r.event >= event_count_) return false;
      CarriedPeruse c;
      for (unsigned slot = 0; carried_peruse(r, slot, c); ++slot)
        if (c.event >= event_count_) return false;
      return true;
    }
    default:
      return known_kind(static_cast<std::uint8_t>(r.kind));
  }
}

std::size_t RecordFile::read_fully(void* into, std::size_t bytes) {
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t r = ::read(fd_, static_cast<char*>(into) + got, bytes - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

bool RecordFile::next_block() {
  counts_.dropped += block_left_;  // promised by a damaged block's header, never read
  sequence_ += block_left_;
  block_left_ = 0;
  if (at_end_) return false;
  packing::BlockHeader header;
  const std::size_t got = read_fully(&header, sizeof header);
  if (got < sizeof header) {
    counts_.torn_bytes += got;
    at_end_ = true;
    return false;
  }
  if (header.magic != packing::kBlockMagic ||
      header.bytes > packing::kMaxBlockBytes - sizeof header) {
    // No way to find where the next block starts: the rest of the file is lost.
    const off_t here = ::lseek(fd_, 0, SEEK_CUR), size = ::lseek(fd_, 0, SEEK_END);
    counts_.torn_bytes +=
        sizeof header + (size > here ? static_cast<std::uint64_t>(size - here) : 0);
    at_end_ = true;
    return false;
  }
  if (block_.size() < header.bytes) block_.resize(header.bytes);
  const std::size_t body = read_fully(block_.data(), header.bytes);
  block_cut_ = body < header.bytes;
  at_end_ = block_cut_;
  pos_ = block_.data();
  end_ = pos_ + body;
  block_left_ = header.records;
  history_->reset();
  return true;
}

bool RecordFile::next_raw(Record& r) {
  while (!in_buffer_) {
    if (pos_ == end_ && block_cut_ && block_left_ > 0) {
      // The file ends inside this block between two records: the rest was never written (not
      // dropped: the buffer file may hold it).
      torn_end_ = sequence_ + block_left_;
      counts_.torn_records = block_left_;
      block_left_ = 0;
    }
    if (pos_ == end_ && !next_block()) {
      in_buffer_ = true;
      // The slots the records file holds already (the process died while writing them out)
      // are skipped; with none of them there, the buffer starts where the file stops.
      buffer_pos_ = sequence_ > buffer_first_ ? static_cast<std::size_t>(std::min<std::uint64_t>(
                                                    sequence_ - buffer_first_, buffer_.size()))
                                              : 0;
      counts_.torn_in_buffer = (counts_.torn_bytes > 0 || counts_.torn_records > 0) &&
                               buffer_first_ <= sequence_ &&
                               buffer_first_ + buffer_.size() >= torn_end_;
      break;
    }
    const packing::Unpacked got = packing::unpack_record(pos_, end_, *history_, r);
    if (got == packing::Unpacked::Record) {
      if (block_left_ > 0) --block_left_;
      ++sequence_;
      return true;
    }
    if (got == packing::Unpacked::End && block_cut_) {
      counts_.torn_bytes += static_cast<std::uint64_t>(end_ - pos_);
      torn_end_ = sequence_ + block_left_;
      counts_.torn_records = block_left_;
      block_left_ = 0;  // the rest was never written
    } else if (block_left_ == 0) {
      ++counts_.dropped;  // at least the record that is not readable
    }
    pos_ = end_;
  }
  if (buffer_pos_ == buffer_.size()) return false;
  r = buffer_[buffer_pos_++];
  return true;
}

std::size_t RecordFile::read(Record* out, std::size_t capacity) {
  std::size_t n = 0;
  Record r;
  bool more = true;
  while (n < capacity && (more = next_raw(r))) {
    // Order is checked on the ns the writer gets: a damaged time far from the clock's points
    // can convert to an earlier ns than a smaller tick count does, and OTF2 refuses an event
    // earlier than the one before it (and with it the rest of the archive). A time past the
    // limit is dropped alone, so that it does not put every later record out of order.
    const std::uint64_t local = clock_.scale.to_ns(r.time);
    const std::uint64_t ns = clock_.offsets.to_global(local);
    // The time inside folded polls, in ns of the same scale as the times around it.
    if (r.kind == RecordKind::PollFold) r.aux = local - clock_.scale.to_ns(r.time - r.aux);
    if (ns >= counts_.last_time && local <= time_limit_ && valid(r)) {
      r.time = ns;
      if (counts_.kept == 0) counts_.first_time = ns;
      counts_.last_time = ns;
      out[n++] = r;
      ++counts_.kept;
      if (in_buffer_) ++counts_.from_buffer;
    } else {
      ++counts_.dropped;
    }
  }
  // At the end: leave every region still open, innermost first; polls being folded when the
  // process died at their last exit, with their count.
  if (!more && fold_.kind == RecordKind::PollFold && depth_ > 0 &&
      open_regions_[depth_ - 1] == fold_.region && n + 2 <= capacity) {
    const std::uint64_t local = clock_.scale.to_ns(fold_.time);
    const std::uint64_t ns = clock_.offsets.to_global(local);
    const std::uint64_t at =
        ns >= counts_.last_time && local <= time_limit_ ? ns : counts_.last_time;
    Record fold = fold_;
    fold.time = at;
    fold.aux = local - clock_.scale.to_ns(fold_.time - fold_.aux);
    if (fold.bytes > 1) out[n++] = fold;
    out[n++] = Record{at, RecordKind::Leave, 0, open_regions_[--depth_], 0, 0, 0, 0, 0, 0};
    ++counts_.closed_regions;
    counts_.last_time = at;
    fold_.kind = RecordKind::Enter;
  }
  while (!more && n < capacity && depth_ > 0) {
    out[n++] =
        Record{counts_.last_time, RecordKind::Leave, 0, open_regions_[--depth_], 0, 0, 0, 0, 0, 0};
    ++counts_.closed_regions;
  }
  return n;
}

}  // namespace perusetrace
