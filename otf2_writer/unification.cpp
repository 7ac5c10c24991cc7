// One global id per communicator across ranks, without any communication while the program
// runs: a communicator is known by its members (as world ranks) and by how many communicators
// with exactly those members the rank created before it. Members create communicators
// collectively, in the same order, so every member arrives at the same key.
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "internal.hpp"

namespace perusetrace::trace::detail {

namespace {

class Writer {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void ints(const std::vector<int>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(int));
  }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  std::vector<char> bytes;

 private:
  void raw(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  }
};

class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), end_(p + n) {}
  std::uint64_t u64() {
    std::uint64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::vector<int> ints() {
    std::vector<int> v(u64());
    raw(v.data(), v.size() * sizeof(int));
    return v;
  }
  std::string str() {
    std::string s(u64(), '\0');
    raw(s.data(), s.size());
    return s;
  }

 private:
  void raw(void* out, std::size_t n) {
    const std::size_t avail = static_cast<std::size_t>(end_ - p_);
    if (n > avail) n = avail;  // a short buffer reads as zeros, never past the end
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

std::vector<char> serialize(const ProcessInfo& process, const RankReport& mine) {
  Writer w;
  w.str(mine.host);
  w.u64(mine.start_time);
  w.u64(mine.end_time);
  w.u64(mine.realtime_start);
  w.u64(mine.location_events.size());
  for (std::uint64_t e : mine.location_events) w.u64(e);
  w.u64(process.comms.size());
  for (const CommInfo& c : process.comms) {
    w.u64(c.local_id);
    w.str(c.name);
    w.u64(c.inter);
    w.ints(c.world_ranks);
    w.ints(c.remote_world_ranks);
  }
  w.u64(process.files.size());
  for (const FileInfo& f : process.files) {
    w.u64(f.local_id);
    w.str(f.name);
    w.u64(f.comm);
  }
  return std::move(w.bytes);
}

// Rank 0 holds one map per rank; every rank gets its own.
std::vector<std::uint64_t> scatter_maps(const std::vector<std::vector<std::uint64_t>>& maps,
                                        int rank, int size) {
  std::vector<std::uint64_t> flat;
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      displs[r] = static_cast<int>(flat.size());
      counts[r] = static_cast<int>(maps[r].size());
      flat.insert(flat.end(), maps[r].begin(), maps[r].end());
    }
  }
  int mine = 0;
  PMPI_Scatter(counts.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> map(static_cast<std::size_t>(mine));
  PMPI_Scatterv(flat.data(), counts.data(), displs.data(), MPI_UINT64_T, map.data(), mine,
                MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return map;
}

using Key = std::pair<std::vector<int>, std::vector<int>>;

}  // namespace

Unified unify(const ProcessInfo& process, const RankReport& mine) {
  Unified u;
  std::vector<RankReport>& ranks = u.ranks;
  std::vector<UnifiedComm>& comms = u.comms;
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);

  const std::vector<char> blob = serialize(process, mine);
  int length = static_cast<int>(blob.size());
  std::vector<int> lengths(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) offsets[r] = total, total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(blob.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
               0, MPI_COMM_WORLD);

  // Rank 0: per rank, the global id of each local communicator and I/O handle id.
  std::vector<std::vector<std::uint64_t>> maps, handle_maps;
  if (rank == 0) {
    std::map<Key, std::vector<std::uint64_t>> ids;  // key -> global ids by occurrence
    std::map<std::string, std::uint64_t> file_ids;
    ranks.resize(size);
    maps.resize(size);
    handle_maps.resize(size);
    for (int r = 0; r < size; ++r) {
      Reader in(all.data() + offsets[r], static_cast<std::size_t>(lengths[r]));
      RankReport& report = ranks[r];
      report.host = in.str();
      report.start_time = in.u64();
      report.end_time = in.u64();
      report.realtime_start = in.u64();
      report.location_events.resize(in.u64());
      for (auto& e : report.location_events) e = in.u64();
      std::map<Key, std::size_t> seen;
      const std::uint64_t n = in.u64();
      for (std::uint64_t i = 0; i < n; ++i) {
        const std::uint64_t local = in.u64();
        UnifiedComm c;
        c.name = in.str();
        c.inter = in.u64() != 0;
        c.world_ranks = in.ints();
        c.remote_world_ranks = in.ints();
        c.self = local == kCommSelf;
        // Both sides of an intercommunicator see the groups swapped: order them for the key.
        Key key = c.self ? Key{{-1}, {}} : Key{c.world_ranks, c.remote_world_ranks};
        if (c.inter && key.second < key.first) std::swap(key.first, key.second);
        auto& by_occurrence = ids[key];
        const std::size_t occurrence = seen[key]++;
        if (occurrence == by_occurrence.size()) {
          by_occurrence.push_back(comms.size());
          if (c.inter) {  // one group: the lower one first (CommEntry::peer_offset agrees)
            c.world_ranks = key.first;
            c.world_ranks.insert(c.world_ranks.end(), key.second.begin(), key.second.end());
            c.remote_world_ranks.clear();
          }
          comms.push_back(std::move(c));
        }
        if (maps[r].size() <= local) maps[r].resize(local + 1, OTF2_UNDEFINED_COMM);
        maps[r][local] = by_occurrence[occurrence];
      }
      // Files are one per name; every rank's handle is its own.
      const std::uint64_t files = in.u64();
      for (std::uint64_t i = 0; i < files; ++i) {
        const std::uint64_t local = in.u64();
        std::string name = in.str();
        const std::uint64_t comm = in.u64();
        auto [it, fresh] = file_ids.try_emplace(name, u.files.size());
        if (fresh) u.files.push_back(name);
        if (handle_maps[r].size() <= local) handle_maps[r].resize(local + 1, 0);
        handle_maps[r][local] = u.handles.size();
        u.handles.push_back({std::move(name), it->second,
                             comm < maps[r].size() ? maps[r][comm] : OTF2_UNDEFINED_COMM});
      }
    }
  }

  u.comm_map = scatter_maps(maps, rank, size);
  u.handle_map = scatter_maps(handle_maps, rank, size);
  return u;
}

}  // namespace perusetrace::trace::detail
