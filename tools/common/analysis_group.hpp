// The processes a command's analysis runs on: this process alone (every command, by default), or
// the ranks of `perusetrace-analyze`, the MPI program `--np N` starts (tools/analyze), which
// sets the group before it runs the command. A command reads its share of the archive
// (reader/location_share.hpp), agrees with the others on failures and folds the partial results
// into rank 0, which alone writes output. The commands stay MPI-free: MPI lives behind this.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace perusetrace::tools {

class AnalysisGroup {
 public:
  virtual ~AnalysisGroup() = default;
  virtual unsigned rank() const = 0;
  virtual unsigned size() const = 0;
  // An MPI job (perusetrace-analyze), even of one rank: its outputs say so.
  virtual bool parallel() const = 0;
  // The group's ranks on this host, this one included: they share its cores.
  virtual unsigned ranks_on_host() const = 0;
  // Collective: every rank's `failure` ("" when it has none); returns the failure of the lowest
  // rank that has one, on every rank, or "".
  virtual std::string agree(const std::string& failure) = 0;
  // Collective: folds every rank's `part` into rank 0's with `merge(into, from)`, along a tree
  // (the merged parts travel, never the events); `part` is the result on rank 0 and undefined
  // elsewhere.
  using Merge = std::function<void(std::string& into, const std::string& from)>;
  virtual void reduce(std::string& part, const Merge& merge) = 0;
  // Collective: rank 0's `text` on every rank.
  virtual void broadcast(std::string& text) = 0;
  // Collective: every rank hands one part per rank (`outgoing[r]` for rank r, size() of them)
  // and gets what each rank had for it, in rank order (its own part included, not sent).
  virtual std::vector<std::string> exchange(std::vector<std::string> outgoing) = 0;
  // Collective: what this rank did (a JSON object), for --analysis-stats; rank 0 gets every
  // rank's as a JSON array, in rank order; the others get "".
  virtual std::string gather_stats(const std::string& mine) = 0;
  // Bytes this rank sent to the others so far.
  virtual std::uint64_t bytes_sent() const = 0;
};

class SingleProcess final : public AnalysisGroup {
 public:
  unsigned rank() const override { return 0; }
  unsigned size() const override { return 1; }
  bool parallel() const override { return false; }
  unsigned ranks_on_host() const override { return 1; }
  std::string agree(const std::string& failure) override { return failure; }
  void reduce(std::string&, const Merge&) override {}
  void broadcast(std::string&) override {}
  std::vector<std::string> exchange(std::vector<std::string> outgoing) override { return outgoing; }
  std::string gather_stats(const std::string& mine) override { return "[" + mine + "]"; }
  std::uint64_t bytes_sent() const override { return 0; }
};

namespace detail {
inline AnalysisGroup*& current_group() {
  static SingleProcess single;
  static AnalysisGroup* group = &single;
  return group;
}
}  // namespace detail

// The group this process's command runs in.
inline AnalysisGroup& analysis_group() {
  return *detail::current_group();
}
// Set by perusetrace-analyze before it runs a command; `group` outlives the command.
inline void set_analysis_group(AnalysisGroup& group) {
  detail::current_group() = &group;
}

}  // namespace perusetrace::tools
