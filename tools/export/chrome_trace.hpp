// Chrome's trace-event JSON ("JSON Object Format") written from the archive's events, one event
// per line in the archive's time order (`perusetrace export --perfetto`, perfetto.hpp). Every
// event is written as soon as it is read: MPI calls as B/E pairs rather than X events (whose
// duration would hold back every event nested in the call), so memory holds only the messages
// whose other end has not been read yet.
//
// In a parallel export (share()) each analysis rank writes its share's events, arrow ends
// included; the id of an arrow whose send another rank exports comes with the send's half
// (reader/message_halves.hpp) and is filled into the receive's end (pair_remote).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/message_channel.hpp"
#include "reader/message_matcher.hpp"
#include "tools/export/output_stream.hpp"

namespace perusetrace::exporter {

using archive::Definitions;

class ChromeTrace : public archive::EventSink {
 public:
  struct Counts {
    std::uint64_t slices = 0, instants = 0, flows = 0, counter_values = 0;
    std::uint64_t io_operations = 0, rma_operations = 0, state_changes = 0;
    std::uint64_t unfinished_operations = 0;  // begun, never completed in the trace
    std::uint64_t unmatched_sends = 0, unmatched_receives = 0;
    // Messages received no later than their send's call began: with ranks on several clocks,
    // what the clock repair moves (reader/clock_repair.hpp).
    std::uint64_t clock_breaks = 0;
    // With processes of other MPI jobs (MPI_Comm_spawn): their other half is in those jobs' own
    // archives, so they get no arrow.
    std::uint64_t with_other_jobs = 0;
  };

  ChromeTrace(const Definitions& defs, OutputStream& out);

  // The opening and the metadata events (process and thread names, sort order).
  void start();
  // The closing, with the run's description in "otherData": finish_events(), then end().
  void finish(const std::string& archive) {
    finish_events();
    end(archive);
  }
  // Counts what never found its other end.
  void finish_events();
  // The closing alone: after the events of every part (a parallel export's rank 0).
  void end(const std::string& archive);

  // A parallel export: this process writes the events of the world ranks `owned` says, and
  // numbers its flows and operations rank + 1, then every parts-th, so that no two processes
  // use an id twice. Every arrow end is written where it lies in its thread's events. A send
  // to a rank not owned takes an id and leaves its half (take_remote_sends) for the process
  // that writes the receive; a receive from such a rank is written with room for the id
  // (kIdRoom spaces), filled in (OutputStream::patch) once its send's half is here.
  void share(std::vector<bool> owned, unsigned rank, unsigned parts);
  // The halves made since the last call.
  std::vector<archive::SendHalf> take_remote_sends() { return std::exchange(remote_sends_, {}); }
  // Halves of sends to this process's ranks, in any order and batches, before or after their
  // receives: the n-th send of a channel gives its id to the n-th receive as soon as both are
  // here. Only what waits for its other half is held.
  void pair_remote(const std::vector<archive::SendHalf>& sends);
  // After the last halves: a receive whose send never came gets an id of its own (half an
  // arrow, as in one process); both kinds are counted unmatched.
  void finish_remote();
  static constexpr std::size_t kIdRoom = 20;  // digits of the largest 64-bit id
  const Counts& counts() const { return counts_; }

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t, std::uint64_t, const archive::PollFold& f) override {
    fold_ = f;
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    if (e.kind == archive::P2pKind::Send || e.kind == archive::P2pKind::Recv)
      message(e.kind == archive::P2pKind::Send, loc, t, e);
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override;
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value) override;
  void sample(std::uint32_t loc, std::uint64_t t, const archive::Sample& s) override;
  void rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) override;
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const archive::IoBegin& op) override;
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const archive::IoComplete& done) override;

 private:
  archive::PollFold fold_;  // for the leave() right after it: the slice's args
  struct Track {
    std::uint32_t rank = 0, thread = 0;
    std::string ids;  // "pid":P,"tid":T
  };
  // A channel's messages whose other end was not read yet: their flow ids, in matching order.
  // Normally sends wait for their receive; a receive waits only where hosts' clocks disagree.
  // Each with its time: when a send's call began, when a receive completed.
  struct Pending {
    std::deque<std::pair<std::uint64_t, std::uint64_t>> sends, receives;  // flow id, time
  };
  struct HeldReceive {
    std::uint64_t t, offset;  // where its id goes
  };
  // A channel from a rank exported elsewhere: by place in the channel, each until the other.
  struct RemoteChannel {
    std::uint64_t next_receive = 0;
    std::map<std::uint64_t, HeldReceive> receives;
    std::map<std::uint64_t, archive::SendHalf> sends;
  };
  void paired(const archive::SendHalf& h, const HeldReceive& r);
  std::uint64_t take_flow_id() {
    const std::uint64_t id = next_flow_;
    next_flow_ += id_step_;
    return id;
  }
  bool owned(std::int32_t rank) const {
    return owned_.empty() || rank < 0 || static_cast<std::size_t>(rank) >= owned_.size() ||
           owned_[static_cast<std::size_t>(rank)];
  }

  // Starts an event: separator, phase, time and track. The caller adds the rest and the '}'.
  void open(const char* phase, std::uint32_t loc, std::uint64_t t);
  void close() {
    buf_ += '}';
    out_.flush_if_full();
  }
  void counter(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value);
  std::int32_t world_rank(std::uint32_t comm, std::uint32_t peer, std::uint32_t self) const;
  // Whether `peer` of `comm` is a process of another MPI job (archive::CommDef::job).
  bool other_job(std::uint32_t comm, std::uint32_t peer) const;
  void message(bool send, std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p);
  // `id` kNoId: room for it, at the offset returned.
  std::uint64_t flow(bool start, std::uint32_t loc, std::uint64_t t, std::uint64_t id,
                     std::int32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes);
  static constexpr std::uint64_t kNoId = ~std::uint64_t{0};
  // An operation's async slice: "b" opens it (the caller adds "args" and the '}'), "e" ends it.
  // A rank's operations are keyed by their matching id (one namespace for I/O, one for RMA).
  struct OpenOperation {
    std::uint64_t id;
    const char* name;
  };
  using OperationKey = std::pair<std::uint32_t, std::uint64_t>;  // rank, matching id
  void begin_operation(std::map<OperationKey, OpenOperation>& open_ops, const char* cat,
                       const char* name, std::uint32_t loc, std::uint64_t t,
                       std::uint64_t matching);
  bool end_operation(std::map<OperationKey, OpenOperation>& open_ops, const char* cat,
                     std::uint32_t loc, std::uint64_t t, std::uint64_t matching);

  const Definitions& defs_;
  OutputStream& out_;
  std::string& buf_;
  bool first_ = true;
  std::vector<Track> tracks_;
  std::vector<std::string> region_names_;  // quoted
  std::vector<const char*> region_categories_;
  std::vector<std::string> comm_names_;      // quoted
  std::vector<std::string> metric_names_;    // quoted, with the series: "NAME","args":{"UNIT":
  std::vector<std::vector<double>> totals_;  // [loc][metric]: running sums of delta metrics
  std::vector<std::vector<double>> shown_;   // [loc][metric]: the value last written, NaN first
  std::unordered_map<archive::MessageChannel, Pending, archive::MessageChannelHash> pending_;
  std::uint64_t next_flow_ = 1, id_step_ = 1;
  std::vector<std::vector<std::uint64_t>> began_;  // [loc]: when each open region began
  std::vector<bool> owned_;                        // by world rank; empty: every rank
  std::unordered_map<archive::MessageKey, std::uint64_t, archive::MessageKeyHash> remote_seq_;
  std::unordered_map<archive::MessageKey, RemoteChannel, archive::MessageKeyHash> remote_;
  std::vector<archive::SendHalf> remote_sends_;
  std::map<OperationKey, OpenOperation> io_open_, rma_open_;
  std::uint64_t next_operation_ = 1;
  std::vector<int> state_shown_;  // [loc]: the MPI state last written, -2 before the first
  Counts counts_;
};

}  // namespace perusetrace::exporter
