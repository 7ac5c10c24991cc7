#include "reader/clock_repair.hpp"

#include <algorithm>

#include "reader/world_rank.hpp"

namespace perusetrace::archive {

namespace {

// Receives waiting for their send are held with every later event of their location; past this
// many held events, the oldest waiting receive is given up (its send may never have been
// written: a rank killed before its records reached the disk), keeping memory bounded.
constexpr std::uint64_t kMaxHeld = 1u << 22;

}  // namespace

std::size_t clock_domains(const Definitions& defs) {
  std::size_t n = 0;
  bool in_word = false;
  for (char c : defs.clock_domains) {
    const bool space = c == ' ' || c == '\n';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n == 0 ? 1 : n;
}

ClockRepair::ClockRepair(const Definitions& defs)
    : defs_(defs), locations_(defs.locations.size()), shifts_(defs.locations.size()) {}

std::int32_t ClockRepair::world(std::uint32_t loc, std::uint32_t comm, std::uint32_t peer) const {
  return world_rank(defs_, comm, peer, defs_.locations[loc].rank);
}

std::uint32_t ClockRepair::channel(const MessageChannel& key) {
  const auto [it, fresh] =
      channel_of_.try_emplace(key, static_cast<std::uint32_t>(channels_.size()));
  if (fresh) channels_.push_back(Channel{{}, {}, key.from, key.to});
  return it->second;
}

void ClockRepair::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t) {
  locations_[loc].calls.push_back(t);
}

void ClockRepair::leave(std::uint32_t loc, std::uint64_t, std::uint32_t) {
  if (!locations_[loc].calls.empty()) locations_[loc].calls.pop_back();
}

void ClockRepair::point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) {
  const auto self = static_cast<std::int32_t>(defs_.locations[loc].rank);
  if (e.kind == P2pKind::Send) {
    const std::int32_t to = world(loc, e.comm, e.peer);
    if (to < 0) return;
    // A send begins with its MPI call: MpiIsend is written when the call returns.
    const std::vector<std::uint64_t>& calls = locations_[loc].calls;
    add(loc, Item{calls.empty() ? t : calls.back(),
                  channel(MessageChannel{self, to, e.comm, e.tag}), false});
  } else if (e.kind == P2pKind::Recv) {
    const std::int32_t from = world(loc, e.comm, e.peer);
    if (from < 0) return;
    add(loc, Item{t, channel(MessageChannel{from, self, e.comm, e.tag}), true});
  }
}

void ClockRepair::add(std::uint32_t loc, const Item& item) {
  Location& l = locations_[loc];
  l.pending.push_back(item);
  ++buffered_;
  if (!l.waiting) run(loc);
  while (buffered_ > kMaxHeld) {
    // The location holding the most waits longest: give up its receive.
    auto most = std::max_element(
        locations_.begin(), locations_.end(),
        [](const Location& a, const Location& b) { return a.pending.size() < b.pending.size(); });
    const auto victim = static_cast<std::uint32_t>(most - locations_.begin());
    if (!most->waiting) break;
    auto& blocked = channels_[most->pending.front().channel].blocked;
    blocked.erase(std::remove(blocked.begin(), blocked.end(), victim), blocked.end());
    most->pending.pop_front();
    --buffered_;
    most->waiting = false;
    run(victim);
  }
}

// Works through a location's held events, and through those of every location a send of it
// releases, until each waits for a send or has nothing left.
void ClockRepair::run(std::uint32_t first) {
  ready_.push_back(first);
  while (!ready_.empty()) {
    const std::uint32_t loc = ready_.back();
    ready_.pop_back();
    Location& l = locations_[loc];
    l.waiting = false;
    while (!l.pending.empty()) {
      const Item item = l.pending.front();
      Channel& ch = channels_[item.channel];
      if (!item.receive) {
        ch.sends.push_back(Sent{item.time, item.time + l.shift});
        for (std::uint32_t other : ch.blocked) ready_.push_back(other);
        ch.blocked.clear();
      } else if (ch.sends.empty()) {
        l.waiting = true;
        ch.blocked.push_back(loc);
        break;
      } else {
        const Sent sent = ch.sends.front();
        ch.sends.pop_front();
        ++messages_;
        if (item.time < sent.original) {
          ++backwards_;
          if (sent.original - item.time > worst_gap_) {
            worst_gap_ = sent.original - item.time;
            worst_sender_ = ch.from;
            worst_receiver_ = ch.to;
          }
        }
        const std::uint64_t received = item.time + l.shift;
        if (received <= sent.repaired) {
          // Just after the send began; every later event of the location moves as much.
          const std::uint64_t move = sent.repaired + 1 - received;
          l.shift += move;
          shifts_[loc].emplace_back(item.time, l.shift);
          ++repaired_;
          max_shift_ = std::max(max_shift_, move);
        }
      }
      l.pending.pop_front();
      --buffered_;
    }
  }
}

void ClockRepair::finish() {
  // What still waits has no send in the trace: it stays where it is.
  for (bool progress = true; progress;) {
    progress = false;
    for (std::uint32_t loc = 0; loc < locations_.size(); ++loc) {
      Location& l = locations_[loc];
      if (!l.waiting || l.pending.empty()) continue;
      auto& blocked = channels_[l.pending.front().channel].blocked;
      blocked.erase(std::remove(blocked.begin(), blocked.end(), loc), blocked.end());
      l.pending.pop_front();
      --buffered_;
      run(loc);
      progress = true;
    }
  }
}

}  // namespace perusetrace::archive
