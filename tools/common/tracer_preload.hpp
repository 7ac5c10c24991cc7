// LD_PRELOAD for a program perusetrace starts that must not be traced itself (the parallel
// analysis): the same list without libperusetrace.
#pragma once

#include <string>

namespace perusetrace::tools {

// LD_PRELOAD without its libperusetrace entries ("" when none is left).
inline std::string preload_without_tracer(const char* preload) {
  std::string kept, entry;
  const std::string all = preload ? preload : "";
  for (std::size_t i = 0; i <= all.size(); ++i) {
    if (i < all.size() && all[i] != ':' && all[i] != ' ') {
      entry += all[i];
      continue;
    }
    if (!entry.empty() && entry.find("libperusetrace") == std::string::npos)
      kept += (kept.empty() ? "" : ":") + entry;
    entry.clear();
  }
  return kept;
}

}  // namespace perusetrace::tools
