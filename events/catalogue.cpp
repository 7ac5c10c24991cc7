#include "events/catalogue.hpp"

#include <algorithm>
#include <cctype>

namespace perusetrace {

namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) ==
                  std::toupper(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<PeruseEvent> find_event(std::string_view name) {
  constexpr std::string_view prefix = "PERUSE_COMM_";
  if (name.size() > prefix.size() && equal_ignoring_case(name.substr(0, prefix.size()), prefix)) {
    name.remove_prefix(prefix.size());
  }
  for (const auto& e : kPeruseEvents) {
    if (equal_ignoring_case(name, e.short_name)) return e.event;
  }
  return std::nullopt;
}

}  // namespace perusetrace
