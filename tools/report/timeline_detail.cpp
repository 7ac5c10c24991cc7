#include "tools/report/timeline_detail.hpp"

#include <algorithm>
#include <tuple>

namespace perusetrace::report::timeline {

namespace {

constexpr std::uint64_t kForever = ~std::uint64_t{0};

// The times an item spans: a message's physical times can lie outside its logical ones.
std::pair<std::uint64_t, std::uint64_t> extent(const Item& item) {
  if (item.type != ItemType::Message) return {item.t0, item.t1};
  return {std::min(item.t0, item.x), std::max(item.t1, item.y)};
}

bool overlaps(const Item& item, std::uint64_t from, std::uint64_t to) {
  const auto [lo, hi] = extent(item);
  return hi >= from && lo <= to;
}

}  // namespace

DetailKeeper::DetailKeeper(OpenCalls open_calls)
    : open_calls_(std::move(open_calls)),
      ring_(kWholeTraceItems),
      arrivals_(kWholeTraceItems),
      first_{0, kForever, 0, 0, {}, true} {}

void DetailKeeper::add(const Item& item, std::uint64_t now) {
  ++seen_;
  if (first_.open) {
    if (first_.items.size() < kEdgeItems) {
      first_.items.push_back(item);
    } else {
      close(first_, now > 0 ? now - 1 : 0);
    }
  }
  if (size_ == kWholeTraceItems) {
    horizon_ = arrivals_[head_];
    head_ = (head_ + 1) & kRingMask;
    --size_;
    overflowed_ = true;
  }
  const std::size_t at = (head_ + size_) & kRingMask;
  ring_[at] = item;
  arrivals_[at] = now;
  ++size_;
  last_arrival_ = now;
  if (open_.empty()) return;
  bool closed = false;
  for (const WindowId id : open_) {
    Window& w = windows_.at(id);
    if (!overlaps(item, w.from, w.to)) continue;
    if (w.items.size() < kWindowItems) {
      w.items.push_back(item);
    } else {
      close(w, now > 0 ? now - 1 : 0);
      closed = true;
    }
  }
  if (closed) {
    std::erase_if(open_, [&](WindowId id) { return !windows_.at(id).open; });
    update_next_close();
  }
}

std::size_t DetailKeeper::first_arrived_at_or_after(std::uint64_t t) const {
  std::size_t lo = 0, hi = size_;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (arrival_at(mid) < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

DetailKeeper::WindowId DetailKeeper::open_window(std::uint64_t from, std::uint64_t to,
                                                 std::uint64_t now) {
  const WindowId id = next_id_++;
  Window& w = windows_[id];
  w.from = from;
  w.to = to;
  w.cover_from = overflowed_ ? std::max(from, horizon_ + 1) : from;
  if (copied_ >= kCopyBudget) w.cover_from = std::max(w.cover_from, now);
  // Everything that overlaps the window arrived at or after its start.
  for (std::size_t i = first_arrived_at_or_after(w.cover_from); i < size_ && w.open; ++i) {
    if (copied_ >= kCopyBudget) break;
    const Item& item = ring_at(i);
    if (!overlaps(item, from, to)) continue;
    if (w.items.size() == kWindowItems) {
      close(w, arrival_at(i) > 0 ? arrival_at(i) - 1 : 0);
      break;
    }
    w.items.push_back(item);
    ++copied_;
  }
  if (!w.open) return id;
  if (to < now) {
    close(w, to);
    return id;
  }
  open_.push_back(id);
  next_close_ = std::min(next_close_, to);
  return id;
}

void DetailKeeper::drop_window(WindowId id) {
  auto it = windows_.find(id);
  if (it == windows_.end()) return;
  const bool was_open = it->second.open;
  windows_.erase(it);
  if (was_open) {
    std::erase(open_, id);
    update_next_close();
  }
}

void DetailKeeper::close(Window& w, std::uint64_t cover_to) {
  w.open = false;
  w.cover_to = cover_to;
  if (cover_to >= w.cover_from) open_calls_(cover_to, w.items);
}

void DetailKeeper::close_passed(std::uint64_t now) {
  for (const WindowId id : open_) {
    Window& w = windows_.at(id);
    if (w.to < now) close(w, w.to);
  }
  std::erase_if(open_, [&](WindowId id) { return !windows_.at(id).open; });
  update_next_close();
}

void DetailKeeper::update_next_close() {
  next_close_ = kForever;
  for (const WindowId id : open_) next_close_ = std::min(next_close_, windows_.at(id).to);
}

void DetailKeeper::finish(std::uint64_t end, Timeline& out) {
  end = std::max(end, last_arrival_);
  out.items_seen = seen_;
  out.items.clear();
  out.coverage.clear();
  if (!overflowed_) {
    out.complete = true;
    out.coverage.push_back({0, end});
    for (std::size_t i = 0; i < size_; ++i) out.items.push_back(ring_at(i));
  } else {
    out.complete = false;
    for (const WindowId id : open_) {
      Window& w = windows_.at(id);
      close(w, w.to);
    }
    open_.clear();
    if (first_.open) close(first_, end);
    std::vector<Window*> kept{&first_};
    for (auto& [id, w] : windows_) kept.push_back(&w);
    for (const Window* w : kept) {
      if (w->cover_to >= w->cover_from) out.coverage.push_back({w->cover_from, w->cover_to});
      out.items.insert(out.items.end(), w->items.begin(), w->items.end());
    }
    // The trace's end: the ring's last items, with all of those that arrived at the first one's
    // time, so that the coverage starts where nothing is missing.
    std::size_t s = size_ > kEdgeItems ? size_ - kEdgeItems : 0;
    while (s > 0 && arrival_at(s - 1) == arrival_at(s)) --s;
    const std::uint64_t last_from = s > 0 ? arrival_at(s) : horizon_ + 1;
    out.coverage.push_back({last_from, end});
    for (std::size_t i = s; i < size_; ++i) out.items.push_back(ring_at(i));
    open_calls_(end, out.items);
  }
  if (out.complete) open_calls_(end, out.items);

  // Each item once: the longest copy of an MPI call (a window may hold it cut at its end).
  std::sort(out.items.begin(), out.items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.type, a.id, b.t1, a.open) < std::tie(b.type, b.id, a.t1, b.open);
  });
  out.items.erase(
      std::unique(out.items.begin(), out.items.end(),
                  [](const Item& a, const Item& b) { return a.type == b.type && a.id == b.id; }),
      out.items.end());
  std::sort(out.items.begin(), out.items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.type, a.row, a.t0, a.depth) < std::tie(b.type, b.row, b.t0, b.depth);
  });

  std::sort(out.coverage.begin(), out.coverage.end(),
            [](const Coverage& a, const Coverage& b) { return a.from < b.from; });
  std::vector<Coverage> merged;
  for (const Coverage& c : out.coverage) {
    if (!merged.empty() && c.from <= merged.back().to + 1) {
      merged.back().to = std::max(merged.back().to, c.to);
    } else {
      merged.push_back(c);
    }
  }
  out.coverage = std::move(merged);
  ring_.clear();
  ring_.shrink_to_fit();
  arrivals_.clear();
  arrivals_.shrink_to_fit();
  windows_.clear();
  first_.items.clear();
}

}  // namespace perusetrace::report::timeline
