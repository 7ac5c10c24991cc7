// `perusetrace report --by ATTRIBUTE[,ATTRIBUTE]`: the time in MPI per function, the messages and
// bytes sent and received, the late-sender time and the sampled MPI states, per context. The
// archive does not copy the context into each event: it is rebuilt by time, per thread, from the
// annotation regions entered and left on the thread (nested values), those of process-scope
// attributes entered on any thread of the rank, and the annotation metrics written on the thread
// (set values).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/report_data.hpp"
#include "reader/archive_reader.hpp"
#include "reader/forwarding_sink.hpp"

namespace perusetrace::report {

// Splits "phase,iteration" into its attributes.
std::vector<std::string> attribute_list(const std::string& text);
// The archive's annotation attributes, "MODULE:NAME" or "NAME", sorted.
std::vector<std::string> annotation_attributes(const archive::Definitions& defs);

class ContextAnalysis : public archive::EventSink {
 public:
  // `attributes`: as asked for, by full name: "NAME" is the program's own attribute,
  // "MODULE:NAME" a module's, so two modules' "phase" stay apart.
  ContextAnalysis(const archive::Definitions& defs, const std::vector<std::string>& attributes,
                  ByContext& out);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t loc, std::uint64_t, const archive::PollFold& f) override {
    locations_[loc].fold = f;
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override;
  void sample(std::uint32_t loc, std::uint64_t t, const archive::Sample& s) override;

 private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Location {
    std::uint32_t rank = 0;
    std::vector<std::uint32_t> annotations;            // open annotation regions, innermost last
    std::map<std::uint32_t, std::int64_t> set_values;  // annotation metric -> latest value
    std::uint32_t context = kNone;                     // of the current values; kNone: changed
    std::uint32_t mpi_depth = 0;
    std::uint64_t mpi_since = 0;
    std::uint32_t mpi_context = kNone;  // the context the outermost MPI call began in
    archive::PollFold fold;             // for the next leave()
  };
  struct Posted {
    std::uint64_t since;
    std::uint32_t context;
  };
  // The id of the location's context now (ByContext::contexts).
  std::uint32_t context_of(Location& l);
  bool matches(const std::string& attribute, std::size_t asked) const;

  const archive::Definitions& defs_;
  ByContext& out_;
  std::vector<Location> locations_;
  std::vector<int> event_of_region_;                               // PeruseEvent, or -1
  std::vector<std::unordered_map<std::uint64_t, Posted>> posted_;  // by rank, by request
  // Open values of process-scope attributes, innermost last, by rank: they hold for each of the
  // rank's threads, whichever began them.
  std::vector<std::vector<std::uint32_t>> process_annotations_;
  std::vector<std::map<std::uint32_t, std::int64_t>> process_set_values_;  // by rank
  std::vector<std::vector<std::uint32_t>> locations_of_rank_;
  std::map<std::vector<std::string>, std::uint32_t> ids_;
};

// The report's per-context analyses: with `by`, one for those attributes together
// (Report::by_context); without, one per attribute of the archive, the first kShownAlone
// (Report::by_attribute).
class ContextAnalyses : public archive::ForwardingSink<ContextAnalyses> {
 public:
  static constexpr std::size_t kShownAlone = 8;
  ContextAnalyses(const archive::Definitions& defs, const std::string& by, Report& out);

  template <typename Call>
  void route(std::uint32_t /*loc*/, std::uint64_t t, const Call& call) {
    for (auto& a : all_) call(*a, t);
  }

 private:
  std::vector<std::unique_ptr<ContextAnalysis>> all_;
};

}  // namespace perusetrace::report
