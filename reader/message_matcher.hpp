// Point-to-point messages, each send paired with its receive, for the tools that draw them (the
// Paraver converter's communication records, the HTML timeline's message lines).
//
// A sender's MpiSend/MpiIsend is matched with the receiver's MpiRecv/MpiIrecv in order per
// (sender, receiver, communicator, tag). Logical times come from those records; physical ones
// from Peruse: REQ_XFER_BEGIN on the sender, REQ_XFER_END on the receiver, falling back to the
// logical times when those events were not recorded. Peruse events find their PMPI record
// through the request id they share (MpiIsend, MpiIrecvRequest, MpiIrecv); blocking calls
// carry no id, so for them the Peruse events between the call's Enter and Leave on that
// thread are used. A send is kept only until it is matched and handed on.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/message_key.hpp"

namespace perusetrace::archive {

// A message: where (locations) and when it was sent and received, logically (the MPI records)
// and physically (Peruse's transfer events, or the logical times where those are missing).
struct MatchedMessage {
  std::uint32_t send_loc, recv_loc;
  std::uint64_t send_logical, send_physical, recv_logical, recv_physical;
  std::uint64_t bytes;
  std::uint32_t tag;
};

// The sender's half of a message whose receiver another process reads (a parallel conversion,
// MessageMatcher::share): shipped to that process, which pairs it with its receive
// (pair_remote). Fixed size and trivially copyable: it travels as bytes between processes of one
// build.
struct SendHalf {
  MessageKey key;
  std::uint64_t seq;  // its place among the sends of its channel (key), from 0
  std::uint64_t logical, physical, bytes;
  std::uint64_t began;  // when the send's call began
  std::uint32_t loc, tag;
  std::uint32_t has_physical;
  std::uint32_t unused = 0;
  std::uint64_t flow = 0;  // the Perfetto export's arrow id, written by the sender's rank
};

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  virtual void message(const MatchedMessage& m) = 0;
};

class MessageMatcher {
 public:
  MessageMatcher(const Definitions& defs, MessageSink& out);

  // The thread enters its outermost MPI call / leaves it.
  void call_enter(std::uint32_t loc);
  void call_leave(std::uint32_t loc);

  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t peruse_index,
              const PeruseFields& f);
  // `began`: when the innermost region open at a send began (the send's call; the clock
  // condition compares receives with it), ~0 for `t`.
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e,
                      std::uint64_t began = ~std::uint64_t{0});

  // Writes what waits for a sender's completion; counts what never found a partner.
  void finish();

  // A parallel conversion: this process reads the world ranks `owned` says (by world rank; a
  // rank past its end counts as owned). A send to a rank it does not read becomes a SendHalf
  // (take_remote_sends) once its physical time is known or it completed, as a local one is
  // written then; a receive from such a rank waits, in channel order, for its half.
  void share(std::vector<bool> owned);
  // The halves of sends to ranks read elsewhere, made since the last call (finish() adds the
  // rest).
  std::vector<SendHalf> take_remote_sends() { return std::exchange(remote_sends_, {}); }
  // Halves of sends to this process's ranks, from the processes that read their senders, in
  // any order and batches, before or after their receives: the n-th send of a channel is
  // written with its n-th receive as soon as both are here. Only what waits for its other
  // half is held.
  void pair_remote(const std::vector<SendHalf>& sends);
  // After the last halves: counts what is still waiting as unmatched.
  void finish_remote();
  // Messages whose receive is not after the send's call began: with ranks on several clocks,
  // what the controlled logical clock repairs (clock_repair.hpp).
  std::uint64_t clock_breaks() const { return clock_breaks_; }

  std::uint64_t matched() const { return matched_; }
  std::uint64_t unmatched_sends() const { return unmatched_sends_; }
  std::uint64_t unmatched_recvs() const { return unmatched_recvs_; }
  // Sends to and receives from processes of other MPI jobs (MPI_Comm_spawn): their partners are
  // in those jobs' own archives, so they have no communication record here.
  std::uint64_t with_other_jobs() const { return with_other_jobs_; }
  // Sends whose REQ_XFER_BEGIN came after their receive's REQ_XFER_END (written with the
  // logical send as the physical one).
  std::uint64_t late_physical_sends() const { return late_physical_sends_; }
  std::size_t pending() const { return sends_.size(); }
  // The earliest logical time of a send not yet written as a message (~0: none): every message
  // still to come is sent at or after it, or after the events still to be read.
  std::uint64_t earliest_pending_send() const;

 private:
  void send(std::uint32_t loc, std::uint64_t t, const PointToPoint& e, std::uint64_t began);
  void send_complete(std::uint32_t loc, std::uint64_t request);
  void recv_request(std::uint32_t loc, std::uint64_t request);
  void recv(std::uint32_t loc, std::uint64_t t, const PointToPoint& e);
  void cancelled(std::uint32_t loc, std::uint64_t request);

  using Key = MessageKey;
  using KeyHash = MessageKeyHash;
  struct Recv {
    std::uint32_t loc;
    std::uint64_t logical;
    std::optional<std::uint64_t> physical;
  };
  struct Send {
    std::uint32_t loc;
    std::uint64_t logical;
    std::optional<std::uint64_t> physical;
    std::uint64_t bytes;
    std::uint32_t tag;
    bool complete = false;
    std::optional<Recv> partner;  // matched, waiting for the physical send time
    std::uint64_t began = 0;
    bool remote = false;  // its receiver is read elsewhere: shipped, never matched here
    MessageKey key{};
    std::uint64_t seq = 0;
  };
  struct RankRequest {
    std::uint32_t rank;
    std::uint64_t request;
    bool operator==(const RankRequest&) const = default;
  };
  struct RankRequestHash {
    std::size_t operator()(const RankRequest& r) const {
      return static_cast<std::size_t>((r.request * 0x9E3779B97F4A7C15ull) ^ r.rank);
    }
  };
  // A Peruse event seen inside the thread's current MPI call.
  struct Seen {
    std::uint64_t request;
    std::uint64_t time;
    std::uint32_t kind;  // kActivate, kXferBegin, kXferEnd
    std::int32_t tag;
    std::uint8_t operation;
  };
  struct Thread {
    bool in_call = false;
    std::vector<Seen> seen;
    std::optional<std::uint64_t> blocking_send;  // send id of the running blocking send
    std::uint64_t blocking_send_request = 0;
  };

  std::uint32_t world(std::uint32_t loc, std::uint32_t comm, std::uint32_t peer) const;
  void set_physical_send(std::uint64_t id, std::uint64_t t);
  void complete(std::uint64_t id);
  void emit(const Send& s, const Recv& r);
  bool owned(std::uint32_t rank) const { return rank >= owned_.size() || owned_[rank]; }
  // Ships a remote send once it is what a local one is when written.
  void ship(std::unordered_map<std::uint64_t, Send>::iterator it);
  void match(const Key& key, std::uint64_t send_id);  // a new send
  void match(const Key& key, const Recv& r);          // a new receive
  template <class Map>
  void sweep(Map& waiting, std::size_t& sweep_at);
  static constexpr std::size_t kFirstSweep = 1024;

  const Definitions& defs_;
  MessageSink& out_;
  std::vector<std::uint32_t> kind_of_peruse_;  // by peruse index: kActivate... or kOther
  std::vector<Thread> threads_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Send> sends_;
  std::unordered_map<Key, std::deque<std::uint64_t>, KeyHash> waiting_sends_;
  std::unordered_map<Key, std::deque<Recv>, KeyHash> waiting_recvs_;
  std::size_t sends_sweep_at_ = kFirstSweep, recvs_sweep_at_ = kFirstSweep;
  std::unordered_map<RankRequest, std::uint64_t, RankRequestHash> send_by_request_;
  std::unordered_map<RankRequest, std::optional<std::uint64_t>, RankRequestHash>
      recv_by_request_;  // posted receive -> its physical receive time, once seen
  std::uint64_t matched_ = 0, unmatched_sends_ = 0, unmatched_recvs_ = 0, late_physical_sends_ = 0;
  std::uint64_t with_other_jobs_ = 0;
  std::uint64_t clock_breaks_ = 0;
  std::vector<bool> owned_;  // empty: every rank is read here
  std::unordered_map<Key, std::uint64_t, KeyHash> remote_send_seq_;
  // A channel from a rank read elsewhere: its receives and the halves of its sends, by their
  // place in the channel, each until the other comes.
  struct RemoteChannel {
    std::uint64_t next_recv = 0;
    std::map<std::uint64_t, Recv> recvs;
    std::map<std::uint64_t, SendHalf> sends;
  };
  std::unordered_map<Key, RemoteChannel, KeyHash> remote_channels_;
  void emit_half(const SendHalf& h, const Recv& r);
  std::vector<SendHalf> remote_sends_;
};

}  // namespace perusetrace::archive
