// Stable request ids. Open MPI reuses request objects, so a request's address (the MPI_Request
// handle, and also the unique_id Peruse reports) names different requests over a run. Each
// activation gets a fresh id from a counter; this table maps an address to the id of the request
// that currently lives there, plus what the PMPI side needs to complete it.
//
// Lock-free and allocation-free: open addressing over a fixed array; a slot is claimed once by
// compare-and-swap and then belongs to that address for the rest of the run. The number of
// distinct request addresses is bounded by the MPI's request pool, far below the capacity.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "lib/handle_table.hpp"

namespace perusetrace {

// The last activations of this thread, so a wrapper can tell whether Peruse activated its
// request during the PMPI call (and reuse that id) without a lookup that could hit a stale slot.
struct Activation {
  std::uintptr_t key;
  std::uint64_t id;
};
inline constexpr std::size_t kActivationLog = 256;
namespace detail {
extern constinit thread_local Activation t_activations[kActivationLog]
    __attribute__((tls_model("initial-exec")));
extern constinit thread_local std::uint64_t t_activation_count
    __attribute__((tls_model("initial-exec")));
}  // namespace detail
// The request this thread activated last, and the id counter's value right after: while the
// counter still says so, no request was activated anywhere since, so the table still maps that
// address to that id. A request's events come mostly in a row on the thread that started it,
// and this answers them without the table's probe. (A thread that sees another's activation
// through the MPI's own synchronisation sees the counter moved, too.)
struct LastActivation {
  std::uintptr_t key;
  std::uint64_t id;
  std::uint64_t next;
};
namespace detail {
extern constinit thread_local LastActivation t_last_activation
    __attribute__((tls_model("initial-exec")));
}  // namespace detail
inline std::uint64_t activation_mark() noexcept {
  return detail::t_activation_count;
}

// FileIo: a nonblocking MPI-IO operation; its slot keeps the I/O handle id in `comm` and the
// operation's matching id in `bytes`.
enum class RequestKind : std::uint8_t {
  Unknown,
  Send,
  Recv,
  PersistentSend,
  PersistentRecv,
  FileIo,
  Collective,  // a nonblocking collective: tag holds its region, peer its root
  Rma,         // MPI_Rput ...: see RmaIssue in lib/mpi_handlers.hpp for what its slot keeps
  Posting      // a thread is filling the slot in
};

// What the PMPI side knows of a request, copied in and out of its slot as a whole.
struct RequestInfo {
  RequestKind kind = RequestKind::Unknown;
  std::uint64_t id = 0;
  std::uint32_t comm = 0;
  std::int32_t peer = 0;         // as the program gave it
  std::int32_t peer_offset = 0;  // CommEntry::peer_offset of the communicator
  std::int32_t tag = 0;
  std::uint64_t bytes = 0;
  std::uint64_t received = 0;  // a nonblocking collective's bytes received (bytes: sent)
  std::uint32_t datatype = 0;  // the local datatype id of a message's buffer (DatatypeRegistry)
};

// Written by the thread that posts the request, read by whichever thread completes it. The
// fields are published by the release store of `kind` and read after its acquire load: the MPI
// hands requests between threads through its own (to us invisible) synchronisation.
struct RequestSlot {
  std::atomic<std::uintptr_t> key{0};
  std::atomic<std::uint64_t> id{0};
  std::atomic<RequestKind> kind{RequestKind::Unknown};
  std::atomic<std::uint32_t> comm{0};
  std::atomic<std::int32_t> peer{0}, peer_offset{0}, tag{0};
  std::atomic<std::uint64_t> bytes{0}, received{0};
  std::atomic<std::uint32_t> datatype{0};
  // The MPI handed this same handle to several pending requests: a shared, already complete
  // request (Open MPI returns &ompi_request_empty for a send that went out inline).
  std::atomic<bool> shared{false};

  // Takes the slot for a new request; false if a pending request holds it (a shared handle).
  bool claim() noexcept {
    RequestKind expected = RequestKind::Unknown;
    return kind.compare_exchange_strong(expected, RequestKind::Posting, std::memory_order_acquire);
  }
  // Takes the slot whatever holds it: the MPI has said this handle is a new request.
  void take() noexcept { kind.store(RequestKind::Posting, std::memory_order_relaxed); }
  void publish(const RequestInfo& r) noexcept {
    comm.store(r.comm, std::memory_order_relaxed);
    peer.store(r.peer, std::memory_order_relaxed);
    peer_offset.store(r.peer_offset, std::memory_order_relaxed);
    tag.store(r.tag, std::memory_order_relaxed);
    bytes.store(r.bytes, std::memory_order_relaxed);
    received.store(r.received, std::memory_order_relaxed);
    datatype.store(r.datatype, std::memory_order_relaxed);
    kind.store(r.kind, std::memory_order_release);
  }
  RequestInfo read() const noexcept {
    RequestInfo r;
    r.kind = kind.load(std::memory_order_acquire);
    if (r.kind == RequestKind::Posting) r.kind = RequestKind::Unknown;
    r.id = id.load(std::memory_order_acquire);
    r.comm = comm.load(std::memory_order_relaxed);
    r.peer = peer.load(std::memory_order_relaxed);
    r.peer_offset = peer_offset.load(std::memory_order_relaxed);
    r.tag = tag.load(std::memory_order_relaxed);
    r.bytes = bytes.load(std::memory_order_relaxed);
    r.received = received.load(std::memory_order_relaxed);
    r.datatype = datatype.load(std::memory_order_relaxed);
    return r;
  }
  // The request described by `was` is done: forget it, once. False if it was forgotten already.
  bool finish(RequestKind was) noexcept {
    return kind.compare_exchange_strong(was, RequestKind::Unknown, std::memory_order_acq_rel);
  }
};

class RequestTable {
 public:
  static constexpr std::size_t kCapacity = 1 << 16;

  // The slot for `address`, claimed if new; nullptr if the table is full (the id is then 0).
  RequestSlot* find_or_claim(std::uintptr_t address) noexcept { return table_.find(address, true); }

  // A new request now lives at `address`: give it a fresh id.
  std::uint64_t activate(std::uintptr_t address) noexcept {
    const std::uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
    if (RequestSlot* s = find_or_claim(address)) s->id.store(id, std::memory_order_release);
    detail::t_activations[detail::t_activation_count++ % kActivationLog] = {address, id};
    detail::t_last_activation = {address, id, id + 1};
    return id;
  }

  // The id of the request at `address` if this thread activated it since `mark`; else a new one.
  std::uint64_t activated_since(std::uint64_t mark, std::uintptr_t address) noexcept {
    const std::uint64_t end = detail::t_activation_count;
    const std::uint64_t begin = end - mark > kActivationLog ? end - kActivationLog : mark;
    for (std::uint64_t i = end; i > begin; --i) {
      const Activation& a = detail::t_activations[(i - 1) % kActivationLog];
      if (a.key == address) return a.id;
    }
    return activate(address);
  }

  // The id of the request at `address`, or 0 if none was activated there.
  std::uint64_t id_of(std::uintptr_t address) noexcept {
    const LastActivation& last = detail::t_last_activation;
    if (last.key == address && next_id_.load(std::memory_order_relaxed) == last.next)
      return last.id;
    RequestSlot* s = find_or_claim(address);
    return s ? s->id.load(std::memory_order_acquire) : 0;
  }

 private:
  HandleTable<RequestSlot, kCapacity> table_;
  std::atomic<std::uint64_t> next_id_{1};
};

extern RequestTable g_requests;

}  // namespace perusetrace
