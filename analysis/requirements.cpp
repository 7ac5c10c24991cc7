#include "analysis/requirements.hpp"

#include <algorithm>
#include <set>

#include "events/catalogue.hpp"
#include "events/selection.hpp"

namespace perusetrace::report {

namespace {

struct Need {
  const char* analysis;
  std::vector<std::string> events;
};

const std::vector<Need>& needs() {
  static const std::vector<Need> n = {
      {"messages",
       {"REQ_ACTIVATE", "REQ_XFER_BEGIN", "REQ_XFER_CONTINUE", "REQ_XFER_END", "REQ_COMPLETE"}},
      {"posted_queue", {"REQ_INSERT_IN_POSTED_Q", "REQ_REMOVE_FROM_POSTED_Q"}},
      {"unexpected_queue", {"MSG_INSERT_IN_UNEX_Q", "MSG_REMOVE_FROM_UNEX_Q"}},
      {"complete_before_wait", {"REQ_COMPLETE"}},
      {"queue_search",
       {"SEARCH_POSTED_Q_BEGIN", "SEARCH_POSTED_Q_END", "SEARCH_UNEX_Q_BEGIN",
        "SEARCH_UNEX_Q_END"}},
      {"queue_depth",
       {"REQ_INSERT_IN_POSTED_Q", "REQ_REMOVE_FROM_POSTED_Q", "MSG_INSERT_IN_UNEX_Q",
        "MSG_REMOVE_FROM_UNEX_Q"}},
      {"collectives", {"REQ_ACTIVATE"}},
  };
  return n;
}

}  // namespace

const std::vector<std::string>& peruse_event_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const EventInfo& e : kPeruseEvents) n.emplace_back(e.short_name);
    return n;
  }();
  return names;
}

std::vector<std::string> selected_events(const std::string& settings, bool& found) {
  static const std::string key = "MPITRACE_PERUSE_EVENTS=";
  std::vector<std::string> out;
  const auto at = settings.find(key);
  found = at != std::string::npos;
  if (!found) return out;
  const auto start = at + key.size();
  const auto end = settings.find(' ', start);
  // Parsed as the library parses the variable (events/selection.hpp): the same names.
  const EventSelection selection =
      parse_event_list(settings.substr(start, end == std::string::npos ? end : end - start));
  for (const EventInfo& e : kPeruseEvents)
    if (selection.events.test(static_cast<std::size_t>(e.event))) out.emplace_back(e.short_name);
  return out;
}

void find_missing(Report& report) {
  bool found = false;
  report.selected = selected_events(report.settings, found);
  std::set<std::string> have(report.selected.begin(), report.selected.end());
  for (const auto& [name, n] : report.observed)
    if (n > 0) have.insert(name);
  for (const Need& need : needs()) {
    Missing m{need.analysis, {}, {}};
    for (const auto& e : need.events)
      if (!have.count(e)) m.events.push_back(e);
    if (m.events.empty()) continue;
    // The current selection plus what is missing, in catalogue order.
    std::string list;
    for (const auto& e : peruse_event_names()) {
      if (!have.count(e) && std::find(m.events.begin(), m.events.end(), e) == m.events.end())
        continue;
      if (!list.empty()) list += ':';
      list += e;
    }
    m.setting = "MPITRACE_PERUSE_EVENTS=" + list;
    report.missing.push_back(std::move(m));
  }
}

}  // namespace perusetrace::report
