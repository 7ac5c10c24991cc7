#include "tools/profile/folded_output.hpp"

#include <fmt/core.h>

namespace perusetrace::profile {

namespace {

// ';' separates frames and a line is one stack: neither may appear inside a frame's name.
std::string frame(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (c == ';')
      c = ':';
    else if (c == '\n' || c == '\r')
      c = ' ';
  return out;
}

}  // namespace

std::string to_folded(const Profile& p) {
  std::string out;
  // Depth first from the root, one line per frame with samples of its own and per state; the
  // state is the last frame, so a flame graph shows the time of each state above its leaf.
  std::vector<std::uint32_t> stack = {0};
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    const Node& node = p.nodes[n];
    for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) stack.push_back(*it);
    if (node.self.total() == 0) continue;
    std::string path;
    for (const std::uint32_t f : p.path(n)) path += frame(p.nodes[f].name) + ';';
    for (int c = 0; c < kCategories; ++c)
      if (node.self.n[c] > 0)
        out += fmt::format("{}[{}] {}\n", path, kCategoryWords[c], node.self.n[c]);
  }
  return out;
}

}  // namespace perusetrace::profile
