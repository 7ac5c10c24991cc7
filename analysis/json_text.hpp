// JSON text for every tool's --json and the JSON their HTML pages embed: a string as a literal
// ('<' is escaped too, so that "</script>" in a name cannot end an embedding script element), and
// an array of items each written by a function.
#pragma once

#include <fmt/core.h>

#include <string>

namespace perusetrace::archive {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == '<') {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

template <class Range, class F>
std::string json_array(const Range& items, F&& each) {
  std::string out = "[";
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ',';
    first = false;
    out += each(item);
  }
  return out + "]";
}

}  // namespace perusetrace::archive
