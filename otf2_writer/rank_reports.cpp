// One global id per communicator across ranks, without any communication while the program
// runs: a communicator is known by its parent, its members (as world ranks) and by how many
// communicators with exactly those members the rank created from that parent before it.
// Members create communicators collectively, in the same order, so every member arrives at the
// same identity, a hash of those facts (CommId); contributions of ranges of ranks merge by it.
// This file needs no MPI: `perusetrace recover` unifies the ranks' journals with it too.
#include <algorithm>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <set>
#include <type_traits>
#include <unordered_set>
#include <utility>

#include "otf2_writer/internal.hpp"

namespace perusetrace::trace::detail {

namespace {
// The contribution's wire format goes both ways through one description (fields() below): Out
// appends each field it is given, In fills it from the bytes, so the two cannot drift apart.
// Every number travels as 64 bits.
class Out {
 public:
  template <typename T>
  requires std::is_arithmetic_v<T>
  void operator()(T v) { u64(static_cast<std::uint64_t>(v)); }
  void operator()(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void operator()(const std::vector<int>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(int));
  }
  void operator()(const CommId& id) {
    u64(id.a);
    u64(id.b);
  }
  // A list of the contribution's entries, or an array inside one (In reads them differently).
  template <typename T, typename Each>
  void list(const std::vector<T>& v, Each&& each) {
    u64(v.size());
    for (const T& x : v) each(x);
  }
  template <typename T, typename Each>
  void array(const std::vector<T>& v, std::size_t /*bytes_each*/, Each&& each) {
    list(v, each);
  }
  // Booleans as the bits of one number, the first the lowest.
  void bits(std::initializer_list<const bool*> flags) {
    std::uint64_t v = 0, bit = 1;
    for (const bool* f : flags) {
      if (*f) v |= bit;
      bit <<= 1;
    }
    u64(v);
  }
  // An enumeration whose fields follow only when it is not its first value; true when they do.
  template <typename E>
  bool present(const E& e, E /*last*/) {
    u64(static_cast<std::uint64_t>(e));
    return e != E{};
  }
  std::vector<char> bytes;

 private:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void raw(const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    bytes.insert(bytes.end(), c, c + n);
  }
};

// Never reads past the end: what is missing reads as 0, a length longer than what is left as
// what is left.
class In {
 public:
  In(const char* p, std::size_t n) : p_(p), end_(p + n) {}
  template <typename T>
  requires std::is_arithmetic_v<T>
  void operator()(T& v) { v = static_cast<T>(u64()); }
  void operator()(std::string& s) {
    s.assign(std::min<std::uint64_t>(u64(), left()), '\0');
    raw(s.data(), s.size());
  }
  void operator()(std::vector<int>& v) {
    v.resize(std::min<std::uint64_t>(u64(), left() / sizeof(int)));
    raw(v.data(), v.size() * sizeof(int));
  }
  void operator()(CommId& id) {
    id.a = u64();
    id.b = u64();
  }
  // Entries are read while bytes are left; an array's length is capped by what is left.
  template <typename T, typename Each>
  void list(std::vector<T>& v, Each&& each) {
    const std::uint64_t n = u64();
    for (std::uint64_t i = 0; i < n && left() > 0; ++i) {
      T x;
      each(x);
      v.push_back(std::move(x));
    }
  }
  template <typename T, typename Each>
  void array(std::vector<T>& v, std::size_t bytes_each, Each&& each) {
    v.resize(std::min<std::uint64_t>(u64(), left() / bytes_each));
    for (T& x : v) each(x);
  }
  void bits(std::initializer_list<bool*> flags) {
    const std::uint64_t v = u64();
    std::uint64_t bit = 1;
    for (bool* f : flags) {
      *f = (v & bit) != 0;
      bit <<= 1;
    }
  }
  // A value past `last` is not one this writer wrote: it stays the first, without its fields.
  template <typename E>
  bool present(E& e, E last) {
    const std::uint64_t v = u64();
    if (v == 0 || v > static_cast<std::uint64_t>(last)) return false;
    e = static_cast<E>(v);
    return true;
  }

 private:
  std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  void raw(void* out, std::size_t n) {
    if (n > left()) n = left();
    std::memcpy(out, p_, n);
    p_ += n;
  }
  const char* p_;
  const char* end_;
};

// Each of `fields`, in order.
template <typename Io, typename... F>
void all(Io& io, F&... fields) {
  (io(fields), ...);
}

// A contribution's fields in their order on the wire, for Out (`C` const) and In alike.
template <typename Io, typename C>
void fields(Io& io, C& c) {
  io(c.first_rank);
  io.list(c.ranks, [&](auto& r) {
    all(io, r.host, r.start_time, r.end_time, r.realtime_start, r.clock_leader);
    io.array(r.clock_offsets, 32,
             [&](auto& o) { all(io, o.local_time, o.offset, o.error, o.exchanges); });
    io.array(r.location_events, 8, io);
    all(io, r.cvars, r.cvars_set, r.cut_time);
  });
  io.list(c.comms, [&](auto& e) {
    all(io, e.id, e.parent, e.name, e.world_ranks);
    io.bits({&e.inter, &e.self, &e.named});
    io(e.namer);
    if (io.present(e.job_relation, JobRelation::Connected)) all(io, e.job, e.job_archive);
  });
  io.list(c.handles,
          [&](auto& h) { all(io, h.name, h.comm, h.open.seen, h.open.time, h.open.size); });
  io.list(c.metrics, [&](auto& m) {
    all(io, m.name, m.description, m.unit);
    io.bits({&m.delta, &m.real, &m.annotation});
  });
  io.list(c.contexts, [&](auto& e) { all(io, e.id, e.parent, e.function, e.file, e.line); });
  io.list(c.annotations, io);
  io.list(c.process_attributes, io);
  io.list(c.windows, [&](auto& e) { all(io, e.id, e.comm, e.name); });
  io.list(c.rma_groups, io);
  io.list(c.file_names, io);
  io.list(c.datatypes, [&](auto& e) {
    all(io, e.id, e.info.combiner, e.info.name, e.info.size, e.info.lb, e.info.extent,
        e.info.true_lb, e.info.true_extent);
    io.array(e.info.integers, 8, io);
    io.array(e.info.addresses, 8, io);
    io.array(e.types, 16, io);
  });
}

// Two independent 64-bit streams: 128 bits make a collision between a run's communicators
// (millions at most) vanishingly unlikely.
class Hasher {
 public:
  void add(std::uint64_t v) {
    a_ = mix(a_ ^ v);
    b_ = mix(b_ + v * 0x9e3779b97f4a7c15ull);
  }
  void add(const std::vector<int>& v) {
    add(v.size());
    for (int x : v) add(static_cast<std::uint64_t>(static_cast<std::uint32_t>(x)));
  }
  void add(const CommId& id) {
    add(id.a);
    add(id.b);
  }
  CommId id() const { return CommId{a_ | 1, b_}; }  // never {0, 0}: that is "none"

 private:
  static std::uint64_t mix(std::uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t a_ = 0x243f6a8885a308d3ull, b_ = 0x13198a2e03707344ull;
};

// The jobs at the far end of intercommunicators, and their members as indices into group 0.
// `comms` are the entries u.comms was made from (their member lists moved there).
void add_other_jobs(Unified& u, const std::vector<CommEntry>& comms) {
  const auto size = static_cast<int>(u.ranks.size());
  std::unordered_map<std::string, std::size_t> job_of;
  std::vector<std::size_t> comm_job(comms.size(), 0);
  for (std::size_t i = 0; i < comms.size(); ++i) {
    const CommEntry& e = comms[i];
    if (e.job_relation == JobRelation::None) continue;
    // A job nobody could name is the remote group of its one communicator.
    const std::string name = e.job.empty() ? "remote-" + std::to_string(i) : e.job;
    auto [it, fresh] = job_of.try_emplace(name, u.jobs.size());
    if (fresh) u.jobs.push_back({name, e.job_archive, e.job_relation, {}, 0});
    comm_job[i] = it->second;
    UnifiedJob& job = u.jobs[it->second];
    for (const int m : u.comms[i].world_ranks)  // the entry's, moved there
      if (m < -1) job.ranks.push_back(other_job_rank(m));
  }
  std::uint32_t next = static_cast<std::uint32_t>(size);
  for (UnifiedJob& job : u.jobs) {
    std::sort(job.ranks.begin(), job.ranks.end());
    job.ranks.erase(std::unique(job.ranks.begin(), job.ranks.end()), job.ranks.end());
    job.first = next;
    next += static_cast<std::uint32_t>(job.ranks.size());
  }
  for (std::size_t i = 0; i < comms.size(); ++i) {
    if (comms[i].job_relation == JobRelation::None) continue;
    const UnifiedJob& job = u.jobs[comm_job[i]];
    for (int& m : u.comms[i].world_ranks) {
      if (m >= -1) continue;
      const auto at = std::lower_bound(job.ranks.begin(), job.ranks.end(), other_job_rank(m));
      m = static_cast<int>(job.first + (at - job.ranks.begin()));
    }
  }
}

}  // namespace

RankReport report_of(const ProcessInfo& process) {
  RankReport r;
  static_cast<RankSummary&>(r) = process;
  return r;
}

std::vector<CommId> context_ids_of(const std::vector<ContextInfo>& contexts) {
  std::vector<CommId> ids(contexts.size());
  for (const ContextInfo& c : contexts) {
    if (c.local_id >= ids.size()) continue;
    Hasher h;
    if (c.parent < ids.size()) h.add(ids[c.parent]);
    h.add(std::hash<std::string>{}(c.function));
    h.add(std::hash<std::string>{}(c.file));
    h.add(c.line);
    ids[c.local_id] = h.id();
  }
  return ids;
}

std::vector<CommId> datatype_ids_of(const std::vector<DatatypeInfo>& datatypes) {
  std::vector<CommId> ids;
  for (const DatatypeInfo& d : datatypes) {
    if (d.local_id == kNoDatatype) continue;
    Hasher h;
    h.add(std::hash<std::string>{}(d.combiner));
    h.add(std::hash<std::string>{}(d.name));
    for (std::int64_t v : {d.size, d.lb, d.extent, d.true_lb, d.true_extent})
      h.add(static_cast<std::uint64_t>(v));
    h.add(d.integers.size());
    for (std::int64_t v : d.integers) h.add(static_cast<std::uint64_t>(v));
    h.add(d.addresses.size());
    for (std::int64_t v : d.addresses) h.add(static_cast<std::uint64_t>(v));
    h.add(d.types.size());
    for (std::uint32_t t : d.types) h.add(t < ids.size() ? ids[t] : CommId{});
    if (ids.size() <= d.local_id) ids.resize(d.local_id + 1);
    ids[d.local_id] = h.id();
  }
  return ids;
}

Contribution contribution_of(int rank, const RankReport& report, const ProcessInfo& process,
                             std::vector<CommId>& ids) {
  const std::vector<CommInfo>& comms = process.comms;
  const std::vector<FileInfo>& files = process.files;
  Contribution c;
  c.first_rank = rank;
  c.ranks.push_back(report);
  c.metrics = process.metrics;
  std::unordered_set<std::string> pairs;
  for (const std::string& a : process.annotations)
    if (!a.empty() && pairs.insert(a).second) c.annotations.push_back(a);
  c.process_attributes = process.process_attributes;
  const std::vector<CommId> context_ids = context_ids_of(process.contexts);
  std::unordered_set<CommId, CommIdHash> seen;
  for (const ContextInfo& info : process.contexts) {
    if (info.local_id >= context_ids.size() || !seen.insert(context_ids[info.local_id]).second)
      continue;
    c.contexts.push_back({context_ids[info.local_id],
                          info.parent < context_ids.size() ? context_ids[info.parent] : CommId{},
                          info.function, info.file, info.line});
  }
  const std::vector<CommId> type_ids = datatype_ids_of(process.datatypes);
  std::unordered_set<CommId, CommIdHash> types_seen;
  for (const DatatypeInfo& d : process.datatypes) {
    if (d.local_id >= type_ids.size() || !types_seen.insert(type_ids[d.local_id]).second) continue;
    DatatypeEntry e{type_ids[d.local_id], d, {}};
    for (std::uint32_t t : d.types) e.types.push_back(t < type_ids.size() ? type_ids[t] : CommId{});
    e.info.types.clear();
    c.datatypes.push_back(std::move(e));
  }
  ids.clear();
  // How many communicators with one parent and one membership this rank made before.
  std::unordered_map<CommId, std::uint64_t, CommIdHash> made;
  for (const CommInfo& info : comms) {
    CommEntry e;
    e.name = info.name;
    e.named = info.named;
    e.namer = info.named ? rank : -1;
    e.inter = info.inter;
    e.self = info.local_id == kCommSelf;
    e.world_ranks = info.world_ranks;
    std::vector<int> second = info.remote_world_ranks;
    e.job_relation = info.job_relation;
    const bool elsewhere = e.job_relation != JobRelation::None;
    if (elsewhere) {
      // Only this job's side is in the archive: its group comes first, the other job's follows.
      e.job = info.job;
      e.job_archive = info.job_archive;
    } else if (e.inter && second < e.world_ranks) {
      // Both sides of an intercommunicator see the groups swapped: order them.
      std::swap(e.world_ranks, second);
    }
    // The two groups of an intercommunicator make it from different parents: groups only.
    if (!e.inter && info.parent < ids.size()) e.parent = ids[info.parent];
    Hasher kind;
    if (e.self) {
      kind.add(~0ull);  // every rank's MPI_COMM_SELF is one communicator of the trace
    } else {
      kind.add(e.parent);
      kind.add(e.inter ? 1 : 0);
      kind.add(e.world_ranks);
      kind.add(second);
      if (elsewhere) kind.add(std::hash<std::string>{}(e.job) + 1);
    }
    Hasher id;
    id.add(kind.id());
    id.add(made[kind.id()]++);
    e.id = id.id();
    if (e.inter) e.world_ranks.insert(e.world_ranks.end(), second.begin(), second.end());
    if (ids.size() <= info.local_id) ids.resize(info.local_id + 1);
    ids[info.local_id] = e.id;
    c.comms.push_back(std::move(e));
  }
  for (const FileInfo& f : files) {
    HandleEntry h{f.name, f.comm < ids.size() ? ids[f.comm] : CommId{}, {}};
    if (f.local_id < report.handle_opens.size()) h.open = report.handle_opens[f.local_id];
    c.handles.push_back(std::move(h));
  }
  const std::vector<CommId> windows = window_ids_of(rank, process, ids);
  for (const WindowInfo& w : process.windows)
    if (w.local_id < windows.size())
      c.windows.push_back(
          {windows[w.local_id], w.comm < ids.size() ? ids[w.comm] : CommId{}, w.name});
  std::set<std::vector<int>> groups;
  for (const std::vector<int>& g : process.rma_groups)
    if (groups.insert(g).second) c.rma_groups.push_back(g);
  std::unordered_set<std::string> names;
  for (const std::string& n : process.file_names)
    if (!n.empty() && names.insert(n).second) c.file_names.push_back(n);
  return c;
}

std::vector<CommId> window_ids_of(int rank, const ProcessInfo& process,
                                  const std::vector<CommId>& comm_ids) {
  std::vector<CommId> ids;
  // How many windows this rank made on one communicator before.
  std::unordered_map<CommId, std::uint64_t, CommIdHash> made;
  for (const WindowInfo& w : process.windows) {
    Hasher kind;
    kind.add(0x77696eull);  // apart from communicators' identities
    if (w.comm < comm_ids.size()) kind.add(comm_ids[w.comm]);
    // Every rank's MPI_COMM_SELF is one communicator of the trace, but its windows are the
    // rank's own (and so are those on a communicator the tracer did not know).
    if (w.comm == kCommSelf || w.comm >= comm_ids.size())
      kind.add(static_cast<std::uint64_t>(rank));
    Hasher id;
    id.add(kind.id());
    id.add(made[kind.id()]++);
    if (ids.size() <= w.local_id) ids.resize(w.local_id + 1);
    ids[w.local_id] = id.id();
  }
  return ids;
}

std::map<std::vector<int>, std::uint64_t> rma_group_ids(const Unified& u) {
  std::map<std::vector<int>, std::uint64_t> ids;
  for (std::size_t i = 0; i < u.rma_groups.size(); ++i)
    ids.emplace(u.rma_groups[i], u.rma_group_base + i);
  return ids;
}

namespace {

// Which of two ranks' names of one communicator the trace keeps (docs/otf2-mapping.md,
// Unification): a given name over a made-up one, then its rank 0's, then the lower rank's
// (`kept` comes from lower ranks than `other`: contributions merge in rank order).
bool better_name(const CommEntry& other, const CommEntry& kept) {
  if (other.named != kept.named) return other.named;
  if (!other.named || other.self || other.world_ranks.empty()) return false;
  return other.namer == other.world_ranks[0] && kept.namer != kept.world_ranks[0];
}

// Appends each entry of `next` whose key `into` does not hold yet: contributions name the
// same calling contexts, metrics, windows... many times over.
template <typename Seen, typename T, typename Key = std::identity>
void append_new(std::vector<T>& into, std::vector<T>& next, Key key = {}) {
  Seen seen;
  for (const T& e : into) seen.insert(key(e));
  for (T& e : next)
    if (seen.insert(key(e)).second) into.push_back(std::move(e));
}

}  // namespace

void merge(Contribution& into, Contribution&& next) {
  std::unordered_map<CommId, std::size_t, CommIdHash> known;
  known.reserve(into.comms.size());
  for (std::size_t i = 0; i < into.comms.size(); ++i) known.emplace(into.comms[i].id, i);
  for (CommEntry& e : next.comms) {
    auto [it, fresh] = known.try_emplace(e.id, into.comms.size());
    if (fresh) {
      into.comms.push_back(std::move(e));
    } else if (CommEntry& kept = into.comms[it->second]; better_name(e, kept)) {
      kept.name = std::move(e.name);
      kept.named = true;
      kept.namer = e.namer;
    }
  }
  for (RankReport& r : next.ranks) into.ranks.push_back(std::move(r));
  for (HandleEntry& h : next.handles) into.handles.push_back(std::move(h));
  using Ids = std::unordered_set<CommId, CommIdHash>;
  using Names = std::unordered_set<std::string>;
  const auto id = [](const auto& e) { return e.id; };
  append_new<Names>(into.file_names, next.file_names);
  append_new<Ids>(into.contexts, next.contexts, id);
  append_new<Ids>(into.datatypes, next.datatypes, id);
  append_new<Names>(into.metrics, next.metrics, [](const MetricInfo& m) { return m.name; });
  append_new<Names>(into.annotations, next.annotations);
  append_new<Names>(into.process_attributes, next.process_attributes);
  append_new<Ids>(into.windows, next.windows, id);
  append_new<std::set<std::vector<int>>>(into.rma_groups, next.rma_groups);
}

std::vector<char> serialize(const Contribution& c) {
  Out out;
  fields(out, c);
  return std::move(out.bytes);
}

Contribution deserialize(const char* data, std::size_t length) {
  In in(data, length);
  Contribution c;
  fields(in, c);
  return c;
}

Unified unified_of(Contribution&& all, int size, CommLayout layout) {
  Unified u;
  u.ranks = std::move(all.ranks);
  for (const CommEntry& e : all.comms)
    u.comm_ids.emplace(e.id, u.comms.size()), u.comms.push_back({});
  for (std::size_t i = 0; i < all.comms.size(); ++i) {
    CommEntry& e = all.comms[i];
    UnifiedComm& c = u.comms[i];
    c.name = std::move(e.name);
    c.world_ranks = std::move(e.world_ranks);
    c.inter = e.inter;
    c.self = e.self;
    const auto parent = e.parent ? u.comm_ids.find(e.parent) : u.comm_ids.end();
    if (parent != u.comm_ids.end()) c.parent = parent->second;
  }
  add_other_jobs(u, all.comms);
  // Files are one per name, those opened first, then those only deleted; every rank's handle
  // is its own. A file's initial size is the one its earliest opening saw.
  std::vector<HandleOpen> first_open;
  for (HandleEntry& h : all.handles) {
    auto [it, fresh] = u.file_ids.try_emplace(h.name, u.files.size());
    if (fresh) u.files.push_back({h.name}), first_open.emplace_back();
    HandleOpen& first = first_open[it->second];
    if (h.open.seen && (!first.seen || h.open.time < first.time)) first = h.open;
    const auto comm = h.comm ? u.comm_ids.find(h.comm) : u.comm_ids.end();
    u.handles.push_back({std::move(h.name), it->second,
                         comm != u.comm_ids.end() ? comm->second : OTF2_UNDEFINED_COMM});
  }
  for (std::size_t i = 0; i < first_open.size(); ++i) u.files[i].initial_size = first_open[i].size;
  for (std::string& n : all.file_names)
    if (u.file_ids.try_emplace(n, u.files.size()).second) u.files.push_back({std::move(n)});
  CommIds context_ids;
  for (ContextEntry& e : all.contexts) {
    const auto parent = e.parent ? context_ids.find(e.parent) : context_ids.end();
    context_ids.emplace(e.id, u.contexts.size());
    u.contexts.push_back(
        {std::move(e.function), std::move(e.file), e.line,
         parent != context_ids.end() ? parent->second : OTF2_UNDEFINED_CALLING_CONTEXT});
  }
  u.context_ids = std::move(context_ids);
  for (DatatypeEntry& e : all.datatypes) {
    DatatypeText d;
    d.id = u.datatypes.size();
    d.combiner = std::move(e.info.combiner);
    d.name = std::move(e.info.name);
    d.size = e.info.size;
    d.lb = e.info.lb;
    d.extent = e.info.extent;
    d.true_lb = e.info.true_lb;
    d.true_extent = e.info.true_extent;
    d.integers = std::move(e.info.integers);
    d.addresses = std::move(e.info.addresses);
    for (const CommId& t : e.types) {
      const auto inner = t ? u.datatype_ids.find(t) : u.datatype_ids.end();
      if (inner != u.datatype_ids.end()) d.types.push_back(inner->second);
    }
    u.datatype_ids.emplace(e.id, d.id);
    u.datatypes.push_back(std::move(d));
  }
  u.annotations = std::move(all.annotations);
  u.process_attributes = std::move(all.process_attributes);
  for (std::size_t i = 0; i < u.annotations.size(); ++i)
    u.annotation_ids.emplace(u.annotations[i], i);
  u.metrics = std::move(all.metrics);
  for (std::size_t i = 0; i < u.metrics.size(); ++i)
    u.metric_ids.emplace(u.metrics[i].name, kFirstPvarMetric + i);
  for (WindowEntry& w : all.windows) {
    const auto comm = w.comm ? u.comm_ids.find(w.comm) : u.comm_ids.end();
    u.window_ids.emplace(w.id, u.windows.size());
    u.windows.push_back(
        {std::move(w.name), comm != u.comm_ids.end() ? comm->second : OTF2_UNDEFINED_COMM});
  }
  u.rma_groups = std::move(all.rma_groups);
  u.rma_group_base = comm_group_count(size, u.comms, layout);
  return u;
}

std::vector<std::uint64_t> metric_map_of(
    const std::vector<MetricInfo>& metrics,
    const std::unordered_map<std::string, std::uint64_t>& ids) {
  // Local metric refs in events are the Peruse counters' class (0) and local member ids; they map
  // to global classes (kPeruseCounterClass, metric_class_of).
  std::vector<std::uint64_t> map(kFirstPvarMetric, OTF2_UNDEFINED_METRIC);
  map[kPeruseCounterClass] = kPeruseCounterClass;
  for (const MetricInfo& m : metrics) {
    if (map.size() <= m.local_id) map.resize(m.local_id + 1, OTF2_UNDEFINED_METRIC);
    const auto it = ids.find(m.name);
    map[m.local_id] = it != ids.end() ? metric_class_of(it->second) : OTF2_UNDEFINED_METRIC;
  }
  return map;
}

std::vector<std::uint64_t> region_map_of(
    const ArchiveSpec& spec, const std::vector<std::string>& annotations,
    const std::unordered_map<std::string, std::uint64_t>& ids) {
  if (annotations.empty()) return {};
  const std::size_t base = spec.regions.size();
  std::vector<std::uint64_t> map(base + annotations.size(), OTF2_UNDEFINED_REGION);
  for (std::size_t i = 0; i < base; ++i) map[i] = i;
  for (std::size_t i = 0; i < annotations.size(); ++i) {
    const auto it = ids.find(annotations[i]);
    if (it != ids.end()) map[base + i] = base + it->second;
  }
  return map;
}

std::vector<std::uint64_t> handle_map_of(const std::vector<FileInfo>& files, std::uint64_t base) {
  std::vector<std::uint64_t> map;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (map.size() <= files[i].local_id) map.resize(files[i].local_id + 1, 0);
    map[files[i].local_id] = base + i;
  }
  return map;
}

}  // namespace perusetrace::trace::detail
