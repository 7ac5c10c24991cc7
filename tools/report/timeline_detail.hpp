// The timeline's detail (timeline_data.hpp) in bounded memory. Items arrive in the order the
// stream completes them (an MPI call at its Leave, a message when both ends are known) into a
// ring of the kWholeTraceItems most recent. While the ring has never overflowed, it is the whole
// trace. Otherwise the page gets:
//  - the trace's first kEdgeItems items and the ring's last kEdgeItems;
//  - a window around each occurrence the caller asks for, opened when the occurrence is found
//    (usually at its end): the ring's items from the window's start on are copied in, and the
//    items that arrive while the stream is still inside the window are added, up to
//    kWindowItems. The caller drops the windows of occurrences that no longer rank.
// A window that fills up or that the stream has passed is closed; the MPI calls still running
// then are added cut at its end (`open_calls`), so its rows have no holes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "tools/report/timeline_data.hpp"

namespace perusetrace::report::timeline {

class DetailKeeper {
 public:
  // Appends the MPI calls running at `t` (begun at or before it) to `out`, cut at `t`.
  using OpenCalls = std::function<void(std::uint64_t t, std::vector<Item>& out)>;
  explicit DetailKeeper(OpenCalls open_calls);

  // `now`: the stream's time (the latest time it has reached), never decreasing.
  void add(const Item& item, std::uint64_t now);
  // Closes the windows the stream has passed; call with every event (cheap when none has).
  void advance(std::uint64_t now) {
    if (now > next_close_) close_passed(now);
  }

  using WindowId = std::uint64_t;
  WindowId open_window(std::uint64_t from, std::uint64_t to, std::uint64_t now);
  void drop_window(WindowId id);

  // The detail: the whole trace, or the edges and the windows still wanted.
  void finish(std::uint64_t end, Timeline& out);

  std::uint64_t items_seen() const { return seen_; }

 private:
  struct Window {
    std::uint64_t from, to;              // asked for
    std::uint64_t cover_from, cover_to;  // complete within (cover_to set when closed)
    std::vector<Item> items;
    bool open = true;
  };
  // The ring, logical index i (0 oldest) at (head_ + i) mod its capacity, a power of two.
  static constexpr std::size_t kRingMask = kWholeTraceItems - 1;
  static_assert((kWholeTraceItems & kRingMask) == 0);
  const Item& ring_at(std::size_t i) const { return ring_[(head_ + i) & kRingMask]; }
  std::uint64_t arrival_at(std::size_t i) const { return arrivals_[(head_ + i) & kRingMask]; }
  std::size_t first_arrived_at_or_after(std::uint64_t t) const;
  void close(Window& w, std::uint64_t cover_to);
  void close_passed(std::uint64_t now);
  void update_next_close();

  OpenCalls open_calls_;
  std::vector<Item> ring_;
  std::vector<std::uint64_t> arrivals_;
  std::size_t head_ = 0, size_ = 0;
  bool overflowed_ = false;
  std::uint64_t horizon_ = 0;  // every item that arrived after this is in the ring
  std::uint64_t last_arrival_ = 0;
  Window first_;  // the trace's start
  std::map<WindowId, Window> windows_;
  std::vector<WindowId> open_;  // windows still taking items
  WindowId next_id_ = 1;
  std::uint64_t next_close_ = ~std::uint64_t{0};  // the earliest end of an open window
  std::uint64_t copied_ = 0;                      // items copied from the ring into windows
  std::uint64_t seen_ = 0;
};

}  // namespace perusetrace::report::timeline
