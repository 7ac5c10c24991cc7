// The hand-written side of the PMPI wrappers: what each kind of MPI call records.
#include "lib/mpi_handlers.hpp"

#include <array>
#include <cstring>

#include "lib/comm_registry.hpp"
#include "lib/datatype_registry.hpp"
#include "lib/handle_key.hpp"
#include "lib/handle_table.hpp"
#include "lib/peruse_session.hpp"

namespace perusetrace {

std::uint32_t g_group_mask = 0;
bool g_fold_polls = true;
std::uint64_t g_fold_gap_ticks = 0;
RequestTable g_requests;

namespace detail {
constinit thread_local int t_mpi_depth __attribute__((tls_model("initial-exec"))) = 0;
constinit thread_local Activation t_activations[kActivationLog]
    __attribute__((tls_model("initial-exec"))) = {};
constinit thread_local LastActivation t_last_activation
    __attribute__((tls_model("initial-exec"))) = {0, 0, 0};
constinit thread_local std::uint64_t t_activation_count __attribute__((tls_model("initial-exec"))) =
    0;
}  // namespace detail

namespace {

std::uintptr_t request_key(MPI_Request r) noexcept {
  return handle_key(r);
}

std::uint64_t type_size(MPI_Datatype type) noexcept {
  if (type == MPI_DATATYPE_NULL) return 0;
  int size = 0;
  PMPI_Type_size(type, &size);
  return size > 0 ? static_cast<std::uint64_t>(size) : 0;
}

std::uint64_t bytes(int count, MPI_Datatype type) noexcept {
  return count > 0 ? static_cast<std::uint64_t>(count) * type_size(type) : 0;
}

// What a message's wrapper needs of its datatype, for the type this thread's last message used:
// programs send the same type over and over, and the size (a call into the MPI) and the id (the
// registry's probe) then cost a comparison. Valid while the registry's generation stays.
struct TypeFacts {
  std::uint64_t size = 0;
  std::uint32_t id = trace::kNoDatatype;
};
struct TypeCache {
  std::uintptr_t key;
  std::uint64_t generation;
  TypeFacts facts;
};
constinit thread_local TypeCache t_type_cache
    __attribute__((tls_model("initial-exec"))) = {0, 0, {}};

[[gnu::noinline]] TypeFacts look_up_type(MPI_Datatype type, std::uintptr_t key,
                                         std::uint64_t generation) noexcept {
  const TypeFacts facts{type_size(type), g_datatypes.id_of(type)};
  if (facts.id != trace::kNoDatatype) t_type_cache = {key, generation, facts};
  return facts;
}

[[gnu::always_inline]] inline TypeFacts type_facts(MPI_Datatype type) noexcept {
  const TypeCache& c = t_type_cache;
  const std::uintptr_t key = handle_key(type);
  const std::uint64_t generation = g_datatypes.generation();
  if (c.key == key && c.generation == generation && key != 0) [[likely]]
    return c.facts;
  return look_up_type(type, key, generation);
}

std::uint64_t bytes_of(int count, const TypeFacts& t) noexcept {
  return count > 0 ? static_cast<std::uint64_t>(count) * t.size : 0;
}

// One side of a w collective, whose peers each have a type: every type that moved bytes is
// unwrapped (the archive defines each type a call used), and the collective names the one
// definition they all share; none when they differ, since one record holds one type per side.
struct PeerTypes {
  std::uint32_t id = trace::kNoDatatype;
  bool seen = false, mixed = false;

  std::uint64_t add(int count, MPI_Datatype type) noexcept {
    const std::uint64_t n = bytes(count, type);
    if (n == 0) return 0;
    const std::uint32_t t = g_datatypes.id_of(type);
    if (!seen) {
      id = t;
      seen = true;
    } else if (t != id) {
      mixed = true;
    }
    return n;
  }
  std::uint32_t common() const noexcept { return mixed ? trace::kNoDatatype : id; }
};

struct WTypes {
  PeerTypes send, recv;
};

// A communicator's process-local id and how its peers count in OTF2 (see CommEntry).
struct CommRef {
  std::uint32_t id = kCommUnknown;
  int offset = 0;
  int rank(int peer) const noexcept { return peer < 0 ? peer : peer + offset; }
};

[[gnu::always_inline]] inline CommRef comm_ref(MPI_Comm comm) noexcept {
  const CommEntry* e = g_comms.find(comm);
  return e ? CommRef{e->local_id, e->peer_offset} : CommRef{};
}

// Scratch for request completion, per thread: no allocation per call.
// What a request's slot said when the completing call began. Once the MPI completes a request
// it may hand the same address to another thread's new request, whose post rewrites the slot
// before this thread reads it: the completion must describe the request it waited for.
struct CompletionScratch {
  std::uintptr_t keys[Completion::kCapacity];
  RequestInfo pending[Completion::kCapacity];
  MPI_Status statuses[Completion::kCapacity];
};
constinit thread_local CompletionScratch* t_scratch __attribute__((tls_model("initial-exec"))) =
    nullptr;

CompletionScratch* scratch() noexcept {
  if (t_scratch == nullptr) t_scratch = new (std::nothrow) CompletionScratch;
  return t_scratch;
}

}  // namespace

void on_send(Call& call, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) noexcept {
  const CommRef c = comm_ref(comm);
  if (dest == MPI_PROC_NULL || c.id == kCommUnknown) return;  // no message, or unattributable
  const TypeFacts t = type_facts(type);
  call.at_enter(
      Record{0, RecordKind::MpiSend, 0, 0, c.id, c.rank(dest), tag, bytes_of(count, t), 0, t.id});
}

void on_recv(Call& call, int rc, MPI_Datatype type, MPI_Comm comm,
             const MPI_Status* status) noexcept {
  const CommRef c = comm_ref(comm);
  if (rc != MPI_SUCCESS || status->MPI_SOURCE == MPI_PROC_NULL || c.id == kCommUnknown) return;
  call.at_leave(Record{0, RecordKind::MpiRecv, 0, 0, c.id, c.rank(status->MPI_SOURCE),
                       status->MPI_TAG, status_bytes(status), 0, type_facts(type).id});
}

void on_post(Call& call, int rc, std::uint64_t mark, RequestKind kind, int count, MPI_Datatype type,
             int peer, int tag, MPI_Comm comm, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || *request == MPI_REQUEST_NULL) return;
  const std::uintptr_t key = request_key(*request);
  RequestSlot* slot = g_requests.find_or_claim(key);
  const CommRef c = comm_ref(comm);
  if (slot == nullptr || c.id == kCommUnknown) return;
  if (kind == RequestKind::Send &&
      (slot->shared.load(std::memory_order_relaxed) || !slot->claim())) {
    // The handle is still pending from an earlier post: a shared request that is complete
    // already. This send completes here, under an id of its own.
    slot->shared.store(true, std::memory_order_relaxed);
    if (peer == MPI_PROC_NULL) return;
    const std::uint64_t id = g_requests.activated_since(mark, 0);
    call.at_leave(Record{0, RecordKind::MpiIsend, 0, 0, c.id, c.rank(peer), tag, bytes(count, type),
                         id, g_datatypes.id_of(type)});
    call.at_leave(Record{0, RecordKind::MpiIsendComplete, 0, 0, 0, 0, 0, 0, id, 0});
    return;
  }
  if (kind != RequestKind::Send) slot->take();  // only sends share handles
  RequestInfo info;
  info.kind = kind;
  info.comm = c.id;
  info.peer = peer;
  info.peer_offset = c.offset;
  info.tag = tag;
  const TypeFacts t = type_facts(type);
  info.bytes = bytes_of(count, t);
  info.datatype = t.id;
  // Open MPI activates a persistent request once, here at init, not at each start: the
  // request keeps this id for all its starts. The id is set before the slot is published.
  const std::uint64_t id = g_requests.activated_since(mark, key);
  slot->publish(info);
  if (kind == RequestKind::PersistentSend || kind == RequestKind::PersistentRecv) return;
  if (peer == MPI_PROC_NULL) return;
  if (kind == RequestKind::Send) {
    call.at_leave(Record{0, RecordKind::MpiIsend, 0, 0, c.id, c.rank(peer), tag, info.bytes, id,
                         info.datatype});
  } else {
    call.at_leave(Record{0, RecordKind::MpiIrecvRequest, 0, 0, c.id, c.rank(peer), tag, 0, id, 0});
  }
}

void on_start(Call& call, int rc, int count, const MPI_Request* requests) noexcept {
  if (rc != MPI_SUCCESS) return;
  for (int i = 0; i < count; ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    const std::uintptr_t key = request_key(requests[i]);
    RequestSlot* slot = g_requests.find_or_claim(key);
    if (slot == nullptr) continue;
    const RequestInfo r = slot->read();
    if (r.peer == MPI_PROC_NULL) continue;
    if (r.kind == RequestKind::PersistentSend) {
      call.at_leave(Record{0, RecordKind::MpiIsend, 0, 0, r.comm, r.peer + r.peer_offset, r.tag,
                           r.bytes, r.id, r.datatype});
    } else if (r.kind == RequestKind::PersistentRecv) {
      call.at_leave(Record{0, RecordKind::MpiIrecvRequest, 0, 0, r.comm, r.peer + r.peer_offset,
                           r.tag, 0, r.id, 0});
    }
  }
}

namespace {
struct MessageSlot {
  std::atomic<std::uintptr_t> key{0};
  std::atomic<MPI_Comm> comm{MPI_COMM_NULL};
};
HandleTable<MessageSlot, 1 << 12> g_messages;
}  // namespace

void on_mprobe(const Call&, int rc, MPI_Comm comm, MPI_Message message) noexcept {
  if (rc != MPI_SUCCESS || message == MPI_MESSAGE_NULL || message == MPI_MESSAGE_NO_PROC) return;
  if (MessageSlot* s = g_messages.find(handle_key(message), true)) s->comm.store(comm);
}

MPI_Comm message_comm(MPI_Message message) noexcept {
  MessageSlot* s = g_messages.find(handle_key(message), false);
  return s ? s->comm.load() : MPI_COMM_NULL;
}

void on_request_free(const Call&, MPI_Request request) noexcept {
  // A freed request completes unseen: forget it so its completion is never guessed.
  if (RequestSlot* slot = g_requests.find_or_claim(request_key(request)))
    slot->kind.store(RequestKind::Unknown, std::memory_order_relaxed);
}

Completion::Completion(Call& call, int count, const MPI_Request* requests) noexcept
    : call_(call.traced() ? &call : nullptr), count_(0) {
  CompletionScratch* s = call_ != nullptr ? scratch() : nullptr;
  if (s == nullptr || requests == nullptr) return;
  count_ = count < kCapacity ? count : kCapacity;
  for (int i = 0; i < count_; ++i) {
    s->keys[i] = request_key(requests[i]);
    RequestInfo& p = s->pending[i];
    p.kind = RequestKind::Unknown;
    if (s->keys[i] == request_key(MPI_REQUEST_NULL)) continue;
    if (const RequestSlot* slot = g_requests.find_or_claim(s->keys[i])) p = slot->read();
  }
}

MPI_Status* Completion::statuses(MPI_Status* user) noexcept {
  if (user != MPI_STATUSES_IGNORE || count_ == 0 || t_scratch == nullptr) return user;
  return t_scratch->statuses;
}

void Completion::completed(int index, const MPI_Status* status) noexcept {
  if (index < 0 || index >= count_ || t_scratch == nullptr) return;
  const std::uintptr_t key = t_scratch->keys[index];
  if (key == request_key(MPI_REQUEST_NULL)) return;
  // Taken out of the scratch: untested() then sees only what did not complete.
  const RequestInfo pending = t_scratch->pending[index];
  t_scratch->pending[index].kind = RequestKind::Unknown;
  const RequestInfo* slot = &pending;
  if (slot->kind == RequestKind::Unknown) return;
  const std::uint64_t id = slot->id;
  // Done: forget it, unless a new request at the same address has taken the slot meanwhile.
  // Already forgotten with the same id: a handle the MPI shares between requests (a send that
  // went out inline), completed once already. A persistent request stays for its next start.
  RequestSlot* live = g_requests.find_or_claim(key);
  if (live != nullptr && live->id.load(std::memory_order_acquire) == id &&
      slot->kind != RequestKind::PersistentSend && slot->kind != RequestKind::PersistentRecv &&
      !live->finish(slot->kind))
    return;
  if (slot->kind == RequestKind::Collective) {
    // The MPI function goes in `tag`: a Leave that carries the record keeps its own region.
    call_->at_leave(Record{0, RecordKind::NbCollectiveComplete, 0, 0, slot->comm, slot->peer,
                           slot->tag, slot->bytes, id, slot->received});
    return;
  }
  if (slot->kind == RequestKind::Rma) {
    rma_request_done(*call_, *slot, false);
    return;
  }
  if (slot->kind == RequestKind::FileIo) {
    call_->at_leave(Record{0, RecordKind::IoOperationComplete, 0, 0, slot->comm, 0, 0,
                           status_bytes(status), slot->bytes, 0});
    return;
  }
  const bool send = slot->kind == RequestKind::Send || slot->kind == RequestKind::PersistentSend;
  if (slot->peer == MPI_PROC_NULL) return;
  if (status != nullptr && status != MPI_STATUS_IGNORE) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled) {
      call_->at_leave(Record{0, RecordKind::MpiRequestCancelled, 0, 0, 0, 0, 0, 0, id, 0});
      return;
    }
  }
  if (send) {
    call_->at_leave(Record{0, RecordKind::MpiIsendComplete, 0, 0, 0, 0, 0, 0, id, 0});
    return;
  }
  int peer = slot->peer < 0 ? slot->peer : slot->peer + slot->peer_offset;
  int tag = slot->tag;
  if (status != nullptr && status != MPI_STATUS_IGNORE) {
    peer = status->MPI_SOURCE;
    if (peer >= 0) peer += slot->peer_offset;
    tag = status->MPI_TAG;
  }
  call_->at_leave(Record{0, RecordKind::MpiIrecv, 0, 0, slot->comm, peer, tag, status_bytes(status),
                         id, slot->datatype});
}

void Completion::one(int rc, int index, const MPI_Status* status) noexcept {
  if (call_ != nullptr && rc == MPI_SUCCESS && index != MPI_UNDEFINED) completed(index, status);
}

void Completion::all(int rc, const MPI_Status* statuses) noexcept {
  if (call_ == nullptr || rc != MPI_SUCCESS) return;
  for (int i = 0; i < count_; ++i)
    completed(i, statuses == MPI_STATUSES_IGNORE ? nullptr : &statuses[i]);
}

void Completion::untested(int rc) noexcept {
  if (call_ == nullptr || rc != MPI_SUCCESS || t_scratch == nullptr) return;
  for (int i = 0; i < count_; ++i)
    if (t_scratch->pending[i].kind == RequestKind::Rma)
      rma_request_done(*call_, t_scratch->pending[i], true);
}

void Completion::some(int rc, int outcount, const int* indices,
                      const MPI_Status* statuses) noexcept {
  if (call_ == nullptr || rc != MPI_SUCCESS || outcount == MPI_UNDEFINED) return;
  for (int i = 0; i < outcount; ++i)
    completed(indices[i], statuses == MPI_STATUSES_IGNORE ? nullptr : &statuses[i]);
}

void on_collective_begin(Call& call) noexcept {
  call.at_enter(Record{0, RecordKind::CollectiveBegin, 0, 0, 0, 0, 0, 0, 0, 0});
}

namespace {

// Bytes this rank sends to and receives from the other ranks, as OTF2 counts them.
// A topology's neighbours in the order neighbourhood collectives use them; `real` false for the
// MPI_PROC_NULL ones a non-periodic Cartesian edge has (their buffer slots move no bytes).
struct Neighbours {
  std::array<bool, 64> in{}, out{};
  int indegree = 0, outdegree = 0;
};

bool neighbours_of(MPI_Comm comm, Neighbours& n) noexcept {
  int topo = MPI_UNDEFINED;
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    int dims = 0;
    PMPI_Cartdim_get(comm, &dims);
    if (dims * 2 > static_cast<int>(n.in.size())) return false;
    for (int d = 0; d < dims; ++d) {
      int source = MPI_PROC_NULL, dest = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &source, &dest);
      n.in[2 * d] = n.out[2 * d] = source != MPI_PROC_NULL;        // the -1 direction
      n.in[2 * d + 1] = n.out[2 * d + 1] = dest != MPI_PROC_NULL;  // the +1 direction
    }
    n.indegree = n.outdegree = 2 * dims;
    return true;
  }
  int weighted = 0, rank = 0;
  if (topo == MPI_GRAPH) {
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n.indegree);
    n.outdegree = n.indegree;
  } else if (topo == MPI_DIST_GRAPH) {
    PMPI_Dist_graph_neighbors_count(comm, &n.indegree, &n.outdegree, &weighted);
  } else {
    return false;
  }
  if (n.indegree > static_cast<int>(n.in.size()) || n.outdegree > static_cast<int>(n.out.size()))
    return false;
  n.in.fill(true);
  n.out.fill(true);
  return true;
}

// Neighbourhood collectives (OTF2 has no operation for them): what this rank sends to its
// out-neighbours and receives from its in-neighbours.
void neighbour_bytes(const char* name, const CollArgs& a, std::uint64_t& sent,
                     std::uint64_t& received, WTypes& wtypes) noexcept {
  Neighbours n;
  if (!neighbours_of(a.comm, n)) return;
  const bool v =
      std::strstr(name, "allgatherv") != nullptr || std::strstr(name, "alltoallv") != nullptr;
  const bool w = std::strstr(name, "alltoallw") != nullptr;
  const bool to_each = std::strstr(name, "alltoall") != nullptr;  // a block per out-neighbour
  for (int i = 0; i < n.outdegree; ++i) {
    if (!n.out[static_cast<std::size_t>(i)]) continue;
    if (w)
      sent += a.sendcounts && a.sendtypes ? wtypes.send.add(a.sendcounts[i], a.sendtypes[i]) : 0;
    else if (v && to_each)
      sent += a.sendcounts ? bytes(a.sendcounts[i], a.sendtype) : 0;
    else
      sent += bytes(a.sendcount, a.sendtype);
  }
  for (int i = 0; i < n.indegree; ++i) {
    if (!n.in[static_cast<std::size_t>(i)]) continue;
    if (w)
      received +=
          a.recvcounts && a.recvtypes ? wtypes.recv.add(a.recvcounts[i], a.recvtypes[i]) : 0;
    else if (v)
      received += a.recvcounts ? bytes(a.recvcounts[i], a.recvtype) : 0;
    else
      received += bytes(a.recvcount, a.recvtype);
  }
}

void collective_bytes(const Call& call, const CollArgs& a, std::uint64_t& sent,
                      std::uint64_t& received, WTypes& wtypes) noexcept {
  int size = 0, rank = 0, inter = 0;
  PMPI_Comm_test_inter(a.comm, &inter);
  if (inter) {
    PMPI_Comm_remote_size(a.comm, &size);
    rank = -1;  // no own contribution to leave out
  } else {
    PMPI_Comm_size(a.comm, &size);
    PMPI_Comm_rank(a.comm, &rank);
  }
  const bool in_place = a.sendbuf == MPI_IN_PLACE;
  const bool root = inter ? a.root == MPI_ROOT : a.root == rank;
  const auto others = static_cast<std::uint64_t>(inter ? size : size - 1);
  auto sum_except_me = [&](const int* counts, MPI_Datatype type) {
    std::uint64_t total = 0;
    for (int i = 0; counts != nullptr && i < size; ++i)
      if (i != rank) total += bytes(counts[i], type);
    return total;
  };
  // Every other rank's block: `counts` per rank (the v variants), else `count` each.
  auto others_blocks = [&](const int* counts, int count, MPI_Datatype type) {
    return counts != nullptr ? sum_except_me(counts, type) : bytes(count, type) * others;
  };
  // A rooted collective, toward the root (gathers, reductions) or away from it: the root moves
  // the others' blocks, every other rank its own. Only this rank's side is measured: the other
  // side's arguments may be insignificant here and hold anything.
  auto rooted = [&](bool to_root, const int* counts, int count, MPI_Datatype type, int own_count,
                    MPI_Datatype own_type) {
    if (root)
      (to_root ? received : sent) = others_blocks(counts, count, type);
    else
      (to_root ? sent : received) = bytes(own_count, own_type);
  };
  const trace::CollectiveOp op = kMpiFunctions[static_cast<std::size_t>(call.fn())].collective;
  sent = received = 0;
  switch (op) {
    case trace::CollectiveOp::Bcast:
    case trace::CollectiveOp::Reduce:
      rooted(op == trace::CollectiveOp::Reduce, nullptr, a.count, a.datatype, a.count, a.datatype);
      break;
    case trace::CollectiveOp::Allreduce:
    case trace::CollectiveOp::Scan:
    case trace::CollectiveOp::Exscan:
      sent = received =
          bytes(a.count, a.datatype) * (op == trace::CollectiveOp::Allreduce ? others : 1);
      break;
    case trace::CollectiveOp::Gather:
    case trace::CollectiveOp::Gatherv:
      rooted(true, a.recvcounts, a.recvcount, a.recvtype, a.sendcount, a.sendtype);
      break;
    case trace::CollectiveOp::Scatter:
    case trace::CollectiveOp::Scatterv:
      rooted(false, a.sendcounts, a.sendcount, a.sendtype, a.recvcount, a.recvtype);
      break;
    case trace::CollectiveOp::Allgather:
    case trace::CollectiveOp::Alltoall:
    case trace::CollectiveOp::Alltoallv:
      received = others_blocks(a.recvcounts, a.recvcount, a.recvtype);
      sent = in_place ? received : others_blocks(a.sendcounts, a.sendcount, a.sendtype);
      break;
    case trace::CollectiveOp::Allgatherv:
      received = sum_except_me(a.recvcounts, a.recvtype);
      sent = (in_place ? bytes(rank >= 0 && a.recvcounts ? a.recvcounts[rank] : 0, a.recvtype)
                       : bytes(a.sendcount, a.sendtype)) *
             others;
      break;
    case trace::CollectiveOp::ReduceScatterBlock:
      sent = received = bytes(a.recvcount, a.datatype) * others;
      break;
    case trace::CollectiveOp::ReduceScatter:
      sent = sum_except_me(a.recvcounts, a.datatype);
      received = rank >= 0 && a.recvcounts ? bytes(a.recvcounts[rank], a.datatype) * others : 0;
      break;
    case trace::CollectiveOp::Alltoallw: {
      // Per-peer counts and types; MPI_IN_PLACE sends what it receives.
      for (int i = 0; i < size && a.recvcounts && a.recvtypes; ++i)
        if (i != rank) received += wtypes.recv.add(a.recvcounts[i], a.recvtypes[i]);
      if (in_place) {
        sent = received;
        wtypes.send = wtypes.recv;
      } else {
        for (int i = 0; i < size && a.sendcounts && a.sendtypes; ++i)
          if (i != rank) sent += wtypes.send.add(a.sendcounts[i], a.sendtypes[i]);
      }
      break;
    }
    default: {  // Barrier moves no data; the neighbourhood collectives have no OTF2 operation
      const char* name = kMpiFunctions[static_cast<std::size_t>(call.fn())].name;
      if (std::strstr(name, "eighbor_") != nullptr)
        neighbour_bytes(name, a, sent, received, wtypes);
      break;
    }
  }
}

// The datatypes of a collective's send and receive buffers, as a datatype_pair. A type is looked
// up only where it moved bytes: the others may be insignificant (a non-root's receive type) and
// hold anything. The w variants' come from their peers' (WTypes).
std::uint64_t collective_types(const CollArgs& a, std::uint64_t sent, std::uint64_t received,
                               const WTypes& wtypes) noexcept {
  if (a.sendtypes != nullptr || a.recvtypes != nullptr)
    return trace::datatype_pair(sent > 0 ? wtypes.send.common() : trace::kNoDatatype,
                                received > 0 ? wtypes.recv.common() : trace::kNoDatatype);
  const MPI_Datatype recv = a.recvtype != MPI_DATATYPE_NULL ? a.recvtype : a.datatype;
  MPI_Datatype send = a.sendtype != MPI_DATATYPE_NULL ? a.sendtype : a.datatype;
  if (a.sendbuf == MPI_IN_PLACE) send = recv;  // what is sent lies in the receive buffer
  return trace::datatype_pair(sent > 0 ? g_datatypes.id_of(send) : trace::kNoDatatype,
                              received > 0 ? g_datatypes.id_of(recv) : trace::kNoDatatype);
}

}  // namespace

void on_collective_end(Call& call, int rc, const CollArgs& args) noexcept {
  std::uint64_t sent = 0, received = 0;
  WTypes wtypes;
  if (rc == MPI_SUCCESS) collective_bytes(call, args, sent, received, wtypes);
  int root = args.root;
  if (root == MPI_ROOT || root == MPI_PROC_NULL) root = -1;
  call.at_leave(Record{0, RecordKind::CollectiveEnd, 0, static_cast<std::uint16_t>(call.fn()),
                       g_comms.id_of(args.comm), root, 0, sent,
                       collective_types(args, sent, received, wtypes), received});
}

void on_icollective(Call& call, int rc, const CollArgs& args, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || request == nullptr || *request == MPI_REQUEST_NULL) return;
  const std::uintptr_t key = request_key(*request);
  RequestSlot* slot = g_requests.find_or_claim(key);
  if (slot == nullptr) return;
  slot->take();
  RequestInfo info;
  info.kind = RequestKind::Collective;
  info.comm = g_comms.id_of(args.comm);
  info.peer = args.root == MPI_ROOT || args.root == MPI_PROC_NULL ? -1 : args.root;
  info.tag = static_cast<std::int32_t>(call.fn());
  WTypes wtypes;
  collective_bytes(call, args, info.bytes, info.received, wtypes);
  const std::uint64_t id = g_requests.activate(key);
  slot->publish(info);
  call.at_leave(Record{0, RecordKind::NbCollectiveRequest, 0, 0, 0, 0, 0, 0, id,
                       collective_types(args, info.bytes, info.received, wtypes)});
}

void on_comm_created(const Call& call, int rc, MPI_Comm parent, MPI_Comm comm) noexcept {
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL) return;
  if (g_state.load() != TraceState::On) return;
  if (g_comms.find(comm) != nullptr) return;  // MPI_Comm_get_parent returns the same one
  const CommEntry* entry =
      g_comms.add(comm, kMpiFunctions[static_cast<std::size_t>(call.fn())].name, parent);
  peruse::attach(comm, entry);
  if (entry != nullptr) mpit::attach(comm, entry->local_id, entry->world);
}

void on_comm_free(const Call&, MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) return;
  peruse::detach(comm);  // before the MPI frees the communicator the handles point at
  mpit::detach(comm);
  g_comms.remove(comm);
}

void on_comm_named(const Call&, int rc, MPI_Comm comm, const char* name) noexcept {
  if (rc != MPI_SUCCESS || name == nullptr) return;
  g_comms.rename(comm, name);
}
void on_type_free(const Call&, MPI_Datatype type) noexcept {
  g_datatypes.forget(type);
}

void on_type_named(const Call&, int rc, MPI_Datatype type) noexcept {
  if (rc == MPI_SUCCESS) g_datatypes.renamed(type);
}

}  // namespace perusetrace
