#include "analysis/eager_limits.hpp"

#include <cstdlib>

namespace perusetrace::report {

std::string recorded_cvar(const std::string& cvars, const std::string& name) {
  const std::string want = name + "=";
  std::size_t at = 0;
  while (at < cvars.size()) {
    std::size_t end = cvars.find("; ", at);
    if (end == std::string::npos) end = cvars.size();
    if (cvars.compare(at, want.size(), want) == 0)
      return cvars.substr(at + want.size(), end - at - want.size());
    at = end + 2;
  }
  return "";
}

EagerLimit eager_limit(const std::string& cvars, bool same_host) {
  static constexpr const char* kSharedMemory[] = {"btl_sm_eager_limit", "btl_vader_eager_limit"};
  static constexpr const char* kTcp[] = {"btl_tcp_eager_limit"};
  EagerLimit limit;
  const auto try_name = [&](const char* name) {
    const std::string value = recorded_cvar(cvars, name);
    if (value.empty() || !limit.parameter.empty()) return;
    limit.parameter = name;
    limit.bytes = std::strtoull(value.c_str(), nullptr, 10);
  };
  if (same_host)
    for (const char* name : kSharedMemory) try_name(name);
  else
    for (const char* name : kTcp) try_name(name);
  return limit;
}

std::uint64_t pull_limit(const std::string& cvars) {
  const EagerLimit sm = eager_limit(cvars, true);
  return sm.parameter == "btl_sm_eager_limit" ? sm.bytes : 0;
}

}  // namespace perusetrace::report
