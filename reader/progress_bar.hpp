// A progress bar on a terminal while an archive's events are read (read_events' progress).
#pragma once

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

namespace perusetrace::archive {

// Pass as read_events' progress callback; shows only when stderr is a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(bool quiet) : on_(!quiet && ::isatty(2) == 1) {}
  void operator()(std::uint64_t done, std::uint64_t total) {
    if (!on_ || total == 0) return;
    const int percent = static_cast<int>(std::min<std::uint64_t>(100, done * 100 / total));
    if (percent == shown_) return;
    shown_ = percent;
    fmt::print(stderr, "\rreading [{:<40}] {:3}%", std::string(percent * 40 / 100, '#'), percent);
    std::fflush(stderr);
  }
  // A second pass over the events starts from 0 again.
  void restart() { shown_ = -1; }
  // Before the tool prints: the bar's line is cleared.
  void clear() {
    if (on_ && shown_ >= 0) fmt::print(stderr, "\r{:60}\r", "");
    shown_ = -1;
  }

 private:
  bool on_;
  int shown_ = -1;
};

}  // namespace perusetrace::archive
