#include "tools/export/chrome_trace.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <iterator>

#include "analysis/json_text.hpp"
#include "reader/world_rank.hpp"
#include "reader/other_jobs.hpp"

namespace perusetrace::exporter {

namespace {

using archive::RegionKind;

// Integers above 2^53 lose digits in a JavaScript viewer: such request ids go as strings.
constexpr std::uint64_t kExactInJavaScript = std::uint64_t{1} << 53;

}  // namespace

ChromeTrace::ChromeTrace(const Definitions& defs, OutputStream& out)
    : defs_(defs), out_(out), buf_(out.buffer()) {
  // pid = rank + 1 (pid 0 is the kernel's idle task to the Perfetto UI); a rank's first thread
  // has tid = pid, its other threads tids above every pid, so that no tid is used twice.
  const auto ranks = static_cast<std::uint32_t>(defs.ranks.size());
  tracks_.resize(defs.locations.size());
  for (std::size_t l = 0; l < defs.locations.size(); ++l) {
    const archive::LocationDef& d = defs.locations[l];
    Track& t = tracks_[l];
    t.rank = d.rank;
    t.thread = d.thread;
    const std::uint64_t pid = std::uint64_t{d.rank} + 1;
    const std::uint64_t tid = d.thread == 0 ? pid : std::uint64_t{ranks} + l + 1;
    t.ids = fmt::format(R"("pid":{},"tid":{})", pid, tid);
  }
  for (const archive::RegionDef& r : defs.regions) {
    if (r.kind == RegionKind::Peruse && r.peruse_index < defs.peruse_events.size())
      region_names_.push_back(archive::json_string(defs.peruse_events[r.peruse_index]));
    else
      region_names_.push_back(archive::json_string(r.name));
    region_categories_.push_back(r.kind == RegionKind::MpiFunction  ? "mpi"
                                 : r.kind == RegionKind::Peruse     ? "peruse"
                                 : r.kind == RegionKind::Annotation ? "annotation"
                                 : r.kind == RegionKind::Tracer     ? "perusetrace"
                                                                    : "user");
  }
  for (std::size_t c = 0; c < defs.comms.size(); ++c)
    comm_names_.push_back(archive::json_string(
        defs.comms[c].name.empty() ? fmt::format("comm {}", c) : defs.comms[c].name));
  for (const archive::MetricDef& m : defs.metrics)
    metric_names_.push_back(archive::json_string(m.name) + R"(,"args":{)" +
                            archive::json_string(m.unit.empty() ? "value" : m.unit) + ":");
  totals_.resize(defs.locations.size());
  shown_.resize(defs.locations.size());
  state_shown_.assign(defs.locations.size(), -2);
  began_.resize(defs.locations.size());
}

void ChromeTrace::share(std::vector<bool> owned, unsigned rank, unsigned parts) {
  owned_ = std::move(owned);
  next_flow_ = next_operation_ = rank + 1;
  id_step_ = parts;
}

void ChromeTrace::open(const char* phase, std::uint32_t loc, std::uint64_t t) {
  buf_ += first_ ? "\n" : ",\n";
  first_ = false;
  // "ts" early: the Perfetto UI's tokenizer looks for it before it parses the event.
  fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"({{"ph":"{}","ts":{}.{:03},{})"), phase,
                 t / 1000, t % 1000, tracks_[loc].ids);
}

void ChromeTrace::start() {
  buf_ += R"({"traceEvents":[)";
  auto metadata = [&](std::uint32_t loc, const char* name, const std::string& args) {
    buf_ += first_ ? "\n" : ",\n";
    first_ = false;
    fmt::format_to(std::back_inserter(buf_), R"({{"ph":"M","ts":0,{},"name":"{}","args":{}}})",
                   tracks_[loc].ids, name, args);
  };
  std::vector<bool> named(defs_.ranks.size(), false);
  for (std::uint32_t l = 0; l < tracks_.size(); ++l) {
    const Track& t = tracks_[l];
    if (t.rank < named.size() && !named[t.rank]) {
      named[t.rank] = true;
      const archive::RankDef& rank = defs_.ranks[t.rank];
      const std::string host =
          rank.node < defs_.nodes.size() ? defs_.nodes[rank.node].name : std::string();
      const std::string name =
          host.empty() ? fmt::format("rank {}", t.rank) : fmt::format("rank {} ({})", t.rank, host);
      metadata(l, "process_name", fmt::format(R"({{"name":{}}})", archive::json_string(name)));
      metadata(l, "process_sort_index", fmt::format(R"({{"sort_index":{}}})", t.rank));
      if (!host.empty())
        metadata(l, "process_labels",
                 fmt::format(R"({{"labels":{}}})", archive::json_string("host " + host)));
    }
    metadata(l, "thread_name",
             fmt::format(R"({{"name":{}}})",
                         archive::json_string(fmt::format("rank {} thread {}", t.rank, t.thread))));
    metadata(l, "thread_sort_index", fmt::format(R"({{"sort_index":{}}})", t.thread));
  }
  out_.flush_if_full();
}

void ChromeTrace::finish_events() {
  for (const auto& [channel, p] : pending_) {
    counts_.unmatched_sends += p.sends.size();
    counts_.unmatched_receives += p.receives.size();
  }
  counts_.unfinished_operations = io_open_.size() + rma_open_.size();
}

void ChromeTrace::end(const std::string& archive) {
  // After the events: a viewer that does not know "otherData" has read them all by then.
  fmt::format_to(std::back_inserter(buf_),
                 "\n],\n"
                 R"("otherData":{{"exporter":"perusetrace export --perfetto","archive":{},)"
                 R"("creator":{},"settings":{},"trace_ns":{},"time_unit":"us since the trace )"
                 R"(start","ranks":{},"locations":{}}}}})"
                 "\n",
                 archive::json_string(archive), archive::json_string(defs_.creator),
                 archive::json_string(defs_.settings), defs_.trace_length, defs_.ranks.size(),
                 defs_.locations.size());
}

// ---- MPI calls and other regions: slices ---------------------------------------------------

void ChromeTrace::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  began_[loc].push_back(t);
  if (region >= region_names_.size()) return;
  open("B", loc, t);
  fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"(,"name":{},"cat":"{}")"),
                 region_names_[region], region_categories_[region]);
  close();
}

void ChromeTrace::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (!began_[loc].empty()) began_[loc].pop_back();
  if (region >= region_names_.size()) return;
  open("E", loc, t);
  if (fold_.calls > 1 && fold_.region == region)
    fmt::format_to(std::back_inserter(buf_),
                   FMT_COMPILE(R"(,"args":{{"poll_calls":{},"poll_inside_ns":{}}})"), fold_.calls,
                   fold_.inside_ns);
  fold_ = archive::PollFold{};
  close();
  ++counts_.slices;
}

// ---- Peruse events: instants with their fields -----------------------------------------------

void ChromeTrace::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                         const archive::PeruseFields& f) {
  if (region >= region_names_.size()) return;
  open("i", loc, t);
  fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"(,"s":"t","name":{},"cat":"peruse")"),
                 region_names_[region]);
  if (f.request < kExactInJavaScript)
    fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"(,"args":{{"request":{})"), f.request);
  else
    fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"(,"args":{{"request":"{}")"), f.request);
  fmt::format_to(std::back_inserter(buf_),
                 FMT_COMPILE(R"(,"peer":{},"tag":{},"bytes":{},"operation":"{}")"), f.peer, f.tag,
                 f.bytes, f.operation == 0 ? "send" : "receive");
  if (f.comm < comm_names_.size()) {
    buf_ += R"(,"comm":)";
    buf_ += comm_names_[f.comm];
  }
  buf_ += '}';
  close();
  ++counts_.instants;
}

// ---- messages: flow arrows from the send's call to the receive's -----------------------------

std::int32_t ChromeTrace::world_rank(std::uint32_t comm, std::uint32_t peer,
                                     std::uint32_t self) const {
  return archive::world_rank(defs_, comm, peer, self);
}

bool ChromeTrace::other_job(std::uint32_t comm, std::uint32_t peer) const {
  return archive::other_job_member(defs_, comm, peer);
}

// "s" binds to the slice open on the sender's thread (the sending call); "f" with "bp":"e" to
// the one enclosing the receive record (the call that completed the receive).
std::uint64_t ChromeTrace::flow(bool start, std::uint32_t loc, std::uint64_t t, std::uint64_t id,
                                std::int32_t peer, std::uint32_t comm, std::uint32_t tag,
                                std::uint64_t bytes) {
  open(start ? "s" : "f", loc, t);
  fmt::format_to(std::back_inserter(buf_),
                 FMT_COMPILE(R"({},"name":"message","cat":"message","id":)"),
                 start ? "" : R"(,"bp":"e")");
  const std::uint64_t at = out_.bytes();
  if (id == kNoId)
    buf_.append(kIdRoom, ' ');
  else
    fmt::format_to(std::back_inserter(buf_), FMT_COMPILE("{}"), id);
  fmt::format_to(std::back_inserter(buf_), FMT_COMPILE(R"(,"args":{{"{}":{},"tag":{},"bytes":{})"),
                 start ? "to" : "from", peer, tag, bytes);
  if (comm < comm_names_.size()) {
    buf_ += R"(,"comm":)";
    buf_ += comm_names_[comm];
  }
  buf_ += '}';
  close();
  return at;
}

// A send and its receive meet in their channel (sender, receiver, communicator, tag) in order:
// whichever comes first waits there for the other, which takes its flow id.
void ChromeTrace::message(bool send, std::uint32_t loc, std::uint64_t t,
                          const archive::PointToPoint& p2p) {
  const auto rank = static_cast<std::int32_t>(tracks_[loc].rank);
  if (other_job(p2p.comm, p2p.peer)) {
    ++counts_.with_other_jobs;
    return;
  }
  const std::int32_t peer = world_rank(p2p.comm, p2p.peer, tracks_[loc].rank);
  const std::uint64_t time = send && !began_[loc].empty() ? began_[loc].back() : t;
  if (!owned(peer)) {
    const archive::MessageKey key{static_cast<std::uint32_t>(send ? rank : peer),
                                  static_cast<std::uint32_t>(send ? peer : rank), p2p.comm,
                                  p2p.tag};
    if (send) {
      archive::SendHalf h{};
      h.key = key;
      h.seq = remote_seq_[key]++;
      h.logical = t;
      h.began = time;
      h.bytes = p2p.bytes;
      h.loc = loc;
      h.tag = p2p.tag;
      h.flow = take_flow_id();
      remote_sends_.push_back(h);
      flow(true, loc, t, h.flow, peer, p2p.comm, p2p.tag, p2p.bytes);
    } else {
      const std::uint64_t at = flow(false, loc, t, kNoId, peer, p2p.comm, p2p.tag, p2p.bytes);
      RemoteChannel& ch = remote_[key];
      const HeldReceive r{t, at};
      const std::uint64_t seq = ch.next_receive++;
      if (auto half = ch.sends.find(seq); half != ch.sends.end()) {
        paired(half->second, r);
        ch.sends.erase(half);
      } else {
        ch.receives.emplace(seq, r);
      }
    }
    return;
  }
  Pending& p = pending_[{send ? rank : peer, send ? peer : rank, p2p.comm, p2p.tag}];
  auto& waiting = send ? p.receives : p.sends;
  std::uint64_t id;
  if (!waiting.empty()) {
    id = waiting.front().first;
    if ((send ? waiting.front().second : t) <= (send ? time : waiting.front().second))
      ++counts_.clock_breaks;
    waiting.pop_front();
    ++counts_.flows;
  } else {
    id = take_flow_id();
    (send ? p.sends : p.receives).emplace_back(id, time);
  }
  flow(send, loc, t, id, peer, p2p.comm, p2p.tag, p2p.bytes);
}

void ChromeTrace::paired(const archive::SendHalf& h, const HeldReceive& r) {
  if (r.t <= h.began) ++counts_.clock_breaks;
  out_.patch(r.offset, fmt::format("{}", h.flow));
  ++counts_.flows;
}

void ChromeTrace::pair_remote(const std::vector<archive::SendHalf>& sends) {
  for (const archive::SendHalf& h : sends) {
    RemoteChannel& ch = remote_[h.key];
    if (auto r = ch.receives.find(h.seq); r != ch.receives.end()) {
      paired(h, r->second);
      ch.receives.erase(r);
    } else {
      ch.sends.emplace(h.seq, h);
    }
  }
}

void ChromeTrace::finish_remote() {
  for (const auto& [key, ch] : remote_) {
    counts_.unmatched_sends += ch.sends.size();
    for (const auto& [seq, r] : ch.receives) {
      out_.patch(r.offset, fmt::format("{}", take_flow_id()));
      ++counts_.unmatched_receives;
    }
  }
  remote_.clear();
}

// ---- metrics: counter tracks ---------------------------------------------------------------

// Counters belong to a process in this format: a thread's own counter carries the thread in its
// name. Metrics written as changes (MPI_T counters and timers) are shown as their running total.
// A counter track is a step curve, so only values that differ from the last one are written: the
// archive writes the three Peruse counters together whenever one of them changes.
void ChromeTrace::counter(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value) {
  if (metric >= metric_names_.size()) return;
  const archive::MetricDef& m = defs_.metrics[metric];
  if (m.mode == archive::MetricMode::Delta) {
    std::vector<double>& totals = totals_[loc];
    if (totals.empty()) totals.assign(defs_.metrics.size(), 0.0);
    value = totals[metric] += value;
  }
  std::vector<double>& shown = shown_[loc];
  if (shown.empty()) shown.assign(defs_.metrics.size(), std::nan(""));
  if (shown[metric] == value) return;
  shown[metric] = value;
  open("C", loc, t);
  const Track& track = tracks_[loc];
  if (track.thread == 0) {
    buf_ += R"(,"name":)";
    buf_ += metric_names_[metric];
  } else {
    fmt::format_to(std::back_inserter(buf_), R"(,"name":{},"args":{{{}:)",
                   archive::json_string(fmt::format("{} (thread {})", m.name, track.thread)),
                   archive::json_string(m.unit.empty() ? "value" : m.unit));
  }
  if (!std::isfinite(value))
    buf_ += '0';
  else if (m.type == archive::MetricType::Double)
    fmt::format_to(std::back_inserter(buf_), FMT_COMPILE("{}"), value);
  else
    fmt::format_to(std::back_inserter(buf_), FMT_COMPILE("{}"), std::llround(value));
  buf_ += '}';
  close();
  ++counts_.counter_values;
}

void ChromeTrace::metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                         std::int64_t value) {
  counter(loc, t, metric, static_cast<double>(value));
}

void ChromeTrace::real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                              double value) {
  counter(loc, t, metric, value);
}

// ---- MPI-IO and one-sided operations: async slices from start to completion ----------------

// An operation may complete in another call than the one that started it (nonblocking and split
// collective I/O; puts and gets completed by a fence, an unlock, a flush or a Wait), even on
// another thread: an async slice of the rank spans exactly that. Their ids have a namespace of
// their own per category, apart from the messages' flow ids.
void ChromeTrace::begin_operation(std::map<OperationKey, OpenOperation>& open_ops, const char* cat,
                                  const char* name, std::uint32_t loc, std::uint64_t t,
                                  std::uint64_t matching) {
  const std::uint64_t id = next_operation_;
  next_operation_ += id_step_;
  open_ops[{tracks_[loc].rank, matching}] = {id, name};
  open("b", loc, t);
  fmt::format_to(std::back_inserter(buf_), R"(,"name":"{}","cat":"{}","id":{})", name, cat, id);
}

bool ChromeTrace::end_operation(std::map<OperationKey, OpenOperation>& open_ops, const char* cat,
                                std::uint32_t loc, std::uint64_t t, std::uint64_t matching) {
  const auto it = open_ops.find({tracks_[loc].rank, matching});
  if (it == open_ops.end()) return false;
  open("e", loc, t);
  fmt::format_to(std::back_inserter(buf_), R"(,"name":"{}","cat":"{}","id":{})", it->second.name,
                 cat, it->second.id);
  open_ops.erase(it);
  return true;
}

void ChromeTrace::io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                           const archive::IoBegin& op) {
  const char* name = op.mode == archive::IoMode::Read    ? "MPI-IO read"
                     : op.mode == archive::IoMode::Write ? "MPI-IO write"
                                                         : "MPI-IO sync";
  begin_operation(io_open_, "io", name, loc, t, op.matching);
  buf_ += R"(,"args":{"file":)";
  buf_ += archive::json_string(handle < defs_.io_handles.size() ? defs_.io_handles[handle].name
                                                                : std::string());
  if (op.bytes != archive::kUnknownSize)
    fmt::format_to(std::back_inserter(buf_), R"(,"requested":{})", op.bytes);
  fmt::format_to(std::back_inserter(buf_), R"(,"collective":{},"nonblocking":{}}})",
                 (op.flags & archive::kIoCollective) != 0,
                 (op.flags & archive::kIoNonBlocking) != 0);
  close();
  ++counts_.io_operations;
}

void ChromeTrace::io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t,
                              const archive::IoComplete& done) {
  const auto bytes = done.bytes;
  const auto matching = done.matching;
  if (!end_operation(io_open_, "io", loc, t, matching)) return;
  if (bytes != archive::kUnknownSize)
    fmt::format_to(std::back_inserter(buf_), R"(,"args":{{"bytes":{}}})", bytes);
  close();
}

void ChromeTrace::rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) {
  using Kind = archive::RmaEventKind;
  if (e.kind == Kind::Put || e.kind == Kind::Get || e.kind == Kind::Atomic) {
    const char* name = e.kind == Kind::Put   ? "RMA put"
                       : e.kind == Kind::Get ? "RMA get"
                                             : "RMA atomic";
    begin_operation(rma_open_, "rma", name, loc, t, e.matching);
    const bool known = e.window < defs_.windows.size();
    const std::uint32_t comm = known ? defs_.windows[e.window].comm : archive::kNoComm;
    buf_ += R"(,"args":{"window":)";
    buf_ += archive::json_string(known ? defs_.windows[e.window].name : std::string());
    fmt::format_to(std::back_inserter(buf_), R"(,"target":{},"sent":{},"received":{}}})",
                   world_rank(comm, e.target, tracks_[loc].rank), e.sent, e.received);
    close();
    ++counts_.rma_operations;
  } else if (e.kind == Kind::CompleteBlocking || e.kind == Kind::CompleteNonBlocking) {
    // Local completion ends the slice: the origin's buffer is free again. The remote completion
    // (the data at the target) adds no event.
    if (end_operation(rma_open_, "rma", loc, t, e.matching)) close();
  }
}

// ---- samples: the sampled MPI state as a counter track per thread ------------------------------

void ChromeTrace::sample(std::uint32_t loc, std::uint64_t t, const archive::Sample& s) {
  const int state = s.state <= 2 ? s.state : -1;
  if (state_shown_[loc] == state) return;
  state_shown_[loc] = state;
  open("C", loc, t);
  const Track& track = tracks_[loc];
  const std::string name = track.thread == 0
                               ? std::string("MPI state (sampled)")
                               : fmt::format("MPI state (sampled, thread {})", track.thread);
  fmt::format_to(std::back_inserter(buf_),
                 R"(,"name":{},"args":{{"0 outside MPI, 1 MPI work, 2 MPI stall":{}}}}})",
                 archive::json_string(name), state);
  out_.flush_if_full();
  ++counts_.state_changes;
}

}  // namespace perusetrace::exporter
