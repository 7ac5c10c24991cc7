// Wait states (wait_state_data.hpp) found in one pass over the events in time order, after the
// clocks are repaired: every receive is seen after its send was entered, so a message is
// matched when its receive completes. Each location keeps a bounded history of what it did
// (outside MPI in a region, or in an outermost MPI call), on which the waits are charged and
// from which causes and the critical path are read.
#pragma once

#include <cstdint>
#include <deque>
#include <array>
#include <map>
#include <tuple>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/case_listener.hpp"
#include "analysis/wait_state_data.hpp"
#include "reader/archive_reader.hpp"
#include "reader/message_key.hpp"

namespace perusetrace::report {

class WaitStateAnalysis : public archive::EventSink {
 public:
  // `history`: segments kept per location for causes and the critical path (older ones are
  // dropped; waits reaching past them get no cause).
  WaitStateAnalysis(const archive::Definitions& defs, WaitStates& out,
                    std::size_t history = std::size_t{1} << 18);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t loc, std::uint64_t t, const archive::PollFold& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    archive::split_point_to_point(*this, loc, t, e);
  }
  void send(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p);
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void recv(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p);
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void collective(std::uint32_t loc, std::uint64_t t, const archive::Collective& c) override;
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) override;
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;

  // Told of each wait as it is charged.
  void listen(CaseListener& listener) { listener_ = &listener; }

  // `end`: the trace's length. Walks the critical path and totals the ranks.
  void finish(std::uint64_t end);

 private:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // What a location did from `start` to `end`: outside MPI in region `label`, or in the
  // outermost MPI call `function` (a region) made inside region `label`.
  struct Segment {
    std::uint64_t start = 0, end = kNever;
    std::uint32_t label = 0;
    std::uint32_t function = kNone;  // kNone: outside MPI
    std::uint64_t claimed = 0;       // waiting charged, from `start` on
    std::uint64_t completion = 0;    // collective completion charged (at the call's end)
    // A run of calls of a request loop that completed nothing, merged: the time between them,
    // outside MPI, which no wait may be charged with.
    std::uint64_t gaps = 0;
    // The tracer's own work inside the call (its buffer flushes): no process waited then.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> tracer;
    // The waiting's root causes (cause ids) and the ns of it each caused.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> causes;
    // The largest wait's late partner: where the critical path goes on.
    std::uint32_t late_loc = kNone;
    std::uint64_t late_time = 0;
  };
  // The receive a location's running call made, waiting for a late sender; charged at the
  // call's end, when the messages it received are all known (wrong order).
  struct Pending {
    bool any = false;
    std::uint64_t until = 0;
    std::uint32_t late_loc = kNone;
    WaitCase c;
  };
  // A progress stall found during the running call, charged when it ends (after the waits its
  // messages' matching charges, which begin earlier in the call).
  struct Stall {
    std::uint64_t from = 0, to = 0;
    std::uint32_t late_loc = kNone;
    WaitCase c;
  };
  struct Location {
    std::uint32_t rank = 0;
    std::deque<Segment> history;
    std::uint64_t base = 0;              // sequence number of history.front()
    std::uint32_t depth = 0;             // MPI calls open
    std::vector<std::uint32_t> regions;  // open regions outside MPI, innermost last
    bool busy = false;               // the running call made or completed a message or collective
    std::uint64_t tracer_since = 0;  // the running call's tracer region began
    // When the location's previous receive completed: a probe loop after it waits for the next.
    std::uint64_t last_received = 0;
    // The program's messages in the rank's unexpected queue when the running call began.
    std::int64_t unexpected_at_entry = 0;
    Pending pending;
    std::vector<Stall> stalls;
    // The collective instances the running call belongs to (instances_' keys): several for a
    // Waitall completing nonblocking collectives.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> instances;
  };
  struct Message {
    std::uint32_t send_loc = 0;
    std::uint64_t send_enter = 0, send_seq = 0;
    bool blocking = true;
    std::uint32_t to = 0;  // world rank
    // The receive: when it was posted (kNever until matched), on which location.
    std::uint64_t recv_post = kNever;
    std::uint32_t recv_loc = kNone;
    std::uint64_t complete_seq = kNever;  // nonblocking: the call that completed the send
    std::uint64_t bytes = 0;
    std::int32_t tag = 0;
  };
  struct Member {
    std::uint32_t loc = 0, rank = 0;
    std::uint32_t index = 0;  // in the communicator
    std::uint64_t start = 0;  // the (starting) call's entry
    std::uint64_t seq = 0;    // the call that completed it
    std::uint64_t leave = kNever;
    bool left = false;
  };
  struct Instance {
    std::string function;  // the blocking form: MPI_Allreduce for MPI_Iallreduce
    bool nonblocking = false;
    std::int32_t root = -1;  // world rank
    std::uint32_t size = 0, left = 0;
    std::vector<Member> members;
  };
  using Key = archive::MessageKey;
  using KeyHash = archive::MessageKeyHash;

  Segment* segment(std::uint32_t loc, std::uint64_t seq);
  std::uint64_t current(std::uint32_t loc) const;  // the running call's sequence number
  void open_segment(Location& l, std::uint64_t t, std::uint32_t function);
  void trim(Location& l);
  std::uint32_t label_of(const Location& l);
  std::uint32_t intern(const std::string& s);
  std::uint32_t cause_id(std::uint32_t rank, std::uint32_t label);
  static std::uint64_t rank_key(std::uint32_t rank, std::uint64_t request) {
    return (static_cast<std::uint64_t>(rank) << 48) ^ request;
  }

  // Charges `seg` (on `loc`) as waiting from its start until `until` (start-anchored: what an
  // earlier claim on it charged already is not charged again), because `late_loc` came late.
  void charge(std::uint32_t loc, Segment& seg, std::uint64_t until, std::uint32_t late_loc,
              WaitCase c);
  // Adds `ns` of `seg`'s waiting, from `from` to `to`, to the pattern and finds its causes.
  void account(std::uint32_t loc, Segment& seg, std::uint64_t from, std::uint64_t to,
               std::uint32_t late_loc, WaitCase c);
  void blame(std::uint32_t late_loc, std::uint64_t from, std::uint64_t to, double scale,
             Segment& waiter, WaitCase& c);
  void merge_poll(Location& l);
  void add_activity(const Location& l, const Segment& s);
  void late_receiver(Message& m);
  void charge_polls(std::uint32_t loc, std::uint64_t from, std::uint64_t until,
                    std::uint32_t late_loc, const WaitCase& c);
  void settle_pending(std::uint32_t loc);
  // The running call of `loc` joins its instance of a synchronisation over `comm`, numbered in
  // `next` (one counter per member).
  void join(std::uint32_t loc, std::uint32_t comm, std::uint64_t start, std::uint32_t function,
            std::uint32_t root, std::vector<std::vector<std::uint64_t>>& next, std::uint64_t space,
            bool nonblocking);
  // General active target synchronisation (post/start/complete/wait): the k-th epoch of an origin
  // on a target of a window, as each side's calls fill it in.
  struct Epoch {
    std::uint32_t origin_loc = kNone, target_loc = kNone;
    std::uint64_t start_seq = kNever, complete_seq = kNever, wait_seq = kNever;
    std::uint64_t post_enter = kNever, complete_enter = kNever;
    bool late_post_done = false, early_wait_done = false;
  };
  enum class EpochField : std::uint8_t { Start, Post, Complete, Wait };
  struct Epochs {
    std::deque<Epoch> open;
    std::uint64_t base = 0;
    std::array<std::uint64_t, 4> next{};  // by EpochField: the next epoch it fills
  };
  // A lock of a window's target: asked for in `lock_seq`, released at `release`.
  struct Hold {
    std::uint32_t loc = 0;
    std::uint64_t lock_seq = kNever;
    std::uint64_t requested = 0, release = kNever;
    bool exclusive = false;
  };
  // Progress stalls (progress_stalls.cpp): a request's transfer events, and the stretch in which
  // the rank `peer` made no MPI call that progresses messages, within [from, until]: when one
  // began at or after `from` and ended by `until`, its start, its end (the entry that let the
  // transfer go on) and the location that entered.
  enum class Transfer : std::uint8_t { None, Begin, Continue, End, Activate, Complete };
  void transfer_event(std::uint32_t loc, std::uint64_t t, Transfer e,
                      const archive::PeruseFields& f);
  // When `rank` posted the earliest receive that a message from world rank `sender` with `tag`
  // on `comm` matches and that it had not finished by `after`; kNever if none.
  std::uint64_t receive_posted(std::uint32_t rank, std::uint32_t sender, std::int32_t tag,
                               std::uint32_t comm, std::uint64_t after) const;
  bool without_progress(std::uint32_t peer, std::uint64_t from, std::uint64_t until,
                        std::uint64_t& start, std::uint64_t& end, std::uint32_t& entered) const;
  void settle_stalls(std::uint32_t loc);
  void lock_event(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e);
  void epoch_event(std::uint32_t loc, const archive::RmaEvent& e, EpochField field);
  void settle_epoch(Epoch& ep);
  void member_left(const std::pair<std::uint32_t, std::uint64_t>& key, std::uint32_t loc,
                   std::uint64_t t);
  void evaluate(Instance& in);
  void critical_path(std::uint64_t end);

  const archive::Definitions& defs_;
  WaitStates& out_;
  std::size_t history_;
  std::vector<Location> locations_;
  std::vector<std::uint8_t> poll_;  // by region: MPI_Test*, MPI_Wait*, probes (a request loop)
  std::vector<std::uint32_t> region_label_;  // by region: its name's label id
  std::vector<std::string> labels_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  std::uint32_t outside_label_ = 0;                              // "compute outside any region"
  std::vector<std::pair<std::uint32_t, std::uint32_t>> causes_;  // id -> (rank, label)
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> cause_ids_;

  std::unordered_map<std::uint64_t, Message> messages_;  // by id
  std::uint64_t next_message_ = 1;
  std::unordered_map<Key, std::deque<std::uint64_t>, KeyHash> unmatched_;  // by key, in order
  std::unordered_map<std::uint64_t, std::uint64_t> send_requests_;  // (rank, request) -> message
  std::unordered_map<std::uint64_t, std::uint64_t> recv_posts_;     // (rank, request) -> posting
  std::vector<std::multiset<std::uint64_t>> in_flight_;             // by receiver: sends' entries
  // With Peruse's unexpected-queue events: the program's messages (tags from 0) that arrived
  // and wait in each rank's unexpected queue, which tell "arrived first" better than send times.
  enum class QueueEvent : std::uint8_t { None, Insert, Remove };
  std::vector<QueueEvent> queue_event_;                     // by region
  bool unexpected_known_ = false;                           // both events are in the archive
  std::vector<std::int64_t> unexpected_;                    // by rank
  std::vector<Transfer> transfer_;                          // by region: a transfer event
  std::vector<std::uint8_t> progresses_;                    // by region: archive::makes_progress
  std::vector<std::vector<std::uint32_t>> rank_locations_;  // by world rank
  // (rank, request) -> its latest transfer event's time, while the transfer runs.
  std::unordered_map<std::uint64_t, std::uint64_t> transfer_at_;
  // The receives each rank has posted and not finished (REQ_ACTIVATE to REQ_XFER_END or
  // REQ_COMPLETE), by request, and the last few it finished: a receive that pulls its message
  // (Open MPI 5's single copy) finishes before its sender hears of it.
  struct Posting {
    std::int32_t peer = -1, tag = -1;
    std::uint32_t comm = 0;
    std::uint64_t since = 0, until = kNever;
  };
  std::vector<std::unordered_map<std::uint64_t, Posting>> receives_open_;
  std::vector<std::deque<Posting>> receives_done_;

  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>>
      nb_starts_;  // (rank, request) -> (start call's entry, its region)
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_;  // (comm, number)
  std::vector<std::vector<std::uint64_t>> next_instance_;  // [comm][member]: blocking ones
  std::vector<std::vector<std::uint64_t>> next_nb_instance_;
  std::vector<std::vector<std::uint64_t>> next_fence_;
  // (window, origin rank, target rank) -> its epochs
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, Epochs> epochs_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<Hold>> locks_;  // (window, target)
  std::map<std::uint32_t, std::vector<std::uint64_t>> activity_ns_;  // label -> ns by rank
  CaseListener* listener_ = nullptr;
};

}  // namespace perusetrace::report
