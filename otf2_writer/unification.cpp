// Unification at MPI_Finalize, up and down a binomial tree of ranks: each rank merges the
// contributions of its children's subtrees into its own and passes the result to its parent;
// rank 0 numbers the communicators, and the numbers travel back down, each rank sending each
// child those of the communicators the child sent up. No rank receives more than the whole
// run's definitions, each communicator once (a gather of every rank's list at rank 0 would hold
// MPI_COMM_WORLD's members once per rank), and each rank talks to log2(size) others.
#include <mpi.h>

#include "otf2_writer/internal.hpp"

namespace perusetrace::trace::detail {

namespace {

constexpr int kTag = 0x0711;

void send_bytes(const std::vector<char>& bytes, int to) {
  const auto length = static_cast<std::uint64_t>(bytes.size());
  PMPI_Send(&length, 1, MPI_UINT64_T, to, kTag, MPI_COMM_WORLD);
  // In pieces below INT_MAX: a large run's definitions can exceed what one count holds.
  constexpr std::uint64_t kPiece = 1u << 30;
  for (std::uint64_t at = 0; at < length; at += kPiece)
    PMPI_Send(bytes.data() + at, static_cast<int>(std::min(kPiece, length - at)), MPI_CHAR, to,
              kTag, MPI_COMM_WORLD);
}

std::vector<char> receive_bytes(int from) {
  std::uint64_t length = 0;
  PMPI_Recv(&length, 1, MPI_UINT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<char> bytes(length);
  constexpr std::uint64_t kPiece = 1u << 30;
  for (std::uint64_t at = 0; at < length; at += kPiece)
    PMPI_Recv(bytes.data() + at, static_cast<int>(std::min(kPiece, length - at)), MPI_CHAR, from,
              kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

void send_ids(const std::vector<std::uint64_t>& ids, int to) {
  const auto count = static_cast<std::uint64_t>(ids.size());
  PMPI_Send(&count, 1, MPI_UINT64_T, to, kTag, MPI_COMM_WORLD);
  if (count > 0)
    PMPI_Send(ids.data(), static_cast<int>(count), MPI_UINT64_T, to, kTag, MPI_COMM_WORLD);
}

std::vector<std::uint64_t> receive_ids(int from) {
  std::uint64_t count = 0;
  PMPI_Recv(&count, 1, MPI_UINT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  std::vector<std::uint64_t> ids(count);
  if (count > 0)
    PMPI_Recv(ids.data(), static_cast<int>(count), MPI_UINT64_T, from, kTag, MPI_COMM_WORLD,
              MPI_STATUS_IGNORE);
  return ids;
}

// Down, from the parent: the global ids of what this rank sent up (`key` of each of `sent`, in
// the order sent).
template <class Sent, class Key, class Ids>
void receive_global_ids(int parent, const std::vector<Sent>& sent, Key&& key, Ids& into) {
  const std::vector<std::uint64_t> ids = receive_ids(parent);
  for (std::size_t i = 0; i < sent.size() && i < ids.size(); ++i)
    into.emplace(key(sent[i]), ids[i]);
}

// Down, to a child: the global ids of what it sent up, `none` for one `global` does not have.
template <class Key, class Ids>
void send_global_ids(const std::vector<Key>& sent, const Ids& global, std::uint64_t none, int to) {
  std::vector<std::uint64_t> ids;
  ids.reserve(sent.size());
  for (const Key& key : sent) {
    const auto found = global.find(key);
    ids.push_back(found != global.end() ? found->second : none);
  }
  send_ids(ids, to);
}

struct Child {
  int rank;
  std::vector<CommId> sent;  // the communicators of the child's subtree, in the order it sent them
  std::vector<std::string> sent_metrics;  // and its MPI_T metrics
  std::vector<CommId> sent_contexts;      // and its calling contexts
  std::vector<std::string> sent_annotations;
  std::vector<CommId> sent_windows;               // and its RMA windows
  std::vector<std::vector<int>> sent_rma_groups;  // and its RMA groups
  std::vector<std::string> sent_files;            // and the files its deletions named
  std::vector<CommId> sent_datatypes;
};

}  // namespace

Unified unify(const ProcessInfo& process, const RankReport& mine) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);

  std::vector<CommId> local_ids;
  Contribution subtree = contribution_of(rank, mine, process, local_ids);
  // Up: a rank receives from rank + 1, + 2, + 4, ... until the lowest set bit of its own rank,
  // where it sends to its parent. Children cover the ranks right after its subtree so far.
  std::vector<Child> children;
  int parent = -1;
  for (int mask = 1; mask < size; mask <<= 1) {
    if (rank & mask) {
      parent = rank - mask;
      send_bytes(serialize(subtree), parent);
      break;
    }
    if (rank + mask < size) {
      const std::vector<char> bytes = receive_bytes(rank + mask);
      Contribution child = deserialize(bytes.data(), bytes.size());
      Child c{rank + mask,      {}, {}, {}, child.annotations, {}, child.rma_groups,
              child.file_names, {}};
      for (const CommEntry& e : child.comms) c.sent.push_back(e.id);
      for (const WindowEntry& e : child.windows) c.sent_windows.push_back(e.id);
      for (const DatatypeEntry& e : child.datatypes) c.sent_datatypes.push_back(e.id);
      for (const MetricInfo& m : child.metrics) c.sent_metrics.push_back(m.name);
      for (const ContextEntry& e : child.contexts) c.sent_contexts.push_back(e.id);
      children.push_back(std::move(c));
      merge(subtree, std::move(child));
    }
  }

  Unified u;
  CommIds global;
  std::unordered_map<std::string, std::uint64_t> metric_ids;
  CommIds contexts;
  std::unordered_map<std::string, std::uint64_t> annotation_ids;
  CommIds windows;
  std::map<std::vector<int>, std::uint64_t> groups;
  std::unordered_map<std::string, std::uint64_t> file_ids;
  CommIds datatypes;
  if (parent < 0) {
    u = unified_of(std::move(subtree), size, state().spec.comm_layout);
    global = u.comm_ids;
    metric_ids = u.metric_ids;
    contexts = u.context_ids;
    annotation_ids = u.annotation_ids;
    windows = u.window_ids;
    groups = rma_group_ids(u);
    file_ids = u.file_ids;
    datatypes = u.datatype_ids;
  } else {
    // Down: the global ids of what this rank sent up, in that order.
    const auto id = [](const auto& e) { return e.id; };
    const auto itself = [](const auto& e) { return e; };
    receive_global_ids(parent, subtree.comms, id, global);
    receive_global_ids(
        parent, subtree.metrics, [](const MetricInfo& m) { return m.name; }, metric_ids);
    receive_global_ids(parent, subtree.contexts, id, contexts);
    receive_global_ids(parent, subtree.annotations, itself, annotation_ids);
    receive_global_ids(parent, subtree.windows, id, windows);
    receive_global_ids(parent, subtree.rma_groups, itself, groups);
    receive_global_ids(parent, subtree.file_names, itself, file_ids);
    receive_global_ids(parent, subtree.datatypes, id, datatypes);
  }
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    send_global_ids(it->sent, global, OTF2_UNDEFINED_COMM, it->rank);
    send_global_ids(it->sent_metrics, metric_ids, OTF2_UNDEFINED_METRIC, it->rank);
    send_global_ids(it->sent_contexts, contexts, OTF2_UNDEFINED_CALLING_CONTEXT, it->rank);
    send_global_ids(it->sent_annotations, annotation_ids, OTF2_UNDEFINED_REGION, it->rank);
    send_global_ids(it->sent_windows, windows, OTF2_UNDEFINED_RMA_WIN, it->rank);
    send_global_ids(it->sent_rma_groups, groups, OTF2_UNDEFINED_GROUP, it->rank);
    send_global_ids(it->sent_files, file_ids, OTF2_UNDEFINED_IO_FILE, it->rank);
    send_global_ids(it->sent_datatypes, datatypes, OTF2_UNDEFINED_STRING, it->rank);
  }
  u.comm_map = global_ids_of(local_ids, global, OTF2_UNDEFINED_COMM);
  u.metric_map = metric_map_of(process.metrics, metric_ids);
  u.context_map =
      global_ids_of(context_ids_of(process.contexts), contexts, OTF2_UNDEFINED_CALLING_CONTEXT);
  u.region_map = region_map_of(state().spec, process.annotations, annotation_ids);
  u.window_map =
      global_ids_of(window_ids_of(rank, process, local_ids), windows, OTF2_UNDEFINED_RMA_WIN);
  u.group_map = global_ids_of(process.rma_groups, groups, OTF2_UNDEFINED_GROUP);
  u.file_map = global_ids_of(process.file_names, file_ids, OTF2_UNDEFINED_IO_FILE);
  u.datatype_map =
      global_ids_of(datatype_ids_of(process.datatypes), datatypes, OTF2_UNDEFINED_STRING);

  // Handles are numbered in rank order: this rank's first is the count of all ranks' before it.
  std::uint64_t handles = process.files.size(), base = 0;
  PMPI_Exscan(&handles, &base, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) base = 0;  // MPI leaves rank 0's result undefined
  u.handle_map = handle_map_of(process.files, base);
  return u;
}

}  // namespace perusetrace::trace::detail
