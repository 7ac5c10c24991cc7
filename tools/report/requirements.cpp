#include "requirements.hpp"

#include <algorithm>
#include <set>

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
      {"late_sender", {"REQ_INSERT_IN_POSTED_Q", "REQ_REMOVE_FROM_POSTED_Q"}},
      {"late_receiver", {"MSG_INSERT_IN_UNEX_Q", "MSG_REMOVE_FROM_UNEX_Q"}},
      {"late_wait", {"REQ_COMPLETE"}},
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
  static const std::vector<std::string> names = {"REQ_ACTIVATE",
                                                 "REQ_MATCH_UNEX",
                                                 "REQ_INSERT_IN_POSTED_Q",
                                                 "REQ_REMOVE_FROM_POSTED_Q",
                                                 "REQ_XFER_BEGIN",
                                                 "REQ_XFER_CONTINUE",
                                                 "REQ_XFER_END",
                                                 "REQ_COMPLETE",
                                                 "REQ_NOTIFY",
                                                 "MSG_ARRIVED",
                                                 "MSG_INSERT_IN_UNEX_Q",
                                                 "MSG_REMOVE_FROM_UNEX_Q",
                                                 "MSG_MATCH_POSTED_REQ",
                                                 "SEARCH_POSTED_Q_BEGIN",
                                                 "SEARCH_POSTED_Q_END",
                                                 "SEARCH_UNEX_Q_BEGIN",
                                                 "SEARCH_UNEX_Q_END"};
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
  const std::string list = settings.substr(start, end == std::string::npos ? end : end - start);
  if (list == "all") return peruse_event_names();
  std::size_t from = 0;
  while (from <= list.size()) {
    auto colon = list.find(':', from);
    if (colon == std::string::npos) colon = list.size();
    const std::string name = list.substr(from, colon - from);
    if (!name.empty() && name != "none") out.push_back(name);
    from = colon + 1;
  }
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
