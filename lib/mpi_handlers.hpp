// What the generated wrappers call: hand-written, ordinary C++. A wrapper constructs a Call
// (Enter), calls a handler or two around the PMPI call, and the Call's end records Leave.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "lib/mpi_functions.hpp"
#include "lib/mpi_state.hpp"
#include "lib/mpit_session.hpp"
#include "lib/request_table.hpp"
#include "lib/thread_buffer.hpp"
#include "record/clock.hpp"

namespace perusetrace {

// Groups switched on by MPITRACE_GROUPS, one bit per Group.
extern std::uint32_t g_group_mask;
// MPITRACE_FOLD_POLLS (see Call), and the longest time between two polls of one fold (in the
// records' ticks, set at init from kFoldGapNs).
extern bool g_fold_polls;
extern std::uint64_t g_fold_gap_ticks;
inline constexpr std::uint64_t kFoldGapNs = 50'000;

namespace detail {
// MPI calls made from inside an MPI call (by the MPI itself, e.g. ROMIO) are not traced again.
extern constinit thread_local int t_mpi_depth __attribute__((tls_model("initial-exec")));
}  // namespace detail

inline void record_region(RecordKind kind, std::uint16_t region) noexcept {
  emit(Record{0, kind, 0, region, 0, 0, 0, 0, 0, 0});
}

// One traced MPI call: its Enter record when constructed, its Leave record when it ends.
// What a call records at its start or its end (the MpiSend of MPI_Send, the MpiRecv of MPI_Recv,
// a collective's begin and end, a posted or completed request) rides in the Enter or Leave
// record itself (Record::event names its kind): one slot, one clock read and one OTF2 timestamp
// fewer per event, at the moment OTF2 readers expect it anyway.
//
// Polls folded (MPITRACE_FOLD_POLLS): a test or probe (PollCall, below) that finds nothing
// leaves its call open: its Leave is not written, and the next unsuccessful calls of the same
// function on the thread, each made within kFoldGapNs of the previous one's exit (a polling
// loop, not computation that tests now and then, whose time would show as MPI's), write nothing
// at all; the buffer's head counts them and adds up their time inside MPI (fold_calls,
// fold_inside), and notes the last one's exit. Any other call, an annotation, or a call of the
// function that finds something closes the fold: a PollFold record (the count and time inside)
// and the Leave, at the last exit, or, when the closing call is the function finding something,
// at its exit, carrying what it found. The first Enter is committed as the fold opens, and the
// head lives in the buffer's file: a rank killed while polling keeps the fold so far. Peruse
// events inside keep their own records.
class Call {
 public:
  explicit Call(Fn fn) noexcept : fn_(fn) {
    if (!enter_fast()) [[unlikely]]
      enter_general();
  }
  ~Call() {
    if (!traced_ || !leave_fast()) [[unlikely]]
      leave_general();
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  bool traced() const noexcept { return traced_; }
  Fn fn() const noexcept { return fn_; }

  // Records `payload` (its kind and fields; time and region are the call's) at the call's start.
  // Only while the Enter is the thread's latest record (which pack_ahead leaves unpacked for
  // this); after anything else was recorded, a drain or a crash handler's save (both reset the
  // buffer), it becomes a record of its own.
  void at_enter(const Record& payload) noexcept {
    if (enter_ != nullptr && enter_ + 1 == detail::t_buffer->next) {
      carry_committed(*enter_, payload);
      enter_ = nullptr;  // one payload per Enter
    } else {
      emit(payload);
    }
  }
  // Records `payload` at the call's end, in its Leave. A second one in the same call (MPI_Waitall
  // completing several requests) moves the first out into a record of its own, in order.
  void at_leave(const Record& payload) noexcept {
    if (leave_.event != 0) emit(carried(leave_));
    carry(leave_, payload);
  }

 protected:
  // For PollCall, which writes the Enter itself, or not.
  Call(Fn fn, bool polls) noexcept : fn_(fn) { (void)start(polls); }

  std::uint16_t index() const noexcept { return static_cast<std::uint16_t>(fn_); }

  // The thread's state and depth; whether the call is traced. A fold of another function, or
  // (`polls` false) any fold, ends here.
  [[gnu::always_inline]] bool start(bool polls) noexcept {
    const bool outermost = detail::t_mpi_depth == 0;
    if (outermost) {
      state::enter(fn_);
      const ThreadBuffer* b = detail::t_buffer;
      // A thread that records nothing (sample-only mode) gets its buffer, and with it its
      // sampling timer, at its first MPI call.
      if (b == nullptr) [[unlikely]]
        (void)reserve();
      else if (b->fold_calls != 0 && !(polls && b->fold_region == index())) [[unlikely]]
        close_fold(Record{0, RecordKind::Leave, 0, 0, 0, 0, 0, 0, 0, 0});
    }
    // A sampler's signal handler reads the state as soon as the depth says "in MPI".
    std::atomic_signal_fence(std::memory_order_release);
    ++detail::t_mpi_depth;
    traced_ = outermost && g_state.load(std::memory_order_relaxed) == TraceState::On &&
              (g_group_mask >> static_cast<unsigned>(kMpiFunctions[index()].group) & 1u);
    if (traced_) {
      leave_.event = 0;
      leave_.region = index();
    }
    return traced_;
  }

  // The outermost call of a thread that records, with room in its buffer, no fold open, no MPI_T
  // values to read and the TSC for a clock: nearly every call. It makes no call, so that the
  // compiler saves no register for it; anything else is enter_general's (start and write_enter),
  // a tail call away. Checks everything before it changes anything.
  [[gnu::always_inline]] bool enter_fast() noexcept {
    ThreadBuffer* b = detail::t_buffer;
    if (detail::t_mpi_depth != 0 || b == nullptr || b->fold_calls != 0 || b->next == b->end ||
        g_state.load(std::memory_order_relaxed) != TraceState::On ||
        mpit::g_reading.load(std::memory_order_relaxed) || !tsc_ticks() ||
        (g_group_mask >> static_cast<unsigned>(kMpiFunctions[index()].group) & 1u) == 0)
      return false;
    state::enter(fn_);
    std::atomic_signal_fence(std::memory_order_release);  // as in start()
    detail::t_mpi_depth = 1;
    traced_ = true;
    leave_.event = 0;
    leave_.region = index();
    Record* r = b->next;
    *r = Record{read_tsc(), RecordKind::Enter, 0, index(), 0, 0, 0, 0, 0, 0};
    commit();
    enter_ = r;
    return true;
  }
  [[gnu::noinline]] void enter_general() noexcept {
    if (start(false)) write_enter();
  }
  // The Leave, on the same conditions as enter_fast (a fold cannot open in a Call).
  [[gnu::always_inline]] bool leave_fast() noexcept {
    // No buffer: the thread's could not be made (its Enter was not written either).
    ThreadBuffer* b = detail::t_buffer;
    if (b == nullptr || b->next == b->end ||
        g_state.load(std::memory_order_relaxed) != TraceState::On ||
        mpit::g_reading.load(std::memory_order_relaxed) || !tsc_ticks())
      return false;
    Record* r = b->next;
    if (leave_.event == 0) {
      *r = Record{read_tsc(), RecordKind::Leave, 0, index(), 0, 0, 0, 0, 0, 0};
    } else {
      leave_.kind = RecordKind::Leave;
      leave_.time = read_tsc();
      *r = leave_;
    }
    commit();
    --detail::t_mpi_depth;
    return true;
  }
  [[gnu::noinline]] void leave_general() noexcept {
    if (traced_) {
      // Before the Leave: what the call caused.
      if (mpit::g_reading.load(std::memory_order_relaxed)) mpit::at_call_leave();
      end_call();
    }
    --detail::t_mpi_depth;
  }

  // The Enter, after the MPI_T values read before it; its time (0: none written).
  [[gnu::always_inline]] std::uint64_t write_enter() noexcept {
    // MPI_T values before the Enter: what changed outside MPI since the last read.
    if (mpit::g_reading.load(std::memory_order_relaxed)) mpit::at_call_enter(now_ticks());
    Record* r = reserve();
    if (r == nullptr) return 0;
    const std::uint64_t t = now_ticks();
    *r = Record{t, RecordKind::Enter, 0, index(), 0, 0, 0, 0, 0, 0};
    commit();
    enter_ = r;
    return t;
  }

  void end_call() noexcept {
    if (leave_.event == 0) {
      record_region(RecordKind::Leave, index());
    } else {
      leave_.kind = RecordKind::Leave;
      emit(leave_);
    }
  }

  Fn fn_;
  bool traced_;
  Record* enter_ = nullptr;  // the Enter slot, until a payload was put into it
  Record leave_;             // traced: the Leave to write (event != 0: it carries a payload)
};

// A test or probe: a Call that folds (above). The wrapper says what the call found.
class PollCall : public Call {
 public:
  explicit PollCall(Fn fn) noexcept : Call(fn, g_fold_polls) {
    if (!traced_) return;
    if (const ThreadBuffer* b = detail::t_buffer; b != nullptr && b->fold_calls != 0) {
      // This function's fold: start() ended any other (and every fold when MPITRACE_FOLD_POLLS
      // is off, so none is open then).
      const std::uint64_t now = now_ticks();
      if (now - b->fold_last <= g_fold_gap_ticks) {  // nothing to write now
        folded_ = true;
        entered_ = now;
        return;
      }
      close_fold(Record{0, RecordKind::Leave, 0, 0, 0, 0, 0, 0, 0, 0});
    }
    entered_ = write_enter();
  }
  ~PollCall() {
    if (!traced_) return;
    traced_ = false;  // ~Call has nothing left to write
    end_poll();
  }
  void polled(bool found) noexcept { found_ = found; }

 private:
  void end_poll() noexcept {
    ThreadBuffer* b = detail::t_buffer;
    const std::uint64_t exit = now_ticks();
    // Recording stopped during the call (MPITRACE_MAX_SIZE, a full disk): the fold ends where
    // the records do, not at this exit; it is closed at the thread's end.
    if (g_state.load(std::memory_order_relaxed) != TraceState::On) [[unlikely]]
      return;
    if (folded_) {
      b->fold_inside += exit - entered_;
      b->fold_last = exit;
      std::atomic_signal_fence(std::memory_order_release);  // the count last (BufferHead)
      ++b->fold_calls;
      if (!found_ && leave_.event == 0) return;
      if (mpit::g_reading.load(std::memory_order_relaxed)) mpit::at_call_leave();
      close_fold(leave_);
      return;
    }
    if (!found_ && leave_.event == 0 && entered_ != 0 && g_fold_polls) {  // a fold opens
      b->fold_region = index();
      b->fold_last = exit;
      b->fold_inside = exit - entered_;
      std::atomic_signal_fence(std::memory_order_release);
      b->fold_calls = 1;
      return;
    }
    if (mpit::g_reading.load(std::memory_order_relaxed)) mpit::at_call_leave();
    end_call();
  }

  bool folded_ = false;        // the fold was open when it began: no Enter written
  bool found_ = true;          // (the wrapper's polled())
  std::uint64_t entered_ = 0;  // the call's entry (ticks); 0: no Enter was written
};

// MPI_Init has no Call (tracing starts inside it) but is MPI all the same for the thread's state
// (what the sampler and perusetrace_mpi_state report).
class InMpi {
 public:
  explicit InMpi(Fn fn) noexcept {
    if (detail::t_mpi_depth == 0) state::enter(fn);
    std::atomic_signal_fence(std::memory_order_release);
    ++detail::t_mpi_depth;
  }
  ~InMpi() { --detail::t_mpi_depth; }
  InMpi(const InMpi&) = delete;
  InMpi& operator=(const InMpi&) = delete;
};

// Bytes a completed operation moved, from its status; 0 without one.
inline std::uint64_t status_bytes(const MPI_Status* status) noexcept {
  if (status == nullptr || status == MPI_STATUS_IGNORE) return 0;
#if defined(OPEN_MPI) && OPEN_MPI
  // Open MPI's status holds the bytes received (PMPI_Get_count divides them by the type's size):
  // a call fewer on every completion, and no int overflow beyond 2 GiB.
  return status->_ucount;
#else
  int n = 0;
  PMPI_Get_count(status, MPI_BYTE, &n);
  return n > 0 ? static_cast<std::uint64_t>(n) : 0;
#endif
}

// Arguments of a collective; absent ones are 0 / null.
struct CollArgs {
  MPI_Comm comm;
  const void* sendbuf;  // MPI_IN_PLACE changes which counts are significant
  int root;
  int count;
  MPI_Datatype datatype;
  int sendcount;
  MPI_Datatype sendtype;
  int recvcount;
  MPI_Datatype recvtype;
  const int* sendcounts;
  const int* recvcounts;
  const MPI_Datatype* sendtypes;
  const MPI_Datatype* recvtypes;
};

// Request completion: snapshots the request handles before the PMPI call (the MPI overwrites
// completed ones with MPI_REQUEST_NULL) and records what completed after it.
class Completion {
 public:
  static constexpr int kCapacity = 4096;  // a thread's scratch; larger calls track the first
  Completion(Call& call, int count, const MPI_Request* requests) noexcept;
  MPI_Status* statuses(MPI_Status* user) noexcept;
  void one(int rc, int index, const MPI_Status* status) noexcept;
  void all(int rc, const MPI_Status* statuses) noexcept;
  void some(int rc, int outcount, const int* indices, const MPI_Status* statuses) noexcept;
  // A test that completed nothing (or not all): the one-sided requests it tested unsuccessfully
  // (OTF2's RmaOpTest).
  void untested(int rc) noexcept;

 private:
  void completed(int index, const MPI_Status* status) noexcept;
  Call* call_;  // null: not traced
  int count_;
};

// Before PMPI_Init(_thread): settings the MPI takes only before it starts (MPITRACE_CVARS).
void before_init();
// MPI_Pcontrol(level): 0 pauses collection (calls, messages, Peruse events, samples), another
// level resumes it.
void on_pcontrol(int level) noexcept;
void on_init(int rc, Fn fn, std::uint64_t start, int provided);
void on_finalize();
void save_before_abort(int errorcode) noexcept;  // crash_guard.cpp

void on_send(Call&, int count, MPI_Datatype, int dest, int tag, MPI_Comm) noexcept;
void on_recv(Call&, int rc, MPI_Datatype, MPI_Comm, const MPI_Status*) noexcept;
// `mark` is activation_mark() taken before the PMPI call: requests Peruse activated since then
// keep the id Peruse gave them, so PMPI and Peruse records of one request share it.
void on_post(Call&, int rc, std::uint64_t mark, RequestKind, int count, MPI_Datatype, int peer,
             int tag, MPI_Comm, const MPI_Request*) noexcept;
void on_start(Call&, int rc, int count, const MPI_Request*) noexcept;
void on_request_free(const Call&, MPI_Request) noexcept;
// Matched probes: MPI_Message does not tell its communicator, so the probe's is remembered.
void on_mprobe(const Call&, int rc, MPI_Comm, MPI_Message) noexcept;
MPI_Comm message_comm(MPI_Message) noexcept;
void on_collective_begin(Call&) noexcept;
void on_collective_end(Call&, int rc, const CollArgs&) noexcept;
// A nonblocking collective started: its request, completed in Completion (lib/mpi_handlers.cpp).
void on_icollective(Call&, int rc, const CollArgs&, const MPI_Request* request) noexcept;
// `parent`: the communicator the new one was made from (MPI_COMM_NULL: none).
void on_comm_created(const Call&, int rc, MPI_Comm parent, MPI_Comm comm) noexcept;
void on_file_open(const Call&, int rc, MPI_Comm, const char* filename, int amode,
                  MPI_File) noexcept;
// MPI_File_close: what the handle was, looked up before the MPI invalidates it.
struct FileClosing {
  MPI_File fh;
  std::uint32_t handle;        // FileRegistry id, or FileRegistry::kNone
  std::uint32_t deleted_file;  // the file id the close deletes (MPI_MODE_DELETE_ON_CLOSE), or kNone
};
FileClosing on_file_closing(const Call&, MPI_File) noexcept;
void on_file_closed(const Call&, int rc, const FileClosing&) noexcept;
void on_file_delete(const Call&, int rc, const char* filename) noexcept;
// Returns the operation's matching id (0 when nothing was recorded).
std::uint64_t on_file_io_begin(const Call&, MPI_File, int count, MPI_Datatype, IoOperation,
                               std::int32_t flags) noexcept;
void on_file_io_end(const Call&, int rc, MPI_File, const MPI_Status*, std::uint64_t io) noexcept;
void on_file_io_posted(const Call&, int rc, MPI_File, std::uint64_t io,
                       const MPI_Request*) noexcept;
void on_file_split_begun(const Call&, int rc, MPI_File, std::uint64_t io) noexcept;
void on_file_split_end(const Call&, int rc, MPI_File, const MPI_Status*) noexcept;
// MPI_File_sync: a flush; the begin returns its matching id (0: nothing recorded).
std::uint64_t on_file_sync_begin(const Call&, MPI_File) noexcept;
void on_file_sync_end(const Call&, MPI_File, std::uint64_t io) noexcept;
// MPI_File_seek(_shared): the offset asked for and the one reached, at the call's Leave.
void on_file_seek(Call&, int rc, MPI_File, MPI_Offset offset, int whence, bool shared) noexcept;
// MPI_File_set_size, MPI_File_preallocate: the handle and the size, at the call's Leave.
void on_file_resized(Call&, int rc, MPI_File, MPI_Offset size) noexcept;
void on_comm_free(const Call&, MPI_Comm) noexcept;
// MPI_Comm_set_name: the trace calls the communicator what the program does.
void on_comm_named(const Call&, int rc, MPI_Comm, const char* name) noexcept;
// Datatypes (lib/datatype_registry.hpp): a freed handle may come back as another type; a named
// one is unwrapped again, with its name, at its next use.
void on_type_free(const Call&, MPI_Datatype) noexcept;
void on_type_named(const Call&, int rc, MPI_Datatype) noexcept;

// One-sided communication (lib/rma_handlers.cpp).
enum class RmaOp : std::uint8_t { Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap };
struct WindowEntry;
// An operation as issued: what a request-based one's request and completion need.
struct RmaIssue {
  WindowEntry* window = nullptr;  // null: nothing was recorded
  std::uint64_t matching = 0;
  std::int32_t target = 0;
  std::int32_t slot = -1;  // its place in the window's request slots (-1: none was free)
  bool combined = false;   // completing locally completes it at the target too
};
// Window creation (collective): RmaCollectiveBegin at the start, RmaWinCreate and
// RmaCollectiveEnd at the end. `allocates`: MPI allocates the window's memory.
void on_win_create_begin(Call&) noexcept;
void on_win_created(Call&, int rc, MPI_Comm, MPI_Win, bool allocates) noexcept;
// Returns the window being freed, for on_win_freed (null: not known).
WindowEntry* on_win_free_begin(Call&, MPI_Win) noexcept;
void on_win_freed(Call&, int rc, WindowEntry*) noexcept;
void on_win_set_name(const Call&, int rc, MPI_Win, const char* name) noexcept;
// An operation: its event (at the call's start) with a matching id. `sent`/`received` count
// and type the bytes it moves to and from the target.
RmaIssue on_rma_op(Call&, RmaOp, MPI_Win, int target, int sent_count, MPI_Datatype sent_type,
                   int received_count, MPI_Datatype received_type, bool request_based) noexcept;
// A request-based operation's request, completed in a Wait or Test (Completion).
void on_rma_request(Call&, int rc, const RmaIssue&, const MPI_Request*) noexcept;
// Synchronisation.
void on_win_fence_begin(Call&, MPI_Win) noexcept;
void on_win_fence(Call&, int rc, MPI_Win) noexcept;
void on_win_lock(Call&, MPI_Win, int target, int lock_type) noexcept;  // kRmaAllTargets: lock_all
void on_win_locked(Call&, int rc, MPI_Win, int target, int lock_type) noexcept;
void on_win_unlock(Call&, int rc, MPI_Win, int target) noexcept;
void on_win_flush(Call&, int rc, MPI_Win, int target, bool local) noexcept;
void on_win_sync(Call&, int rc, MPI_Win) noexcept;
void on_win_epoch_start(Call&, int rc, MPI_Win, MPI_Group, bool exposure) noexcept;
void on_win_complete(Call&, int rc, MPI_Win) noexcept;
void on_win_wait(Call&, int rc, MPI_Win, bool done) noexcept;  // MPI_Win_wait, MPI_Win_test
// Completion of a one-sided request (Completion): `tested` true when a test found it unfinished.
void rma_request_done(Call&, const RequestInfo&, bool tested) noexcept;

}  // namespace perusetrace
