// The hot path: every wrapper and Peruse callback writes one fixed-size Record into its own
// thread's buffer. No allocation, no lock, no system call: reserve a slot, fill it, commit.
// A full buffer is drained on the same thread: its records are packed (record_packing.hpp) and
// written to the thread's journal file (journal.hpp), shown in the trace as the
// "perusetrace flush" region. Packing is most of a drain's work; a thread about to wait for a
// message packs some records ahead (pack_ahead), so that less of it is left for the drain.
// The buffer is a shared mapping of a file in the journal: a record is kept once committed,
// even if the process is then killed outright (SIGKILL, the OOM killer).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "record/clock.hpp"
#include "record/record.hpp"
#include "record/record_packing.hpp"

namespace perusetrace {

// Who has a buffer's packing state (ThreadBuffer::busy).
enum class BufferUse : std::uint8_t { Free, Writing, PackingAhead };

struct ThreadBuffer {
  // The head of the thread's buffer file (BufferHead, record/journal_format.hpp): these come
  // first and are what `perusetrace recover` reads there after the process died. The buffer
  // and this struct share one mapping, of that file or of anonymous memory
  // (MPITRACE_BUFFERS=memory), so that a commit stays one store.
  Record* next;
  Record* end;
  Record* begin;
  std::uint64_t drained;  // records written to the records file when the buffer was emptied
  std::uint32_t magic;
  std::uint32_t record_bytes;
  std::uint64_t fold_calls;  // the polls being folded (journal::BufferHead)
  std::uint64_t fold_last;
  std::uint64_t fold_inside;
  std::uint32_t fold_region;
  std::uint32_t fold_spare;
  // The process's own.
  std::uint32_t thread_index;  // 0 = the thread that called MPI_Init
  int fd;                      // the thread's journal file
  int buffer_fd;               // the buffer's file, or -1 (in memory)
  std::uint8_t* packed;        // records are packed here, a block at a time
  std::size_t packed_capacity;
  packing::History* history;
  packing::BlockFill fill;    // of `packed`
  const Record* packed_upto;  // the records before it are in `packed` already
  // Taken by whoever packs or writes the buffer out (and with it `packed`, `history`, `fill`):
  // its thread packing ahead or draining it, or a crash handler saving every thread's records.
  // Never waited for: the loser drops what it would have done.
  std::atomic<BufferUse> busy;
};

// Capped: the journal reached MPITRACE_MAX_SIZE; nothing more is recorded, but what the buffers
// hold (from before the cut) is still written, at MPI_Finalize or when the program dies.
enum class TraceState : int { Off, On, Stopped, Capped };
extern std::atomic<TraceState> g_state;
// Whether the buffers still hold records to keep: tracing, or capped.
inline bool records_kept(TraceState s) noexcept {
  return s == TraceState::On || s == TraceState::Capped;
}

namespace detail {
// constinit: without it every access first calls the variable's TLS init wrapper.
extern constinit thread_local ThreadBuffer* t_buffer __attribute__((tls_model("initial-exec")));
ThreadBuffer* attach_or_drain() noexcept;  // first record of a thread, or buffer full
}  // namespace detail

// Returns the slot to fill, or nullptr when tracing is off (the caller then records nothing).
inline Record* reserve() noexcept {
  if (g_state.load(std::memory_order_relaxed) != TraceState::On) [[unlikely]]
    return nullptr;
  ThreadBuffer* b = detail::t_buffer;
  if (b == nullptr || b->next == b->end) [[unlikely]] {
    b = detail::attach_or_drain();
    if (b == nullptr) return nullptr;
  }
  return b->next;
}

// The record's stores come first: a process killed between them and the cursor's leaves a
// record its buffer file does not count (a torn one), never a counted one half-written.
inline void commit() noexcept {
  std::atomic_signal_fence(std::memory_order_release);
  ++detail::t_buffer->next;
}

// Writes `record` stamped with the current time. The stamp is taken after the slot is
// reserved: reserving may drain a full buffer and append the flush region, and every record
// that follows must be later than that.
inline void emit(Record record) noexcept {
  if (Record* r = reserve()) {
    record.time = now_ticks();
    *r = record;
    commit();
  }
}

// Closes the thread's fold of polls (Call, lib/mpi_handlers.hpp), if one is open: its PollFold
// (more than one call) and its Leave, `leave` carrying what the last call recorded, at the
// last poll's exit or, if something was recorded since, at that record's time (the journal
// stays in time order). Left open when nothing can be recorded.
void close_fold(Record leave) noexcept;
// Before a record that is not part of the thread's polls (another MPI call, an annotation).
inline void end_fold() noexcept {
  const ThreadBuffer* b = detail::t_buffer;
  if (b != nullptr && b->fold_calls != 0) [[unlikely]]
    close_fold(Record{0, RecordKind::Leave, 0, 0, 0, 0, 0, 0, 0, 0});
}

// With a time taken earlier: only for a thread's first record (MPI_Init's Enter).
inline void emit_first(Record record) noexcept {
  if (Record* r = reserve()) {
    *r = record;
    commit();
  }
}

// The thread is about to wait (a receive found no message, a blocking call begins): packs up to
// `most` of its records now, which the next drain then only has to write. The latest record is
// never packed ahead, as it may still change (Call::at_enter). Not async-signal-safe.
void pack_ahead(std::size_t most) noexcept;
// More than a ping-pong's round trip records on a rank, less than the wait for its message.
inline constexpr std::size_t kPackAhead = 32;

// Sets up buffers of `bytes` each (rounded down to whole records), mapped from files of the
// journal or (`in_memory`) not, and the journal's limit (MPITRACE_MAX_SIZE; 0: none), after
// which recording stops; called once at init.
void configure_buffers(std::size_t bytes, bool in_memory, std::uint64_t max_journal_bytes) noexcept;
// When the journal reached its limit (the records' clock), or 0.
std::uint64_t cut_ticks() noexcept;
// Drains every thread's buffer and closes its journal file; called once at finalize, by one
// thread, when the other threads no longer call MPI.
void drain_all_buffers() noexcept;
// The program is dying: stops tracing, and writes what every thread has recorded to the
// journal unless it is there already (buffers mapped from files). Async-signal-safe.
void save_all_buffers() noexcept;
std::uint32_t thread_count() noexcept;
// Writes every open buffer and records file through to storage (fdatasync), for
// MPITRACE_WRITEBACK (lib/writeback.hpp). From a thread of the tracer's own.
void write_through_buffers() noexcept;

}  // namespace perusetrace
