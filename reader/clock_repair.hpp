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
#include "reader/forwarding_sink.hpp"
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
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override;

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
class RepairedSink : public ForwardingSink<RepairedSink> {
 public:
  RepairedSink(const std::vector<ClockRepair::Shifts>& shifts, EventSink& next)
      : shifts_(shifts), next_(next), cursor_(shifts.size(), 0), shift_(shifts.size(), 0) {}

  template <typename Call>
  void route(std::uint32_t loc, std::uint64_t t, const Call& call) {
    call(next_, at(loc, t));
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

}  // namespace perusetrace::archive
