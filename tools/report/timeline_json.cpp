#include "tools/report/timeline_json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <functional>
#include <iterator>
#include <vector>

#include "analysis/json_text.hpp"
#include "reader/call_kind.hpp"
#include "tools/report/timeline_builder.hpp"

namespace perusetrace::report::timeline {

namespace {

// By archive::CallKind: the program's own time pale, waiting in reds, sending in oranges,
// nonblocking calls in light blues, collectives blue, synchronisation purple.
constexpr const char* kKindColours[archive::kCallKinds] = {
    "#e4eedc", "#d62728", "#ff7f0e", "#8c564b", "#9ecae1", "#6baed6", "#e377c2",
    "#bcbd22", "#9467bd", "#1f77b4", "#17becf", "#8c8c8c", "#333333"};

std::string base64(const void* data, std::size_t n) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    const unsigned v = (p[i] << 16) | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < n ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < n ? kDigits[v & 63] : '=';
  }
  return out;
}

// Little-endian, as the page's typed arrays read them on every machine a browser runs on.
template <class T>
std::string base64_of(const std::vector<T>& values) {
  static_assert(std::endian::native == std::endian::little);
  return base64(values.data(), values.size() * sizeof(T));
}

std::string quote(const std::string& s) {
  return archive::json_string(s);
}

std::string names(const std::vector<std::string>& list) {
  std::string out = "[";
  for (std::size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + quote(list[i]);
  return out + "]";
}

// The columns of one type of item: out += "name":[v0,v1,...], a value per item, each read by
// a member pointer or a function of the item.
class Columns {
 public:
  Columns(std::string& out, const std::vector<const Item*>& items) : out_(out), items_(items) {}
  template <class Value>
  void add(const char* name, Value&& value) {
    out_ += first_ ? "" : ",";
    first_ = false;
    fmt::format_to(std::back_inserter(out_), "\"{}\":[", name);
    bool first = true;
    // std::to_chars, not fmt: a page holds up to a few million numbers, and formatting them
    // through fmt's general path took longer than the rest of writing the page.
    char digits[24];
    for (const Item* item : items_) {
      if (!first) out_ += ',';
      first = false;
      const auto end = std::to_chars(digits, digits + sizeof digits, std::invoke(value, *item)).ptr;
      out_.append(digits, end);
    }
    out_ += ']';
  }

 private:
  std::string& out_;
  const std::vector<const Item*>& items_;
  bool first_ = true;
};

// Times as differences from the previous item's (negative where a row starts again).
template <class Get>
auto delta(Get get) {
  return [get, previous = std::int64_t{0}](const Item& item) mutable {
    const auto t = static_cast<std::int64_t>(std::invoke(get, item));
    const std::int64_t d = t - previous;
    previous = t;
    return d;
  };
}

std::int64_t signed_difference(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::int64_t>(a) - static_cast<std::int64_t>(b);
}

std::string detail(const Timeline& tl) {
  std::vector<const Item*> of[4];
  for (const Item& item : tl.items) of[static_cast<int>(item.type)].push_back(&item);
  std::string out = "\"states\":{";
  {
    Columns c(out, of[static_cast<int>(ItemType::State)]);
    c.add("row", &Item::row);
    c.add("t", delta(&Item::t0));
    c.add("dur", [](const Item& i) { return i.t1 - i.t0; });
    c.add("region", &Item::what);
    c.add("depth", [](const Item& i) { return static_cast<unsigned>(i.depth); });
    c.add("open", [](const Item& i) { return i.open ? 1 : 0; });
    // Polls folded into the call (MPITRACE_FOLD_POLLS): how many, and their time inside MPI.
    c.add("calls", [](const Item& i) { return i.x > 1 ? i.x : std::uint64_t{1}; });
    c.add("inside", &Item::y);
  }
  out += "},\"markers\":{";
  {
    Columns c(out, of[static_cast<int>(ItemType::Marker)]);
    c.add("row", &Item::row);
    c.add("t", delta(&Item::t0));
    c.add("event", &Item::what);
    c.add("request", &Item::x);
    c.add("peer", &Item::peer);
    c.add("tag", &Item::tag);
    c.add("bytes", &Item::y);
    c.add("op", [](const Item& i) { return static_cast<unsigned>(i.op); });
    c.add("comm", [](const Item& i) {
      return i.z == archive::kNoComm ? std::int64_t{-1} : static_cast<std::int64_t>(i.z);
    });
  }
  out += "},\"messages\":{";
  {
    Columns c(out, of[static_cast<int>(ItemType::Message)]);
    c.add("from", &Item::row);
    c.add("to", &Item::what);
    c.add("send", delta(&Item::t0));
    c.add("recv", [](const Item& i) { return signed_difference(i.t1, i.t0); });
    c.add("xfer_begin", [](const Item& i) { return signed_difference(i.x, i.t0); });
    c.add("xfer_end", [](const Item& i) { return signed_difference(i.y, i.t1); });
    c.add("bytes", &Item::z);
    c.add("tag", &Item::tag);
  }
  out += "},\"steps\":{";
  {
    Columns c(out, of[static_cast<int>(ItemType::Counter)]);
    c.add("row", &Item::row);
    c.add("counter", &Item::what);
    c.add("t", delta(&Item::t0));
    c.add("value", [](const Item& i) { return static_cast<std::int64_t>(i.x); });
    c.add("before", [](const Item& i) { return static_cast<std::int64_t>(i.y); });
  }
  return out + "}";
}

std::string summary(const Timeline& tl) {
  std::string states = "[", events = "[", counters = "[";
  for (std::size_t r = 0; r < tl.summary.size(); ++r) {
    const RowSummary& s = tl.summary[r];
    const char* sep = r ? "," : "";
    states += sep + ("\"" + base64_of(s.states) + "\"");
    events += sep + ("\"" + base64_of(s.events) + "\"");
    std::string lanes = "[";
    for (std::size_t c = 0; c < kCounters; ++c) {
      lanes += c ? "," : "";
      const bool any =
          c < s.counters.size() &&
          std::any_of(s.counters[c].begin(), s.counters[c].end(), [](double v) { return v != 0; });
      if (!any) {
        lanes += "null";
        continue;
      }
      std::vector<float> highest(s.counters[c].begin(), s.counters[c].end());
      lanes += "\"" + base64_of(highest) + "\"";
    }
    counters += sep + lanes + "]";
  }
  return fmt::format(R"("summary":{{"states":{}],"events":{}],"counters":{}]}})", states, events,
                     counters);
}

// The occurrence tables: each row's cells and the view that shows it.
struct TableColumn {
  const char* name;
  const char* type;  // "duration" (ns), "time" (ns since the start), "rank", "int", "text"
};

std::string table(const char* id, const char* title, const Report& r, const char* analysis,
                  std::vector<TableColumn> columns, const std::vector<std::string>& rows) {
  std::string note;
  if (const Missing* m = r.missing_for(analysis)) {
    std::string events;
    for (const auto& e : m->events) events += (events.empty() ? "" : ", ") + e;
    note = fmt::format("not available: the trace lacks the Peruse events {}; trace again with {}",
                       events, m->setting);
  }
  std::string cols = "[";
  for (std::size_t i = 0; i < columns.size(); ++i)
    cols += fmt::format(R"({}{{"name":{},"type":"{}"}})", i ? "," : "", quote(columns[i].name),
                        columns[i].type);
  std::string body = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) body += (i ? "," : "") + rows[i];
  return fmt::format(R"({{"id":"{}","title":{},"note":{},"columns":{}],"rows":{}]}})", id,
                     quote(title), quote(note), cols, body);
}

std::string occurrence(const std::string& cells, std::uint64_t time, std::uint64_t duration,
                       std::uint32_t rank) {
  const auto [from, to] = occurrence_view(time, duration);
  return fmt::format(R"({{"cells":[{}],"view":[{},{}],"rank":{}}})", cells, from, to, rank);
}

std::string pattern_table(const char* id, const char* title, const Report& r, const char* analysis,
                          const Pattern& p) {
  std::vector<std::string> rows;
  for (const auto& [lost, c] : p.worst.items())
    rows.push_back(occurrence(fmt::format("{},{},{},{},{},{},{}", c.lost, c.time, c.rank, c.sender,
                                          c.receiver, c.tag, c.bytes),
                              c.time, c.lost, c.rank));
  return table(id, title, r, analysis,
               {{"duration", "duration"},
                {"from", "time"},
                {"on rank", "rank"},
                {"sender", "rank"},
                {"receiver", "rank"},
                {"tag", "int"},
                {"bytes", "int"}},
               rows);
}

// The worst waits of every pattern, largest first, with their causes.
std::string wait_table(const Report& r) {
  std::vector<std::pair<double, const WaitCase*>> cases;
  for (const WaitPatternStat& p : r.wait_states.patterns)
    for (const auto& [lost, c] : p.worst.items()) cases.emplace_back(lost, &c);
  std::stable_sort(cases.begin(), cases.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> rows;
  for (const auto& [lost, c] : cases)
    rows.push_back(
        occurrence(fmt::format("{},{},{},{},{},{},{}", c->lost, quote(info(c->pattern).title),
                               c->time, c->rank, quote(c->function),
                               quote(c->late < 0 ? std::string("-") : std::to_string(c->late)),
                               quote(c->cause)),
                   c->time, c->lost, c->rank));
  return table("wait-states",
               "Wait states: time lost in MPI calls waiting for another process, and its cause", r,
               "",
               {{"lost", "duration"},
                {"pattern", "text"},
                {"from", "time"},
                {"on rank", "rank"},
                {"in", "text"},
                {"waiting for rank", "text"},
                {"cause", "text"}},
               rows);
}

std::string tables(const Report& r) {
  std::vector<std::string> all;
  if (r.wait_states.present) all.push_back(wait_table(r));
  all.push_back(pattern_table("posted-queue",
                              "Receives in the posted queue before their message arrived (a "
                              "receive's time, not a wait)",
                              r, "posted_queue", r.posted_queue));
  all.push_back(pattern_table("posted-queue-in-collectives",
                              "Collectives' internal receives in the posted queue", r,
                              "posted_queue", r.posted_queue_in_collectives));
  {
    std::vector<std::string> rows;
    for (const auto& [queued, c] : r.unexpected_queue.worst.items())
      rows.push_back(occurrence(
          fmt::format("{},{},{},{},{},{}", c.lost, c.time, c.rank, c.sender, c.tag, c.bytes),
          c.time, c.lost, c.rank));
    all.push_back(table("unexpected-queue",
                        "Messages in the unexpected queue (the message's time, not a "
                        "process's wait)",
                        r, "unexpected_queue",
                        {{"in the queue", "duration"},
                         {"from", "time"},
                         {"on rank", "rank"},
                         {"sender", "rank"},
                         {"tag", "int"},
                         {"bytes", "int"}},
                        rows));
  }
  all.push_back(pattern_table("complete-before-wait",
                              "Requests complete before the Wait/Test that collected them (no "
                              "process waited)",
                              r, "complete_before_wait", r.complete_before_wait));
  {
    std::vector<std::string> rows;
    for (const auto& [logical, m] : r.messages.slowest.items())
      rows.push_back(occurrence(
          fmt::format("{},{},{},{},\"{}\",{},{},{},{}", m.logical, m.physical, m.time, m.rank,
                      m.operation ? "receive" : "send", m.peer, m.tag, m.bytes, m.fragments),
          m.time, m.logical, m.rank));
    all.push_back(table("slowest-messages", "Slowest messages (logical duration, per request)", r,
                        "messages",
                        {{"logical", "duration"},
                         {"physical", "duration"},
                         {"from", "time"},
                         {"rank", "rank"},
                         {"operation", "text"},
                         {"peer", "rank"},
                         {"tag", "int"},
                         {"bytes", "int"},
                         {"fragments", "int"}},
                        rows));
  }
  std::string out = "[";
  for (std::size_t i = 0; i < all.size(); ++i) out += (i ? "," : "") + all[i];
  return out + "]";
}

}  // namespace

std::string to_json(const Timeline& tl, const Report& report) {
  std::string out = fmt::format(
      R"({{"span_ns":{},"buckets":{},"levels":{},"complete":{},"items_seen":{},"items_kept":{},)",
      tl.span_ns, tl.buckets, tl.levels, tl.complete ? "true" : "false", tl.items_seen,
      tl.items.size());
  out += "\"rows\":[";
  for (std::size_t i = 0; i < tl.rows.size(); ++i)
    out += fmt::format(R"({}{{"name":{},"rank":{},"thread":{}}})", i ? "," : "",
                       quote(tl.rows[i].name), tl.rows[i].rank, tl.rows[i].thread);
  out += "],\"kinds\":[";
  for (int k = 0; k < archive::kCallKinds; ++k)
    out += fmt::format(R"({}{{"name":{},"colour":"{}"}})", k ? "," : "",
                       quote(archive::call_kind_name(static_cast<archive::CallKind>(k))),
                       kKindColours[k]);
  out += "],\"counters\":[";
  for (std::size_t c = 0; c < kCounters; ++c) out += (c ? "," : "") + quote(kCounterNames[c]);
  out += "],\"region_kinds\":[";
  for (std::size_t i = 0; i < tl.region_kinds.size(); ++i)
    out += fmt::format("{}{}", i ? "," : "", static_cast<unsigned>(tl.region_kinds[i]));
  out += "],\"events\":" + names(tl.events) + ",\"regions\":" + names(tl.regions) +
         ",\"comms\":" + names(tl.comms) + ",\"coverage\":[";
  for (std::size_t i = 0; i < tl.coverage.size(); ++i)
    out += fmt::format("{}[{},{}]", i ? "," : "", tl.coverage[i].from, tl.coverage[i].to);
  out += "]," + summary(tl) + "," + detail(tl) + ",\"tables\":" + tables(report) + "}";
  return out;
}

}  // namespace perusetrace::report::timeline
