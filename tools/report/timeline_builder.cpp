#include "tools/report/timeline_builder.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace perusetrace::report::timeline {

std::pair<std::uint64_t, std::uint64_t> occurrence_view(std::uint64_t time,
                                                        std::uint64_t duration) {
  const std::uint64_t pad = std::max<std::uint64_t>(duration / 5, 1000);
  return {time > pad ? time - pad : 0, time + duration + pad};
}

namespace {

bool same(const PatternCase& a, const PatternCase& b) {
  return a.lost == b.lost && a.time == b.time && a.rank == b.rank && a.sender == b.sender &&
         a.receiver == b.receiver && a.tag == b.tag;
}

bool same(const WaitCase& a, const WaitCase& b) {
  return a.lost == b.lost && a.time == b.time && a.rank == b.rank && a.late == b.late &&
         a.function == b.function;
}

bool same(const MessageCase& a, const MessageCase& b) {
  return a.rank == b.rank && a.time == b.time && a.logical == b.logical && a.peer == b.peer &&
         a.tag == b.tag && a.operation == b.operation;
}

// What every item has: its type, its span, its row and what it shows there.
Item item_of(ItemType type, std::uint64_t t0, std::uint64_t t1, std::uint32_t row,
             std::uint32_t what) {
  return Item{.t0 = t0, .t1 = t1, .row = row, .what = what, .type = type};
}

}  // namespace

// A call ended or still open at `end` keeps the id it got when it was entered, so that the page
// shows it as one item either way.
Item TimelineBuilder::call_item(const Call& c, std::uint32_t loc, std::uint64_t end,
                                std::size_t depth) {
  Item item = item_of(ItemType::State, c.since, end, loc, c.region);
  item.id = c.id;
  item.depth = static_cast<std::uint8_t>(std::min<std::size_t>(depth, 255));
  return item;
}

TimelineBuilder::TimelineBuilder(const archive::Definitions& defs, const Report& report)
    : defs_(defs),
      report_(report),
      rows_(defs.locations.size()),
      summary_(defs.trace_length, defs.locations.size()),
      detail_([this](std::uint64_t t, std::vector<Item>& out) { open_calls(t, out); }),
      matcher_(defs, *this) {
  for (const archive::RegionDef& r : defs.regions) {
    tracked_.push_back(r.kind == archive::RegionKind::MpiFunction ||
                       r.kind == archive::RegionKind::Tracer);
    kind_.push_back(archive::call_kind(r));
    peruse_index_.push_back(r.kind == archive::RegionKind::Peruse ? r.peruse_index : kNotPeruse);
  }
  for (const archive::MetricDef& m : defs.metrics) {
    int which = -1;
    for (std::size_t c = 0; c < kCounters; ++c)
      if (m.name == kCounterNames[c]) which = static_cast<int>(c);
    counter_of_metric_.push_back(which);
  }
}

void TimelineBuilder::at(std::uint64_t t) {
  if (t > now_) now_ = t;
  detail_.advance(now_);
}

void TimelineBuilder::add(Item& item) {
  if (item.id == 0) item.id = next_id_++;
  detail_.add(item, now_);
}

void TimelineBuilder::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  at(t);
  if (region >= tracked_.size() || !tracked_[region]) return;
  Row& r = rows_[loc];
  r.calls.push_back({region, t, next_id_++});
  summary_.state(loc, t, kind_[region]);
  if (defs_.regions[region].kind == archive::RegionKind::MpiFunction && r.mpi_depth++ == 0)
    matcher_.call_enter(loc);
}

void TimelineBuilder::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  at(t);
  if (region >= tracked_.size() || !tracked_[region]) return;
  Row& r = rows_[loc];
  // Unwind to the region left: a missing Leave must not leave the row inside a call.
  auto it = std::find_if(r.calls.rbegin(), r.calls.rend(),
                         [&](const Call& c) { return c.region == region; });
  if (it == r.calls.rend()) return;
  const std::size_t keep = static_cast<std::size_t>(r.calls.rend() - it) - 1;
  while (r.calls.size() > keep) {
    const Call c = r.calls.back();
    r.calls.pop_back();
    Item item = call_item(c, loc, std::max(t, c.since), r.calls.size());
    if (r.fold.calls > 1 && r.fold.region == c.region) {  // polls folded into this state
      item.x = r.fold.calls;
      item.y = r.fold.inside_ns;
    }
    add(item);
    if (defs_.regions[c.region].kind == archive::RegionKind::MpiFunction && r.mpi_depth > 0 &&
        --r.mpi_depth == 0)
      matcher_.call_leave(loc);
  }
  r.fold = archive::PollFold{};
  summary_.state(loc, t,
                 r.calls.empty() ? archive::CallKind::OutsideMpi : kind_[r.calls.back().region]);
}

void TimelineBuilder::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                             const archive::PeruseFields& f) {
  at(t);
  if (region >= peruse_index_.size() || peruse_index_[region] == kNotPeruse) return;
  const std::uint32_t index = peruse_index_[region];
  summary_.event(loc, t);
  Item item = item_of(ItemType::Marker, t, t, loc, index);
  item.x = f.request;
  item.y = f.bytes;
  item.z = f.comm;
  item.peer = f.peer;
  item.tag = f.tag;
  item.op = f.operation;
  add(item);
  matcher_.peruse(loc, t, index, f);
}

void TimelineBuilder::metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                             std::int64_t value) {
  at(t);
  if (metric >= counter_of_metric_.size() || counter_of_metric_[metric] < 0) return;
  const auto which = static_cast<std::size_t>(counter_of_metric_[metric]);
  summary_.counter(loc, which, t, static_cast<double>(value));
  std::int64_t& current = rows_[loc].counters[which];
  Item item = item_of(ItemType::Counter, t, t, loc, static_cast<std::uint32_t>(which));
  item.x = static_cast<std::uint64_t>(value);
  item.y = static_cast<std::uint64_t>(current);
  current = value;
  add(item);
}

void TimelineBuilder::point_to_point(std::uint32_t loc, std::uint64_t t,
                                     const archive::PointToPoint& e) {
  at(t);
  matcher_.point_to_point(loc, t, e);
}

void TimelineBuilder::message(const archive::MatchedMessage& m) {
  Item item = item_of(ItemType::Message, m.send_logical, m.recv_logical, m.send_loc, m.recv_loc);
  item.x = m.send_physical;
  item.y = m.recv_physical;
  item.z = m.bytes;
  item.tag = static_cast<std::int32_t>(m.tag);
  add(item);
}

void TimelineBuilder::open_calls(std::uint64_t t, std::vector<Item>& out) const {
  for (std::uint32_t loc = 0; loc < rows_.size(); ++loc) {
    const auto& calls = rows_[loc].calls;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].since > t) break;
      Item item = call_item(calls[i], loc, t, i);
      item.open = true;
      out.push_back(item);
    }
  }
}

template <class Case, class Same>
void TimelineBuilder::keep(std::vector<Kept<Case>>& kept,
                           const std::vector<std::pair<double, Case>>& ranked, const Case& c,
                           std::uint64_t time, std::uint64_t duration, Same same_case) {
  auto listed = [&](const Case& x) {
    return std::any_of(ranked.begin(), ranked.end(),
                       [&](const auto& e) { return same_case(e.second, x); });
  };
  if (!listed(c)) return;  // the list did not change
  std::erase_if(kept, [&](const Kept<Case>& k) {
    if (listed(k.c)) return false;
    detail_.drop_window(k.window);
    return true;
  });
  const auto [from, to] = occurrence_view(time, duration);
  kept.push_back({c, detail_.open_window(from, to, now_)});
}

void TimelineBuilder::pattern_case(const Pattern& pattern, const PatternCase& c) {
  auto same_case = [](const PatternCase& a, const PatternCase& b) { return same(a, b); };
  std::vector<Kept<PatternCase>>* kept = nullptr;
  if (&pattern == &report_.posted_queue) kept = &posted_queue_;
  if (&pattern == &report_.posted_queue_in_collectives) kept = &posted_queue_in_collectives_;
  if (&pattern == &report_.unexpected_queue) kept = &unexpected_queue_;
  if (&pattern == &report_.complete_before_wait) kept = &complete_before_wait_;
  if (kept != nullptr) keep(*kept, pattern.worst.items(), c, c.time, c.lost, same_case);
}

void TimelineBuilder::wait_case(const WaitPatternStat& pattern, const WaitCase& c) {
  auto same_case = [](const WaitCase& a, const WaitCase& b) { return same(a, b); };
  keep(waits_[static_cast<std::size_t>(c.pattern)], pattern.worst.items(), c, c.time, c.lost,
       same_case);
}

void TimelineBuilder::message_case(const MessageCase& m) {
  auto same_case = [](const MessageCase& a, const MessageCase& b) { return same(a, b); };
  keep(slowest_, report_.messages.slowest.items(), m, m.time, m.logical, same_case);
}

void TimelineBuilder::finish() {
  matcher_.finish();
  Timeline& tl = timeline_;
  tl.span_ns = defs_.trace_length;
  for (const archive::LocationDef& l : defs_.locations) {
    const std::string& rank = defs_.ranks[l.rank].name;
    tl.rows.push_back(
        {l.thread == 0 ? rank : fmt::format("{} thread {}", rank, l.thread), l.rank, l.thread});
  }
  for (const archive::RegionDef& r : defs_.regions) {
    tl.regions.push_back(r.name);
    tl.region_kinds.push_back(static_cast<std::uint8_t>(archive::call_kind(r)));
  }
  tl.events = defs_.peruse_events;
  for (const archive::CommDef& c : defs_.comms) tl.comms.push_back(c.name);
  summary_.finish(tl);
  detail_.finish(std::max(now_, defs_.trace_length), tl);
  if (tl.complete) coarsen(tl, kScreenBuckets);
}

}  // namespace perusetrace::report::timeline
