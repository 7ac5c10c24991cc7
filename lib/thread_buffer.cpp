#include "lib/thread_buffer.hpp"

#include "lib/sampler.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>

#include "lib/journal.hpp"
#include "lib/regions.hpp"
#include "lib/test_hooks.hpp"
#include "record/journal_format.hpp"
#include "record/record_packing.hpp"

namespace perusetrace {

std::atomic<TraceState> g_state{TraceState::Off};

namespace detail {
constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;
}

namespace {

// What `perusetrace recover` reads in a buffer file is this struct's beginning.
static_assert(offsetof(ThreadBuffer, next) == offsetof(journal::BufferHead, next));
static_assert(offsetof(ThreadBuffer, end) == offsetof(journal::BufferHead, end));
static_assert(offsetof(ThreadBuffer, begin) == offsetof(journal::BufferHead, begin));
static_assert(offsetof(ThreadBuffer, drained) == offsetof(journal::BufferHead, drained));
static_assert(offsetof(ThreadBuffer, magic) == offsetof(journal::BufferHead, magic));
static_assert(offsetof(ThreadBuffer, record_bytes) == offsetof(journal::BufferHead, record_bytes));
static_assert(offsetof(ThreadBuffer, fold_calls) == offsetof(journal::BufferHead, fold_calls));
static_assert(offsetof(ThreadBuffer, fold_last) == offsetof(journal::BufferHead, fold_last));
static_assert(offsetof(ThreadBuffer, fold_inside) == offsetof(journal::BufferHead, fold_inside));
static_assert(offsetof(ThreadBuffer, fold_region) == offsetof(journal::BufferHead, fold_region));
static_assert(sizeof(ThreadBuffer) <= journal::kBufferRecordsAt);
static_assert(journal::kBufferRecordsAt % alignof(Record) == 0);

using journal::kMaxThreads;
std::atomic<ThreadBuffer*> g_buffers[kMaxThreads];
std::atomic<bool> g_closed[kMaxThreads];
std::atomic<std::uint32_t> g_thread_count{0};
std::size_t g_capacity = 0;         // records per buffer, at least 4 (room for the flush region)
std::size_t g_packed_capacity = 0;  // bytes a drain packs before each write
std::uint64_t g_max_journal_bytes = 0;
bool g_buffer_files = true;  // MPITRACE_BUFFERS=file
std::atomic<std::uint64_t> g_cut_ticks{0};

void stop() noexcept {
  TraceState on = TraceState::On;
  g_state.compare_exchange_strong(on, TraceState::Stopped);
}

// The journal reached MPITRACE_MAX_SIZE: no record from now on, on any thread (reserve() sees
// the state), no sample either; the program goes on as before. Async-signal-safe.
void cap() noexcept {
  TraceState on = TraceState::On;
  if (!g_state.compare_exchange_strong(on, TraceState::Capped)) return;
  const std::uint64_t at = now_ticks();
  g_cut_ticks.store(at, std::memory_order_release);
  sampling::pause(true);
  journal::note_cut(at, g_max_journal_bytes);
}

// After its records were written out. The cursor goes back before `drained` counts them: a
// reader of the buffer file after a kill in between finds no record, not old ones renumbered.
void empty(ThreadBuffer* b) noexcept {
  const auto written = static_cast<std::uint64_t>(b->next - b->begin);
  b->next = b->begin;
  std::atomic_signal_fence(std::memory_order_release);
  b->drained += written;
  b->packed_upto = b->begin;
  packing::block_start(*b->history, b->fill);
}

// Packs the records from `cursor` to `end` into b's blocks and appends them to its journal file.
bool pack_and_append(ThreadBuffer* b, const Record*& cursor, const Record* end,
                     bool from_signal) noexcept {
  bool ok = true;
  for (bool all = false; !all && ok;) {
    all = packing::block_add(cursor, end, b->packed, b->packed_capacity, *b->history, b->fill);
    if (b->fill.records > 0) {
      const std::size_t bytes = packing::block_finish(b->packed, b->fill);
      test_hooks::before_block(b->thread_index, b->fd, b->packed, bytes);
      ok = journal::append(b->fd, b->packed, bytes, from_signal);
    }
    packing::block_start(*b->history, b->fill);
  }
  return ok;
}

// The records that close b's fold after a record at `latest` (0: none): its PollFold (more than
// one call) and `leave`, at the last poll's exit or at `latest` if later (the journal stays in
// time order). Written to `out`, which has room for two; returns how many.
int fold_close(const ThreadBuffer* b, Record leave, std::uint64_t latest, Record* out) noexcept {
  const std::uint64_t t = b->fold_last > latest ? b->fold_last : latest;
  const auto region = static_cast<std::uint16_t>(b->fold_region);
  int n = 0;
  if (b->fold_calls > 1)
    out[n++] =
        Record{t, RecordKind::PollFold, 0, region, 0, 0, 0, b->fold_calls, 0, b->fold_inside};
  leave.time = t;
  leave.kind = RecordKind::Leave;
  leave.region = region;
  out[n++] = leave;
  return n;
}

// A dying process's buffer in memory (MPITRACE_BUFFERS=memory) keeps its fold's head where no
// reader finds it: the records that close the fold (fold_close) follow the buffer's records in
// the journal. They are made from the head and never written into the
// buffer, which its thread may still be filling while the handler runs on another; a poll that
// thread finishes meanwhile is counted or not.
bool append_fold_close(ThreadBuffer* b, std::uint64_t latest) noexcept {
  if (b->fold_calls == 0) return true;
  std::atomic_signal_fence(std::memory_order_acquire);  // the head's other fields, for its count
  Record close[2];
  const int n = fold_close(b, Record{}, latest, close);
  const Record* cursor = close;
  return pack_and_append(b, cursor, close + n, true);
}

// Packs what is not packed yet and writes it out, unless someone else has the buffer; either
// way the buffer is empty after. From a crash handler, a buffer in memory has its open fold
// closed after its records (append_fold_close).
bool write_out(ThreadBuffer* b, bool from_signal) noexcept {
  BufferUse was = BufferUse::Free;
  if (!b->busy.compare_exchange_strong(was, BufferUse::Writing, std::memory_order_acquire)) {
    // A crash handler that interrupted its own thread packing ahead finds the packed records
    // and the block's fill in step (block_add keeps them so); anyone else stays away.
    const bool own = from_signal && was == BufferUse::PackingAhead && b == detail::t_buffer;
    if (!own) return from_signal;
  }
  const std::uint64_t latest = b->next != b->begin ? b->next[-1].time : 0;
  bool ok = pack_and_append(b, b->packed_upto, b->next, from_signal);
  if (ok && from_signal && b->buffer_fd < 0) ok = append_fold_close(b, latest);
  empty(b);
  if (!from_signal) b->busy.store(BufferUse::Free, std::memory_order_release);
  return ok;
}

void drain(ThreadBuffer* b) noexcept {
  const std::uint64_t t0 = now_ticks();
  // Files already open keep accepting writes after their directory is removed, and the trace
  // would vanish without a word: look once per drain (a buffer's worth of records).
  // On failure the records stay where they are: tracing stops, and a write error has emptied
  // the buffer already, while a crash handler that has it now must not see it change.
  if (!journal::still_writable() || !write_out(b, false)) {
    stop();
    return;
  }
  journal::note_midpoint();
  const std::uint64_t t1 = now_ticks();
  b->next[0] = Record{t0, RecordKind::Enter, 0, kFlushRegion, 0, 0, 0, 0, 0, 0};
  b->next[1] = Record{t1, RecordKind::Leave, 0, kFlushRegion, 0, 0, 0, 0, 0, 0};
  std::atomic_signal_fence(std::memory_order_release);  // as commit()
  b->next += 2;
  // Checked once a buffer: the journal may pass its limit by a buffer per thread at most.
  if (g_max_journal_bytes != 0 && journal::bytes_written() >= g_max_journal_bytes) cap();
}

// Writes the records that close b's fold at b->next, which has room for two. The fold's count
// is cleared after the cursor moved: a reader that finds both its Leave and an open fold knows
// the fold is closed by that Leave (the region is no longer open).
void put_fold_close(ThreadBuffer* b, Record leave) noexcept {
  Record* r = b->next;
  const int n = fold_close(b, leave, r != b->begin ? r[-1].time : 0, r);
  std::atomic_signal_fence(std::memory_order_release);  // as commit()
  b->next = r + n;
  std::atomic_signal_fence(std::memory_order_release);
  b->fold_calls = 0;
}

void close(std::uint32_t index) noexcept {
  if (g_closed[index].exchange(true)) return;
  ThreadBuffer* b = g_buffers[index].load(std::memory_order_acquire);
  if (b == nullptr) return;
  // A thread that ends, or is still polling at MPI_Finalize, closes its fold here.
  if (b->fold_calls != 0 && b->begin != nullptr && g_state.load() != TraceState::Stopped) {
    if (b->end - b->next < 2) write_out(b, false);
    if (b->end - b->next >= 2) put_fold_close(b, Record{});  // (unless a crash handler has it)
  }
  if (g_state.load() != TraceState::Stopped) write_out(b, false);
  ::close(b->fd);
  b->fd = -1;
  // MPI_Finalize encodes the archive next: without the buffers, the run's peak memory stays at
  // the buffers' size instead of the buffers plus the encoder's. The head stays mapped: the
  // thread, if it still runs, finds its buffer closed there.
  if (b->busy.exchange(BufferUse::Writing) == BufferUse::Free) {
    b->next = nullptr;  // first: the buffer file says "closed" from here on
    std::atomic_signal_fence(std::memory_order_release);
    Record* records = b->begin;
    b->begin = b->end = nullptr;
    ::munmap(records, g_capacity * sizeof(Record));
    if (b->buffer_fd >= 0) ::close(b->buffer_fd);
    b->buffer_fd = -1;
    delete[] b->packed;
    delete b->history;
    b->packed = nullptr;
    b->history = nullptr;
  }
}

// Runs when a thread other than the finalizing one ends: its records must not wait for
// MPI_Finalize, which may come long after.
struct ThreadExit {
  ~ThreadExit() {
    ThreadBuffer* b = detail::t_buffer;
    if (b != nullptr) sampling::stop_thread(b->thread_index);
    if (b != nullptr && records_kept(g_state.load())) close(b->thread_index);
  }
};
thread_local ThreadExit t_exit;

// `bytes` of room for a ThreadBuffer and its records: a file's shared mapping (the buffer file,
// whose pages the kernel keeps when the process dies), or anonymous memory when files are not
// asked for or cannot be had. `fd`: the file, or -1.
void* map_buffer(std::uint32_t index, std::size_t bytes, int& fd) noexcept {
  fd = -1;
  if (g_buffer_files) {
    int error = 0;
    fd = journal::open_buffer(index, bytes, error);
    if (fd >= 0) {
      void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (at != MAP_FAILED) return at;
      error = errno;
      ::close(fd);
      fd = -1;
      ::unlink(journal::buffer_file(index).c_str());
    }
    journal::note_buffer_in_memory(index, error);
  }
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return at == MAP_FAILED ? nullptr : at;
}

// A child made by fork() (without exec) shares its parent's buffer files: anything it recorded
// would be written into the parent's records. It records nothing.
void stop_in_child() {
  g_state.store(TraceState::Off);
}

}  // namespace

void configure_buffers(std::size_t bytes, bool in_memory,
                       std::uint64_t max_journal_bytes) noexcept {
  test_hooks::configure();
  static const bool fork_handled = ::pthread_atfork(nullptr, nullptr, stop_in_child) == 0;
  (void)fork_handled;
  g_buffer_files = !in_memory;
  g_max_journal_bytes = max_journal_bytes;
  g_capacity = bytes / sizeof(Record);
  if (g_capacity < 4) g_capacity = 4;
  // A quarter of the buffer, as packing shrinks records about eightfold: a drain of a large
  // buffer takes a few writes, a small buffer gets no large companion.
  constexpr std::size_t kLeast = sizeof(packing::BlockHeader) + 64 * packing::kMaxPackedRecord;
  g_packed_capacity = g_capacity * sizeof(Record) / 4;
  if (g_packed_capacity < kLeast) g_packed_capacity = kLeast;
  if (g_packed_capacity > packing::kMaxBlockBytes) g_packed_capacity = packing::kMaxBlockBytes;
}

void close_fold(Record leave) noexcept {
  ThreadBuffer* b = detail::t_buffer;
  if (reserve() == nullptr) return;
  // Both records in one buffer: a drain between them would put the flush region, later than
  // the fold's end, before its Leave.
  if (b->end - b->next < 2 && detail::attach_or_drain() == nullptr) return;
  put_fold_close(b, leave);
}

ThreadBuffer* detail::attach_or_drain() noexcept {
  if (ThreadBuffer* b = t_buffer) {
    if (b->begin == nullptr) return nullptr;  // closed: the thread has ended, or finalize ran
    drain(b);
    test_hooks::after_drain(b->thread_index, b->next);
    return g_state.load(std::memory_order_relaxed) == TraceState::On ? b : nullptr;
  }
  const std::uint32_t index = g_thread_count.fetch_add(1);
  if (index >= kMaxThreads) return nullptr;  // more threads than locations: not traced
  const std::size_t mapped = journal::kBufferRecordsAt + g_capacity * sizeof(Record);
  int buffer_fd = -1;
  void* at = map_buffer(index, mapped, buffer_fd);
  auto* packed = new (std::nothrow) std::uint8_t[g_packed_capacity];
  auto* history = new (std::nothrow) packing::History;
  const bool allocated = at != nullptr && packed != nullptr && history != nullptr;
  const int fd = allocated ? journal::open_records(index) : -1;
  if (fd < 0) {
    if (at != nullptr) ::munmap(at, mapped);
    if (buffer_fd >= 0) ::close(buffer_fd);
    delete[] packed;
    delete history;
    return nullptr;
  }
  // Touch every page now: the kernel would otherwise fault them in one by one, about one fault
  // per 85 records, inside the callbacks and wrappers.
  std::memset(at, 0, mapped);
  std::memset(packed, 0, g_packed_capacity);
  auto* b = new (at) ThreadBuffer{};
  auto* records = reinterpret_cast<Record*>(static_cast<char*>(at) + journal::kBufferRecordsAt);
  b->packed = packed;
  b->packed_capacity = g_packed_capacity;
  b->history = history;
  b->packed_upto = records;
  packing::block_start(*history, b->fill);
  b->begin = records;
  b->end = records + g_capacity;
  b->drained = 0;
  b->magic = journal::kBufferMagic;
  b->record_bytes = sizeof(Record);
  b->thread_index = index;
  b->fd = fd;
  b->buffer_fd = buffer_fd;
  std::atomic_signal_fence(std::memory_order_release);
  b->next = records;  // last: a reader takes a head without a cursor for an empty buffer
  g_buffers[index].store(b, std::memory_order_release);
  t_buffer = b;
  sampling::start_thread(index);
  (void)&t_exit;  // constructs the thread's exit hook
  return b;
}

void pack_ahead(std::size_t most) noexcept {
  ThreadBuffer* b = detail::t_buffer;
  if (b == nullptr || b->begin == nullptr ||
      g_state.load(std::memory_order_relaxed) != TraceState::On)
    return;
  // The latest record stays: a call's Enter takes its MPI event in after the commit
  // (Call::at_enter), and a packed record is final.
  if (b->next - b->packed_upto < 2) return;
  const Record* end = b->next - 1;
  if (static_cast<std::size_t>(end - b->packed_upto) > most) end = b->packed_upto + most;
  BufferUse was = BufferUse::Free;
  if (!b->busy.compare_exchange_strong(was, BufferUse::PackingAhead, std::memory_order_acquire))
    return;
  // A full block stays for the drain to write: no system call here.
  packing::block_add(b->packed_upto, end, b->packed, b->packed_capacity, *b->history, b->fill);
  b->busy.store(BufferUse::Free, std::memory_order_release);
}

void drain_all_buffers() noexcept {
  const std::uint32_t n = thread_count();
  for (std::uint32_t i = 0; i < n; ++i) close(i);
}

void save_all_buffers() noexcept {
  if (!records_kept(g_state.exchange(TraceState::Stopped))) return;
  const std::uint32_t n = thread_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    ThreadBuffer* b = g_buffers[i].load(std::memory_order_acquire);
    // A buffer mapped from its file is the journal's already; writing it out would race with
    // its thread, which may still be writing (the handler runs on one thread, the others go on).
    if (b != nullptr && !g_closed[i].load() && b->buffer_fd < 0) write_out(b, true);
  }
}

void write_through_buffers() noexcept {
  const std::uint32_t n = thread_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    ThreadBuffer* b = g_buffers[i].load(std::memory_order_acquire);
    // A file closed meanwhile (a thread that ended) fails with EBADF, or syncs a file that took
    // its number: both harmless.
    if (b == nullptr || g_closed[i].load()) continue;
    if (const int fd = b->buffer_fd; fd >= 0) ::fdatasync(fd);
    if (const int fd = b->fd; fd >= 0) ::fdatasync(fd);
  }
}

std::uint64_t cut_ticks() noexcept {
  return g_cut_ticks.load(std::memory_order_acquire);
}

std::uint32_t thread_count() noexcept {
  const std::uint32_t n = g_thread_count.load();
  return n < kMaxThreads ? n : kMaxThreads;
}

}  // namespace perusetrace
