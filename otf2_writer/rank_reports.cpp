// One global id per communicator across ranks, without any communication while the program
// runs: a communicator is known by its members (as world ranks) and by how many communicators
// with exactly those members the rank created before it. Members create communicators
// collectively, in the same order, so every member arrives at the same key.
// This file needs no MPI: `perusetrace recover` unifies the ranks' journals with it too.
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
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
  // A length longer than what is left reads as what is left: never past the end.
  std::vector<int> ints() {
    std::vector<int> v(std::min<std::uint64_t>(u64(), left() / sizeof(int)));
    raw(v.data(), v.size() * sizeof(int));
    return v;
  }
  std::string str() {
    std::string s(std::min<std::uint64_t>(u64(), left()), '\0');
    raw(s.data(), s.size());
    return s;
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }

 private:
  void raw(void* out, std::size_t n) {
    if (n > left()) n = left();
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

// A communicator is the same on every rank when it has the same parent (by global id), the same
// members and is its parent's n-th such child: members alone would pair communicators that
// threads created concurrently, in different orders on different ranks.
struct Key {
  std::uint64_t parent;
  std::vector<int> first, second;
  bool operator<(const Key& o) const {
    return std::tie(parent, first, second) < std::tie(o.parent, o.first, o.second);
  }
};
constexpr std::uint64_t kNoParentId = ~0ull;

}  // namespace

std::vector<char> serialize(const RankInput& in) {
  Writer w;
  w.str(in.report.host);
  w.u64(in.report.start_time);
  w.u64(in.report.end_time);
  w.u64(in.report.realtime_start);
  w.u64(static_cast<std::uint64_t>(in.report.clock_leader));
  w.u64(in.report.clock_offsets.size());
  for (const ClockOffset& o : in.report.clock_offsets) {
    w.u64(o.local_time);
    w.u64(static_cast<std::uint64_t>(o.offset));
    w.u64(static_cast<std::uint64_t>(o.error));
    w.u64(o.exchanges);
  }
  w.u64(in.report.location_events.size());
  for (std::uint64_t e : in.report.location_events) w.u64(e);
  w.u64(in.comms.size());
  for (const CommInfo& c : in.comms) {
    w.u64(c.local_id);
    w.u64(c.parent);
    w.str(c.name);
    w.u64(c.inter);
    w.ints(c.world_ranks);
    w.ints(c.remote_world_ranks);
  }
  w.u64(in.files.size());
  for (const FileInfo& f : in.files) {
    w.u64(f.local_id);
    w.str(f.name);
    w.u64(f.comm);
  }
  return std::move(w.bytes);
}

RankInput deserialize(const char* data, std::size_t length) {
  Reader in(data, length);
  RankInput out;
  out.report.host = in.str();
  out.report.start_time = in.u64();
  out.report.end_time = in.u64();
  out.report.realtime_start = in.u64();
  out.report.clock_leader = static_cast<int>(in.u64());
  out.report.clock_offsets.resize(std::min<std::uint64_t>(in.u64(), in.left() / 32));
  for (ClockOffset& o : out.report.clock_offsets) {
    o.local_time = in.u64();
    o.offset = static_cast<std::int64_t>(in.u64());
    o.error = static_cast<double>(in.u64());
    o.exchanges = static_cast<std::uint32_t>(in.u64());
  }
  out.report.location_events.resize(std::min<std::uint64_t>(in.u64(), in.left() / 8));
  for (auto& e : out.report.location_events) e = in.u64();
  const std::uint64_t comms = in.u64();
  for (std::uint64_t i = 0; i < comms && in.left() > 0; ++i) {
    CommInfo c;
    c.local_id = static_cast<std::uint32_t>(in.u64());
    c.parent = static_cast<std::uint32_t>(in.u64());
    c.name = in.str();
    c.inter = in.u64() != 0;
    c.world_ranks = in.ints();
    c.remote_world_ranks = in.ints();
    out.comms.push_back(std::move(c));
  }
  const std::uint64_t files = in.u64();
  for (std::uint64_t i = 0; i < files && in.left() > 0; ++i) {
    FileInfo f;
    f.local_id = static_cast<std::uint32_t>(in.u64());
    f.name = in.str();
    f.comm = static_cast<std::uint32_t>(in.u64());
    out.files.push_back(std::move(f));
  }
  return out;
}

RankReport report_of(const ProcessInfo& process) {
  RankReport r;
  r.host = process.host;
  r.start_time = process.start_time;
  r.end_time = process.end_time;
  r.realtime_start = process.realtime_start;
  r.clock_leader = process.clock_leader;
  r.clock_offsets = process.clock_offsets;
  return r;
}

Unified unify_all(const std::vector<RankInput>& inputs) {
  Unified u;
  const std::size_t size = inputs.size();
  std::map<Key, std::vector<std::uint64_t>> ids;  // key -> global ids by occurrence
  std::map<std::string, std::uint64_t> file_ids;
  u.comm_maps.resize(size);
  u.handle_maps.resize(size);
  for (std::size_t r = 0; r < size; ++r) {
    u.ranks.push_back(inputs[r].report);
    std::vector<std::uint64_t>& map = u.comm_maps[r];
    std::map<Key, std::size_t> seen;
    for (const CommInfo& info : inputs[r].comms) {
      UnifiedComm c;
      c.name = info.name;
      c.inter = info.inter;
      c.world_ranks = info.world_ranks;
      c.remote_world_ranks = info.remote_world_ranks;
      c.self = info.local_id == kCommSelf;
      // Both sides of an intercommunicator see the groups swapped: order them for the key.
      // The two groups of an intercommunicator make it from different parents: groups only.
      const std::uint64_t parent =
          !c.inter && info.parent < map.size() && map[info.parent] != OTF2_UNDEFINED_COMM
              ? map[info.parent]
              : kNoParentId;
      Key key =
          c.self ? Key{kNoParentId, {-1}, {}} : Key{parent, c.world_ranks, c.remote_world_ranks};
      if (c.inter && key.second < key.first) std::swap(key.first, key.second);
      auto& by_occurrence = ids[key];
      const std::size_t occurrence = seen[key]++;
      if (occurrence == by_occurrence.size()) {
        by_occurrence.push_back(u.comms.size());
        if (parent != kNoParentId) c.parent = parent;
        if (c.inter) {  // one group: the lower one first (CommEntry::peer_offset agrees)
          c.world_ranks = key.first;
          c.world_ranks.insert(c.world_ranks.end(), key.second.begin(), key.second.end());
          c.remote_world_ranks.clear();
        }
        u.comms.push_back(std::move(c));
      }
      if (map.size() <= info.local_id) map.resize(info.local_id + 1, OTF2_UNDEFINED_COMM);
      map[info.local_id] = by_occurrence[occurrence];
    }
    // Files are one per name; every rank's handle is its own.
    for (const FileInfo& f : inputs[r].files) {
      auto [it, fresh] = file_ids.try_emplace(f.name, u.files.size());
      if (fresh) u.files.push_back(f.name);
      std::vector<std::uint64_t>& handles = u.handle_maps[r];
      if (handles.size() <= f.local_id) handles.resize(f.local_id + 1, 0);
      handles[f.local_id] = u.handles.size();
      u.handles.push_back(
          {f.name, it->second, f.comm < map.size() ? map[f.comm] : OTF2_UNDEFINED_COMM});
    }
  }
  return u;
}

}  // namespace perusetrace::trace::detail
