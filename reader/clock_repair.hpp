// A controlled logical clock (after Scalasca's), forward only, for the tools' view of an archive.
//
// The writer puts every rank on rank 0's clock with offsets measured per host; where two hosts'
// clocks still disagree by more than those measurements could tell, a message can appear
// received before it was sent. The first pass (ClockRepair as an EventSink) replays the
// messages in causal order: a receive earlier than its send moves, with every later event of
// its location, just after the send began; the intervals between a location's events after the
// move stay as they were. The second pass (RepairedSink) hands the events on with those times.
// Traces whose ranks all read one clock cannot break the condition and need no first pass.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/message_channel.hpp"

namespace perusetrace::archive {

// How many clocks the archive's ranks read (the PERUSETRACE::CLOCK_DOMAINS property; 1 when an
// archive does not say).
std::size_t clock_domains(const Definitions& defs);

class ClockRepair : public EventSink {
 public:
  explicit ClockRepair(const Definitions& defs);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override;

  // After the last event: receives whose send never came are left where they are.
  void finish();

  std::uint64_t messages() const { return messages_; }  // sends matched with their receive
  // In the archive's times: receives before their send began, the largest gap and its pair.
  std::uint64_t backwards() const { return backwards_; }
  std::uint64_t worst_gap() const { return worst_gap_; }
  std::int32_t worst_sender() const { return worst_sender_; }
  std::int32_t worst_receiver() const { return worst_receiver_; }
  // Receives moved after their send (fewer than the backwards ones: a move carries the later
  // receives of the location along), and the largest move, ns.
  std::uint64_t repaired() const { return repaired_; }
  std::uint64_t max_shift() const { return max_shift_; }

  // (time, shift from then on) of each location, in time order.
  using Shifts = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  const std::vector<Shifts>& shifts() const { return shifts_; }

 private:
  struct Item {
    std::uint64_t time;  // a send's: when its call began; a receive's: its record's
    std::uint32_t channel;
    bool receive;
  };
  struct Sent {
    std::uint64_t original, repaired;  // when the send began
  };
  struct Channel {
    std::deque<Sent> sends;              // sends not yet received
    std::vector<std::uint32_t> blocked;  // locations waiting for a send here
    std::int32_t from, to;
  };
  struct Location {
    std::vector<std::uint64_t> calls;  // start times of the open regions
    std::deque<Item> pending;          // in order; the first waits when `waiting`
    std::uint64_t shift = 0;
    bool waiting = false;
  };
  std::int32_t world(std::uint32_t loc, std::uint32_t comm, std::uint32_t peer) const;
  std::uint32_t channel(const MessageChannel& key);
  void add(std::uint32_t loc, const Item& item);
  void run(std::uint32_t loc);

  const Definitions& defs_;
  std::vector<Location> locations_;
  std::vector<Channel> channels_;
  std::unordered_map<MessageChannel, std::uint32_t, MessageChannelHash> channel_of_;
  std::vector<Shifts> shifts_;
  std::vector<std::uint32_t> ready_;  // locations a send has unblocked
  std::uint64_t buffered_ = 0;
  std::uint64_t messages_ = 0, backwards_ = 0, worst_gap_ = 0, repaired_ = 0, max_shift_ = 0;
  std::int32_t worst_sender_ = -1, worst_receiver_ = -1;
};

// Hands every event to `next` at its repaired time.
class RepairedSink : public EventSink {
 public:
  RepairedSink(const std::vector<ClockRepair::Shifts>& shifts, EventSink& next)
      : shifts_(shifts), next_(next), cursor_(shifts.size(), 0), shift_(shifts.size(), 0) {}

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    next_.enter(loc, at(loc, t), region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    next_.leave(loc, at(loc, t), region);
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    next_.peruse(loc, at(loc, t), region, f);
  }
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    next_.send(loc, at(loc, t), peer, comm, tag, bytes, request, blocking);
  }
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    next_.send_complete(loc, at(loc, t), request);
  }
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    next_.recv_request(loc, at(loc, t), request);
  }
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    next_.recv(loc, at(loc, t), peer, comm, tag, bytes, request, blocking);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    next_.request_cancelled(loc, at(loc, t), request);
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    next_.metric(loc, at(loc, t), metric, value);
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    next_.real_metric(loc, at(loc, t), metric, value);
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    next_.sample(loc, at(loc, t), s);
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    next_.rma(loc, at(loc, t), e);
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size) override {
    next_.io_handle_created(loc, at(loc, t), handle, size);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    next_.io_handle_destroyed(loc, at(loc, t), handle);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    next_.io_begin(loc, at(loc, t), handle, op);
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint64_t bytes,
                   std::uint64_t matching) override {
    next_.io_complete(loc, at(loc, t), handle, bytes, matching);
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::int64_t offset,
               IoSeekFrom from, std::uint64_t reached) override {
    next_.io_seek(loc, at(loc, t), handle, offset, from, reached);
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint32_t region,
                 std::uint64_t size) override {
    next_.io_resize(loc, at(loc, t), handle, region, size);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    next_.io_delete(loc, at(loc, t), file);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    next_.collective(loc, at(loc, t), c);
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    next_.collective_request(loc, at(loc, t), request);
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype, DatatypeUse use,
                    std::uint64_t bytes) override {
    next_.datatype_use(loc, at(loc, t), datatype, use, bytes);
  }

 private:
  // A location's events come in time order: its shifts are walked once.
  std::uint64_t at(std::uint32_t loc, std::uint64_t t) {
    if (loc >= shifts_.size()) return t;
    const ClockRepair::Shifts& s = shifts_[loc];
    std::size_t& i = cursor_[loc];
    while (i < s.size() && s[i].first <= t) shift_[loc] = s[i++].second;
    return t + shift_[loc];
  }

  const std::vector<ClockRepair::Shifts>& shifts_;
  EventSink& next_;
  std::vector<std::size_t> cursor_;
  std::vector<std::uint64_t> shift_;
};

// Hands every event to two sinks, in turn.
class TeeSink : public EventSink {
 public:
  TeeSink(EventSink& a, EventSink& b) : a_(a), b_(b) {}
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    a_.enter(loc, t, region), b_.enter(loc, t, region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    a_.leave(loc, t, region), b_.leave(loc, t, region);
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    a_.peruse(loc, t, region, f), b_.peruse(loc, t, region, f);
  }
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    a_.send(loc, t, peer, comm, tag, bytes, request, blocking);
    b_.send(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    a_.send_complete(loc, t, request), b_.send_complete(loc, t, request);
  }
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    a_.recv_request(loc, t, request), b_.recv_request(loc, t, request);
  }
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    a_.recv(loc, t, peer, comm, tag, bytes, request, blocking);
    b_.recv(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    a_.request_cancelled(loc, t, request), b_.request_cancelled(loc, t, request);
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    a_.metric(loc, t, metric, value), b_.metric(loc, t, metric, value);
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    a_.real_metric(loc, t, metric, value), b_.real_metric(loc, t, metric, value);
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    a_.sample(loc, t, s), b_.sample(loc, t, s);
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    a_.rma(loc, t, e), b_.rma(loc, t, e);
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size) override {
    a_.io_handle_created(loc, t, handle, size), b_.io_handle_created(loc, t, handle, size);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    a_.io_handle_destroyed(loc, t, handle), b_.io_handle_destroyed(loc, t, handle);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    a_.io_begin(loc, t, handle, op), b_.io_begin(loc, t, handle, op);
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint64_t bytes,
                   std::uint64_t matching) override {
    a_.io_complete(loc, t, handle, bytes, matching);
    b_.io_complete(loc, t, handle, bytes, matching);
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::int64_t offset,
               IoSeekFrom from, std::uint64_t reached) override {
    a_.io_seek(loc, t, handle, offset, from, reached);
    b_.io_seek(loc, t, handle, offset, from, reached);
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint32_t region,
                 std::uint64_t size) override {
    a_.io_resize(loc, t, handle, region, size), b_.io_resize(loc, t, handle, region, size);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    a_.io_delete(loc, t, file), b_.io_delete(loc, t, file);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    a_.collective(loc, t, c), b_.collective(loc, t, c);
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    a_.collective_request(loc, t, request), b_.collective_request(loc, t, request);
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype, DatatypeUse use,
                    std::uint64_t bytes) override {
    a_.datatype_use(loc, t, datatype, use, bytes), b_.datatype_use(loc, t, datatype, use, bytes);
  }

 private:
  EventSink& a_;
  EventSink& b_;
};

}  // namespace perusetrace::archive
