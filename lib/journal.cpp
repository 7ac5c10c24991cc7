#include <algorithm>
#include "lib/journal.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "lib/regions.hpp"
#include "record/journal_format.hpp"
#include "record/tick_clock.hpp"

namespace perusetrace::journal {

namespace {

std::string g_trace_dir;
std::string g_journal_dir;
int g_rank = 0;
int g_defs_fd = -1;
std::mutex g_defs_mutex;  // definitions are appended by whichever thread creates a communicator
std::atomic<bool> g_failed{false};
std::atomic<std::uint64_t> g_records_bytes{0};  // appended to the threads' records files

bool write_all(int fd, const void* data, std::size_t bytes) noexcept {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

void say_failure(const std::string& what) {
  if (g_failed.exchange(true)) return;
  std::fprintf(stderr, "perusetrace rank %d: %s\n", g_rank, what.c_str());
}

void append_line(std::string line) {
  for (char& ch : line)
    if (ch == '\n') ch = ' ';  // one fact per line, whatever a name holds
  line += '\n';
  std::lock_guard lock(g_defs_mutex);
  if (g_defs_fd >= 0 && !write_all(g_defs_fd, line.data(), line.size()))
    say_failure("writing " + journal::definitions_path(g_trace_dir, g_rank) +
                " failed: " + std::strerror(errno) +
                ". Tracing stops here and the program goes on; free space there or set "
                "MPITRACE_OUTPUT elsewhere.");
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s = std::to_string(ranks.size());
  for (int r : ranks) s += ' ' + std::to_string(r);
  return s;
}

// Decimal digits without the C library, for the signal handler.
char* put_unsigned(char* p, unsigned long long u) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

char* put_number(char* p, long v) {
  char digits[24];
  int n = 0;
  const bool negative = v < 0;
  unsigned long u = negative ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) *p++ = '-';
  while (n > 0) *p++ = digits[--n];
  return p;
}

}  // namespace

bool create_directories(const std::string& trace_dir, std::string& error) {
  for (const std::string& dir : {trace_dir, journal::directory(trace_dir)}) {
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
      error = "cannot create " + dir + ": " + std::strerror(errno) +
              ". Set MPITRACE_OUTPUT to a directory path in a writable place.";
      return false;
    }
  }
  return true;
}

bool open(const std::string& trace_dir, const Header& h, std::string& error) {
  g_trace_dir = trace_dir;
  g_journal_dir = journal::directory(trace_dir);
  g_rank = h.rank;
  const std::string path = journal::definitions_path(trace_dir, h.rank);
  g_defs_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
  if (g_defs_fd < 0) {
    error = "cannot create " + path + ": " + std::strerror(errno) +
            ". Set MPITRACE_OUTPUT to a directory path in a writable place.";
    return false;
  }
  append_line("perusetrace-journal " + std::to_string(kFormatVersion) + " regions " +
              std::to_string(kRegionCount));
  append_line("rank " + std::to_string(h.rank) + " of " + std::to_string(h.size));
  append_line("host " + h.host);
  append_line("clock " + std::to_string(h.start_time) + ' ' + std::to_string(h.realtime_start));
  append_line("ticks " + std::to_string(h.ticks_first.ticks) + ' ' +
              std::to_string(h.ticks_first.ns) + ' ' + std::to_string(h.ticks_second.ticks) + ' ' +
              std::to_string(h.ticks_second.ns));
  append_line("settings " + h.settings);
  if (g_failed) {
    error = "cannot write " + path + ". Free space there or set MPITRACE_OUTPUT elsewhere.";
    return false;
  }
  return true;
}

void note_comm(const trace::CommInfo& c) {
  append_line("comm " + std::to_string(c.local_id) + ' ' +
              (c.parent == trace::kNoParent ? std::string("-") : std::to_string(c.parent)) + ' ' +
              (c.inter ? "1 " : "0 ") + ranks_text(c.world_ranks) + ' ' +
              ranks_text(c.remote_world_ranks) + ' ' + c.name);
  if (c.job_relation != trace::JobRelation::None)
    append_line("otherjob " + std::to_string(c.local_id) + ' ' +
                std::to_string(static_cast<int>(c.job_relation)) + ' ' +
                (c.job_archive.empty() ? std::string("-") : c.job_archive) + ' ' +
                (c.job.empty() ? std::string("-") : c.job));
}

void note_file(const trace::FileInfo& f) {
  append_line("file " + std::to_string(f.local_id) + ' ' + std::to_string(f.comm) + ' ' + f.name);
}

void note_window(const trace::WindowInfo& w) {
  append_line("win " + std::to_string(w.local_id) + ' ' + std::to_string(w.comm) + ' ' + w.name);
}

void note_window_name(std::uint32_t local_id, const std::string& name) {
  append_line("winname " + std::to_string(local_id) + ' ' + name);
}

void note_rma_group(std::uint32_t local_id, const std::vector<int>& world_ranks) {
  append_line("rmagroup " + std::to_string(local_id) + ' ' + ranks_text(world_ranks));
}

namespace {
template <typename T>
std::string numbers_text(const std::vector<T>& values) {
  std::string out = std::to_string(values.size());
  for (const T& v : values) out += ' ' + std::to_string(v);
  return out;
}
}  // namespace

void note_datatype(const trace::DatatypeInfo& d) {
  append_line("datatype " + std::to_string(d.local_id) + ' ' + d.combiner + ' ' +
              std::to_string(d.size) + ' ' + std::to_string(d.lb) + ' ' + std::to_string(d.extent) +
              ' ' + std::to_string(d.true_lb) + ' ' + std::to_string(d.true_extent) + ' ' +
              numbers_text(d.integers) + ' ' + numbers_text(d.addresses) + ' ' +
              numbers_text(d.types) + ' ' + d.name);
}

namespace {
// One line of the definitions file holds one fact: text from the MPI must not break it.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}
void note_lines(const char* key, const std::string& lines) {
  for (std::size_t at = 0, end; at < lines.size(); at = end + 1) {
    end = std::min(lines.find('\n', at), lines.size());
    append_line(std::string(key) + ' ' + lines.substr(at, end - at));
  }
}
}  // namespace

void note_file_name(std::uint32_t local_id, const std::string& name) {
  append_line("filename " + std::to_string(local_id) + ' ' + one_line(name));
}

void note_comm_name(std::uint32_t local_id, const std::string& name) {
  append_line("commname " + std::to_string(local_id) + ' ' + one_line(name));
}

void note_metric(const trace::MetricInfo& m) {
  std::string unit = m.unit.empty() ? "-" : one_line(m.unit);
  for (char& c : unit)
    if (c == ' ' || c == '\t') c = '_';
  // A third flag only for an annotation's metric: journals of MPI_T metrics read as before.
  append_line("metric " + std::to_string(m.local_id) + ' ' + (m.delta ? '1' : '0') +
              (m.real ? '1' : '0') + (m.annotation ? "1" : "") + ' ' + unit + ' ' +
              one_line(m.name) + '\t' + one_line(m.description));
}

void note_annotation(std::uint32_t local_id, const std::string& pair) {
  append_line("annotation " + std::to_string(local_id) + ' ' + one_line(pair));
}

void note_process_attribute(const std::string& name) {
  append_line("processattribute " + one_line(name));
}

void note_cvars(const std::string& cvars, const std::string& cvars_set) {
  note_lines("cvar", cvars);
  note_lines("cvarset", cvars_set);
}

void note_clock_domain(int leader, const std::string& name) {
  append_line("clockdomain " + std::to_string(leader) + ' ' + name);
}

void note_clock_offset(const trace::ClockOffset& o) {
  char text[128];
  std::snprintf(text, sizeof text, "offset %llu %lld %.1f %u",
                static_cast<unsigned long long>(o.local_time), static_cast<long long>(o.offset),
                o.error, o.exchanges);
  append_line(text);
}

void note_end(std::uint64_t end_time, TickPoint last) {
  append_line("tickpoint " + std::to_string(last.ticks) + ' ' + std::to_string(last.ns));
  append_line("end " + std::to_string(end_time));
}

void note_stopped(const char* reason, long code) noexcept {
  if (g_defs_fd < 0) return;
  char line[128];
  char* p = line;
  const TickPoint now = tick_point();
  const char point[] = "tickpoint ";
  std::memcpy(p, point, sizeof point - 1);
  p += sizeof point - 1;
  p = put_unsigned(p, now.ticks);
  *p++ = ' ';
  p = put_unsigned(p, now.ns);
  *p++ = '\n';
  write_all(g_defs_fd, line, static_cast<std::size_t>(p - line));
  p = line;
  const char keyword[] = "stopped ";
  std::memcpy(p, keyword, sizeof keyword - 1);
  p += sizeof keyword - 1;
  for (const char* r = reason; *r != '\0' && p < line + 96; ++r) *p++ = *r;
  *p++ = ' ';
  p = put_number(p, code);
  *p++ = '\n';
  write_all(g_defs_fd, line, static_cast<std::size_t>(p - line));
}

void note_midpoint() noexcept {
  static std::atomic<std::uint64_t> last_ns{0};
  const TickPoint now = tick_point();
  std::uint64_t last = last_ns.load(std::memory_order_relaxed);
  if (g_defs_fd < 0 || (last != 0 && now.ns - last < kMidpointEvery) ||
      !last_ns.compare_exchange_strong(last, now.ns))
    return;
  char line[64];
  char* p = line;
  const char keyword[] = "midpoint ";
  std::memcpy(p, keyword, sizeof keyword - 1);
  p += sizeof keyword - 1;
  p = put_unsigned(p, now.ticks);
  *p++ = ' ';
  p = put_unsigned(p, now.ns);
  *p++ = '\n';
  // One write of the whole line: O_APPEND places it whole between the other writers' lines.
  const ssize_t written = ::write(g_defs_fd, line, static_cast<std::size_t>(p - line));
  (void)written;
}

void note_cut(std::uint64_t ticks, std::uint64_t limit) noexcept {
  char line[512];
  char* p = line;
  auto put = [&](const char* text) {
    for (; *text != '\0'; ++text) *p++ = *text;
  };
  if (g_defs_fd >= 0) {
    put("cut ");
    p = put_unsigned(p, ticks);
    *p++ = ' ';
    p = put_unsigned(p, limit);
    *p++ = '\n';
    write_all(g_defs_fd, line, static_cast<std::size_t>(p - line));
  }
  // From whichever thread filled the last buffer, maybe inside MPI: no stdio, no allocation.
  p = line;
  put("perusetrace rank ");
  p = put_unsigned(p, static_cast<unsigned long long>(g_rank));
  put(": its journal reached MPITRACE_MAX_SIZE (");
  p = put_unsigned(p, limit >> 20);
  put(" MiB): recording stops here on this rank and the program goes on; the trace keeps "
      "everything before. To trace the whole run, raise MPITRACE_MAX_SIZE (e.g. 50G) or set it "
      "to off.\n");
  write_all(2, line, static_cast<std::size_t>(p - line));
}

std::uint64_t bytes_written() noexcept {
  return g_records_bytes.load(std::memory_order_relaxed);
}

std::string records_file(std::uint32_t thread) {
  return journal::records_path(g_trace_dir, g_rank, thread);
}

std::string samples_file(std::uint32_t thread) {
  return journal::samples_path(g_trace_dir, g_rank, thread);
}

namespace {
// A thread's file in the journal, for appending; -1 after saying what the thread goes without.
int open_thread_file(const std::string& path, std::uint32_t thread, const char* without) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0)
    say_failure("cannot create " + path + ": " + std::strerror(errno) + "; thread " +
                std::to_string(thread) + " is not " + without + ".");
  return fd;
}
}  // namespace

int open_samples(std::uint32_t thread) noexcept {
  return open_thread_file(samples_file(thread), thread, "sampled");
}

int open_records(std::uint32_t thread) noexcept {
  return open_thread_file(records_file(thread), thread, "traced");
}

int open_buffer(std::uint32_t thread, std::size_t bytes, int& error) noexcept {
  const std::string path = buffer_file(thread);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  // Allocated now, not as the hot path first writes each page: a file system that runs out of
  // space under a shared mapping can only say so with SIGBUS. posix_fallocate writes the blocks
  // itself where the file system cannot reserve them.
  error = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (error != 0) {
    ::close(fd);
    ::unlink(path.c_str());
    return -1;
  }
  return fd;
}

std::string buffer_file(std::uint32_t thread) {
  return journal::buffer_path(g_trace_dir, g_rank, thread);
}

void note_buffer_in_memory(std::uint32_t thread, int error) noexcept {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  std::fprintf(stderr,
               "perusetrace rank %d: cannot map thread %u's buffer from a file in %s (%s); "
               "tracing goes on with buffers in memory, whose records not yet written out are "
               "lost if the rank is killed outright (SIGKILL). Free space there, or set "
               "MPITRACE_BUFFERS=memory to choose this.\n",
               g_rank, thread, g_journal_dir.c_str(), std::strerror(error));
}

bool append(int fd, const void* data, std::size_t bytes, bool from_signal) noexcept {
  if (fd < 0) return false;
  if (write_all(fd, data, bytes)) {
    g_records_bytes.fetch_add(bytes, std::memory_order_relaxed);
    return true;
  }
  if (!from_signal)
    say_failure("writing the trace to " + g_journal_dir + " failed: " + std::strerror(errno) +
                ". Tracing stops here and the program goes on; what was written so far is "
                "kept. Free space there or set MPITRACE_OUTPUT elsewhere.");
  return false;
}

bool still_writable() noexcept {
  if (::access(g_journal_dir.c_str(), W_OK | X_OK) == 0) return true;
  say_failure("the output directory " + g_trace_dir +
              " is gone or no longer writable. Tracing stops here and the program goes on; set "
              "MPITRACE_OUTPUT to a directory that stays for the whole run.");
  return false;
}

void remove(std::uint32_t threads) {
  for (std::uint32_t t = 0; t < threads; ++t) {
    ::unlink(records_file(t).c_str());
    ::unlink(buffer_file(t).c_str());
    ::unlink(samples_file(t).c_str());
  }
  {
    std::lock_guard lock(g_defs_mutex);
    if (g_defs_fd >= 0) ::close(g_defs_fd);
    g_defs_fd = -1;
  }
  ::unlink(journal::definitions_path(g_trace_dir, g_rank).c_str());
  ::rmdir(g_journal_dir.c_str());  // the last rank to finish removes the directory
}

bool failed() noexcept {
  return g_failed.load();
}

const std::string& trace_directory() {
  return g_trace_dir;
}

}  // namespace perusetrace::journal
