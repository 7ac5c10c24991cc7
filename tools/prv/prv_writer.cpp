// Record formats (Paraver trace format as Extrae's merger writes it and paraver-kernel reads
// it; the sources are cited in paraver_objects.cpp):
//   1:cpu:appl:task:thread:begin:end:state
//   2:cpu:appl:task:thread:time:type:value[:type:value...]
//   3:cpu:appl:task:thread:logical_send:physical_send:cpu:appl:task:thread:logical_recv:
//     physical_recv:size:tag
// Every record type has its sort time in the sixth field.
#include "tools/prv/prv_writer.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <queue>
#include <utility>

#include "tools/prv/chunk_writer.hpp"
#include "tools/prv/gzip_stream.hpp"
#include "tools/prv/prv_archive.hpp"

namespace perusetrace::prv {

namespace {

constexpr std::size_t kFanIn = 64;
constexpr std::size_t kReadBuffer = 64u << 10;

std::uint64_t time_of(const char* line) {
  int colons = 0;
  const char* p = line;
  while (*p != '\0' && colons < 5) colons += *p++ == ':';
  std::uint64_t t = 0;
  while (*p >= '0' && *p <= '9') t = t * 10 + static_cast<std::uint64_t>(*p++ - '0');
  return t;
}

[[noreturn]] void io_failure(const std::string& what, const std::string& path) {
  throw ConvertError(
      fmt::format("{} {} failed: {}. Check that the directory exists, is writable and "
                  "has free space, or write elsewhere with -o PREFIX.",
                  what, path, std::strerror(errno)));
}

// One record's text, built in place: fmt's integer formatting straight into a fixed array,
// appended to the buffer once (formatting through a back_inserter costs a push_back a digit).
class Line {
 public:
  static constexpr std::size_t kMaxNumbers = 48;
  Line& num(std::uint64_t v) {
    const fmt::format_int f(v);
    std::memcpy(p_, f.data(), f.size());
    p_ += f.size();
    return *this;
  }
  Line& ch(char c) {
    *p_++ = c;
    return *this;
  }
  Line& field(std::uint64_t v) { return ch(':').num(v); }
  void append_to(std::string& out) const {
    out.append(text_, static_cast<std::size_t>(p_ - text_));
  }

 private:
  char text_[kMaxNumbers * 21 + 16];
  char* p_ = text_;
};

struct RunReader {
  std::FILE* file = nullptr;
  char* line = nullptr;
  std::size_t capacity = 0;
  std::uint64_t time = 0;
  std::vector<char> vbuf;

  bool next() {
    if (::getline(&line, &capacity, file) <= 0) return false;
    time = time_of(line);
    return true;
  }
  ~RunReader() {
    std::free(line);
    if (file) std::fclose(file);
  }
};

}  // namespace

PrvWriter::PrvWriter(std::string path, std::size_t run_bytes, int gzip_level)
    : path_(std::move(path)), run_bytes_(run_bytes), gzip_level_(gzip_level) {
  std::string pattern = path_ + ".sort-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    io_failure("creating a temporary directory beside", path_);
  tmpdir_ = pattern;
  buffer_.reserve(run_bytes_ + 4096);
}

PrvWriter::~PrvWriter() {
  writer_.reset();  // its thread writes to out_
  if (out_ != nullptr) std::fclose(out_);
  // A conversion that failed after the output was begun leaves no half .prv behind.
  if (created_ && !complete_) ::unlink(path_.c_str());
  for (const std::string& r : runs_) ::unlink(r.c_str());
  if (!tmpdir_.empty()) ::rmdir(tmpdir_.c_str());
}

void PrvWriter::add(std::uint64_t time, std::size_t start) {
  entries_.push_back({time, static_cast<std::uint32_t>(start),
                      static_cast<std::uint32_t>(buffer_.size() - start)});
  ++records_;
  if (buffer_.size() < run_bytes_) return;
  // Streaming stops for good once a buffer could not be halved (a state that stays open, a
  // send that never matches): what follows goes through runs, merged after what was written.
  if (settled_ && runs_.empty() && release(settled_())) return;
  settled_ = nullptr;
  spill();
}

void PrvWriter::sort_entries() {
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : a.offset < b.offset;
  });
}

std::FILE* PrvWriter::open_output() {
  std::FILE* out = gzip_level_ > 0 ? open_gzip(path_, gzip_level_) : std::fopen(path_.c_str(), "w");
  if (out == nullptr) io_failure("creating", path_);
  created_ = true;
  out_buf_.resize(1u << 20);
  std::setvbuf(out, out_buf_.data(), _IOFBF, out_buf_.size());
  return out;
}

void PrvWriter::stream(const std::string& header, std::uint64_t end,
                       std::function<std::uint64_t()> settled) {
  out_ = open_output();
  writer_ = std::make_unique<ChunkWriter>(out_);
  writer_->write(header.data(), header.size());
  streamed_end_ = end;
  settled_ = std::move(settled);
}

bool PrvWriter::release(std::uint64_t settled) {
  sort_entries();
  const auto first_kept =
      std::lower_bound(entries_.begin(), entries_.end(), settled,
                       [](const Entry& e, std::uint64_t t) { return e.time < t; });
  for (auto e = entries_.begin(); e != first_kept; ++e)
    writer_->write(buffer_.data() + e->offset, e->length);
  streamed_ += static_cast<std::uint64_t>(first_kept - entries_.begin());
  entries_.erase(entries_.begin(), first_kept);
  // The records kept move to the front in the order they came (ties sort by it).
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.offset < b.offset; });
  std::size_t to = 0;
  for (Entry& e : entries_) {
    std::memmove(buffer_.data() + to, buffer_.data() + e.offset, e.length);
    e.offset = static_cast<std::uint32_t>(to);
    to += e.length;
  }
  buffer_.resize(to);
  return to < run_bytes_ / 2;
}

void PrvWriter::state(const PrvObject& o, std::uint64_t begin, std::uint64_t end,
                      std::uint32_t state) {
  const std::size_t start = buffer_.size();
  Line line;
  line.num(1).field(o.cpu).field(1).field(o.task).field(o.thread).field(begin).field(end);
  line.field(state).ch('\n').append_to(buffer_);
  latest_ = std::max(latest_, end);
  add(begin, start);
}

void PrvWriter::event(const PrvObject& o, std::uint64_t time,
                      const std::pair<std::uint64_t, std::uint64_t>* pairs, std::size_t count) {
  if (count == 0) return;
  const std::size_t start = buffer_.size();
  // A line of at most Line::kMaxNumbers numbers at a time: more pairs continue in the buffer.
  Line line;
  line.num(2).field(o.cpu).field(1).field(o.task).field(o.thread).field(time);
  std::size_t numbers = 6;
  for (std::size_t i = 0; i < count; ++i) {
    if (numbers + 2 > Line::kMaxNumbers) {
      line.append_to(buffer_);
      line = Line();
      numbers = 0;
    }
    line.field(pairs[i].first).field(pairs[i].second);
    numbers += 2;
  }
  line.ch('\n').append_to(buffer_);
  latest_ = std::max(latest_, time);
  add(time, start);
}

void PrvWriter::comm(const PrvObject& from, std::uint64_t logical_send, std::uint64_t physical_send,
                     const PrvObject& to, std::uint64_t logical_recv, std::uint64_t physical_recv,
                     std::uint64_t bytes, std::uint64_t tag) {
  const std::size_t start = buffer_.size();
  Line line;
  line.num(3).field(from.cpu).field(1).field(from.task).field(from.thread).field(logical_send);
  line.field(physical_send).field(to.cpu).field(1).field(to.task).field(to.thread);
  line.field(logical_recv).field(physical_recv).field(bytes).field(tag).ch('\n');
  line.append_to(buffer_);
  latest_ = std::max({latest_, logical_send, physical_send, logical_recv, physical_recv});
  add(logical_send, start);
}

std::string PrvWriter::new_run_path() {
  return fmt::format("{}/run{:06}", tmpdir_, run_counter_++);
}

void PrvWriter::spill() {
  if (entries_.empty()) return;
  sort_entries();
  const std::string run = new_run_path();
  std::FILE* f = std::fopen(run.c_str(), "w");
  if (f == nullptr) io_failure("creating the temporary file", run);
  runs_.push_back(run);
  std::vector<char> vbuf(1u << 20);
  std::setvbuf(f, vbuf.data(), _IOFBF, vbuf.size());
  for (const Entry& e : entries_) std::fwrite(buffer_.data() + e.offset, 1, e.length, f);
  if (std::ferror(f) != 0 || std::fclose(f) != 0) io_failure("writing the temporary file", run);
  entries_.clear();
  buffer_.clear();
}

// Merges the sorted inputs into `out` (or, when out is null, into a new run whose path it
// returns). Equal times keep the inputs' order, so records stay in the order they were made.
std::string PrvWriter::merge(const std::vector<std::string>& inputs, std::FILE* out,
                             const std::function<void(std::uint64_t)>& written) {
  std::string target;
  std::vector<char> out_buf;
  if (out == nullptr) {
    target = new_run_path();
    out = std::fopen(target.c_str(), "w");
    if (out == nullptr) io_failure("creating the temporary file", target);
    out_buf.resize(1u << 20);
    std::setvbuf(out, out_buf.data(), _IOFBF, out_buf.size());
  }
  std::vector<RunReader> readers(inputs.size());
  using Head = std::pair<std::uint64_t, std::size_t>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heap;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    readers[i].file = std::fopen(inputs[i].c_str(), "r");
    if (readers[i].file == nullptr) io_failure("reading the temporary file", inputs[i]);
    readers[i].vbuf.resize(kReadBuffer);
    std::setvbuf(readers[i].file, readers[i].vbuf.data(), _IOFBF, kReadBuffer);
    if (readers[i].next()) heap.emplace(readers[i].time, i);
  }
  std::uint64_t count = 0;
  while (!heap.empty()) {
    const std::size_t i = heap.top().second;
    heap.pop();
    std::fputs(readers[i].line, out);
    if ((++count & 0xffff) == 0 && written) written(count);
    if (readers[i].next()) heap.emplace(readers[i].time, i);
  }
  if (written) written(count);
  readers.clear();
  for (const std::string& in : inputs) ::unlink(in.c_str());
  if (!target.empty()) {
    if (std::ferror(out) != 0 || std::fclose(out) != 0)
      io_failure("writing the temporary file", target);
  }
  return target;
}

void PrvWriter::add_sorted_run(const std::string& path) {
  runs_.push_back(path);
}

void PrvWriter::finish(const std::function<std::string(std::uint64_t)>& header,
                       const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  if (out_ != nullptr && latest_ > streamed_end_)
    throw StreamOverrun(fmt::format(
        "a record at {} ns lies after the trace's end ({} ns) written in the header; the "
        "archive's clock properties do not cover its events",
        latest_, streamed_end_));
  // Nothing spilled: the last buffer is sorted and written as it is.
  if (out_ != nullptr && runs_.empty()) {
    release(~std::uint64_t{0});
    if (progress) progress(records_, records_);
    buffer_.clear();
    entries_.clear();
    const bool written = writer_->finish();
    writer_.reset();
    std::FILE* out = std::exchange(out_, nullptr);
    if (!written || std::ferror(out) != 0 || std::fclose(out) != 0) io_failure("writing", path_);
    complete_ = true;
    return;
  }
  // Streamed up to a point, then spilled: what was streamed is written before the merge.
  if (writer_ != nullptr) {
    if (!writer_->finish()) io_failure("writing", path_);
    writer_.reset();
  }
  // Everything else goes through runs, so the last buffer is sorted like the others.
  spill();
  buffer_.clear();
  buffer_.shrink_to_fit();
  entries_.shrink_to_fit();
  // Too many runs to open at once: merge them in groups first.
  while (runs_.size() > kFanIn) {
    std::vector<std::string> next;
    for (std::size_t i = 0; i < runs_.size(); i += kFanIn) {
      std::vector<std::string> group(
          runs_.begin() + static_cast<std::ptrdiff_t>(i),
          runs_.begin() + static_cast<std::ptrdiff_t>(std::min(runs_.size(), i + kFanIn)));
      next.push_back(group.size() == 1 ? group[0] : merge(group, nullptr, nullptr));
    }
    runs_ = std::move(next);
  }
  if (out_ == nullptr) {
    out_ = open_output();
    const std::string head = header(latest_);
    std::fwrite(head.data(), 1, head.size(), out_);
  }
  const std::uint64_t total = records_, before = streamed_;
  merge(runs_, out_, [&](std::uint64_t done) {
    if (progress) progress(before + done, total);
  });
  runs_.clear();
  std::FILE* out = std::exchange(out_, nullptr);
  if (std::ferror(out) != 0 || std::fclose(out) != 0) io_failure("writing", path_);
  complete_ = true;
}

}  // namespace perusetrace::prv
