// The ranks of perusetrace-analyze as a tools::AnalysisGroup: the only code of the analysis
// that calls MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/common/analysis_group.hpp"

namespace perusetrace::analyze {

// Over MPI_COMM_WORLD, which MPI_Init has made.
class MpiGroup final : public tools::AnalysisGroup {
 public:
  MpiGroup();
  unsigned rank() const override { return rank_; }
  unsigned size() const override { return size_; }
  bool parallel() const override { return true; }
  unsigned ranks_on_host() const override { return on_host_; }
  std::string agree(const std::string& failure) override;
  void reduce(std::string& part, const Merge& merge) override;
  void broadcast(std::string& text) override;
  std::vector<std::string> exchange(std::vector<std::string> outgoing) override;
  std::string gather_stats(const std::string& mine) override;
  std::uint64_t bytes_sent() const override { return sent_; }

 private:
  void send(const std::string& bytes, unsigned to);
  std::string receive(unsigned from);

  unsigned rank_ = 0, size_ = 1, on_host_ = 1;
  std::uint64_t sent_ = 0;
};

}  // namespace perusetrace::analyze
