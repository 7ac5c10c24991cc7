#include "events/selection.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace perusetrace {

// Case-insensitive in `a` only: `b` is a known name, upper case.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const bool same = std::toupper(static_cast<unsigned char>(a[i - 1])) == b[j - 1];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

namespace {

std::size_t distance(std::string_view a, std::string_view b) {
  return edit_distance(a, b);
}

std::string valid_names() {
  std::string names = "all, none";
  for (const auto& e : kPeruseEvents) {
    names += ", ";
    names += e.short_name;
  }
  return names;
}

std::string unknown_entry_message(std::string_view entry, std::size_t position) {
  std::string message = "MPITRACE_PERUSE_EVENTS: unknown event '" + std::string(entry) +
                        "' (entry " + std::to_string(position) + ").";
  std::string_view bare = entry;
  if (bare.size() > 12 && distance(bare.substr(0, 12), "PERUSE_COMM_") <= 2) bare.remove_prefix(12);
  const EventInfo* best = nullptr;
  std::size_t best_distance = 4;  // beyond three edits a suggestion is a guess
  for (const auto& e : kPeruseEvents) {
    const std::size_t d = distance(bare, e.short_name);
    if (d < best_distance) best = &e, best_distance = d;
  }
  if (best) message += " Did you mean " + std::string(best->short_name) + "?";
  message += " Valid entries, separated by ':' (the PERUSE_COMM_ prefix is optional): ";
  message += valid_names();
  return message;
}

}  // namespace

EventSet default_events() {
  EventSet set;
  for (const auto& e : kPeruseEvents) {
    if (e.phase != EventPhase::Search) set.set(static_cast<std::size_t>(e.event));
  }
  return set;
}

EventSelection parse_event_list(std::string_view list) {
  EventSelection result;
  if (list.empty()) {
    result.error =
        "MPITRACE_PERUSE_EVENTS is set but empty. Unset it for the default events, or set it to "
        "'none' to trace without Peruse, or to 'all', or to a ':'-separated list such as "
        "REQ_XFER_BEGIN:REQ_XFER_END.";
    return result;
  }
  std::size_t position = 0;
  while (true) {
    const std::size_t colon = list.find(':');
    const std::string_view entry = list.substr(0, colon);
    ++position;
    if (entry.empty()) {
      result.error =
          "MPITRACE_PERUSE_EVENTS: entry " + std::to_string(position) +
          " is empty (two ':' in a row, or one at either end). Valid entries: " + valid_names();
      return result;
    }
    if (const auto e = find_event(entry)) {
      result.events.set(static_cast<std::size_t>(*e));
    } else if (distance(entry, "ALL") == 0) {
      result.events.set();
    } else if (distance(entry, "NONE") == 0) {
      // "none" inside a list adds nothing; alone it selects nothing.
    } else {
      result.error = unknown_entry_message(entry, position);
      return result;
    }
    if (colon == std::string_view::npos) break;
    list.remove_prefix(colon + 1);
  }
  return result;
}

std::string format_event_list(const EventSet& events) {
  std::string out;
  for (const auto& e : kPeruseEvents) {
    if (!events.test(static_cast<std::size_t>(e.event))) continue;
    if (!out.empty()) out += ':';
    out += e.short_name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace perusetrace
