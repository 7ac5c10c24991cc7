// Text inside HTML or XML (the report's and the profile's pages, HDTrace's files): the five
// characters markup gives a meaning to as entities, and the control characters XML 1.0 forbids
// (all below 0x20 but tab, newline and carriage return) as '?', so a name with any byte in it
// still gives a page or file every parser reads.
#pragma once

#include <string>

namespace perusetrace::tools {

inline std::string markup_escaped(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out +=
            static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c;
    }
  }
  return out;
}

}  // namespace perusetrace::tools
