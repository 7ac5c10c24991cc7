// Builds the report page's timeline (timeline_data.hpp) in the report's one pass over the
// archive: rows are locations; their state is the innermost MPI call (or the tracer writing its
// buffer) by kind; Peruse events become markers; the derived counters become lanes; messages
// are paired by archive::MessageMatcher. As the analysis finds pattern cases and messages
// (CaseListener), a detail window is kept around each one that ranks among the ones the report
// lists, and dropped when it no longer does.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "analysis/archive_analysis.hpp"
#include "analysis/peruse_analysis.hpp"
#include "analysis/wait_states.hpp"
#include "reader/archive_reader.hpp"
#include "reader/call_kind.hpp"
#include "reader/message_matcher.hpp"
#include "tools/report/timeline_data.hpp"
#include "tools/report/timeline_detail.hpp"
#include "tools/report/timeline_summary.hpp"

namespace perusetrace::report::timeline {

// The time range the page shows for an occurrence found at `time` lasting `duration`: the
// occurrence with a margin on either side (a fifth of it, at least a microsecond).
std::pair<std::uint64_t, std::uint64_t> occurrence_view(std::uint64_t time, std::uint64_t duration);

class TimelineBuilder : public PassObserver, private archive::MessageSink {
 public:
  TimelineBuilder(const archive::Definitions& defs, const Report& report);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t loc, std::uint64_t, const archive::PollFold& f) override {
    rows_[loc].fold = f;
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override;

  void pattern_case(const Pattern& pattern, const PatternCase& c) override;
  void message_case(const MessageCase& m) override;
  void wait_case(const WaitPatternStat& pattern, const WaitCase& c) override;

  // After the last event, while the report it was made with lives: builds the timeline.
  void finish() override;
  // Then: the timeline, its memory handed over.
  Timeline take() { return std::move(timeline_); }

 private:
  Timeline timeline_;
  struct Call {
    std::uint32_t region;
    std::uint64_t since, id;
  };
  struct Row {
    std::vector<Call> calls;  // MPI calls and tracer regions, innermost last
    std::uint32_t mpi_depth = 0;
    std::array<std::int64_t, kCounters> counters{};
    archive::PollFold fold;  // for the next leave(): the calls its state stands for
  };
  // A window kept for one listed occurrence.
  template <class Case>
  struct Kept {
    Case c;
    DetailKeeper::WindowId window;
  };

  void at(std::uint64_t t);  // the stream reached t
  static Item call_item(const Call& c, std::uint32_t loc, std::uint64_t end, std::size_t depth);
  void add(Item& item);
  void state_now(std::uint32_t loc, std::uint64_t t);
  void message(const archive::MatchedMessage& m) override;
  void open_calls(std::uint64_t t, std::vector<Item>& out) const;
  template <class Case, class Same>
  void keep(std::vector<Kept<Case>>& kept, const std::vector<std::pair<double, Case>>& ranked,
            const Case& c, std::uint64_t time, std::uint64_t duration, Same same);

  const archive::Definitions& defs_;
  const Report& report_;
  std::vector<std::uint8_t> tracked_;        // by region: an MPI call or the tracer's own
  std::vector<archive::CallKind> kind_;      // by region
  std::vector<std::uint32_t> peruse_index_;  // by region: its Peruse event, or kNotPeruse
  static constexpr std::uint32_t kNotPeruse = ~std::uint32_t{0};
  std::vector<int> counter_of_metric_;  // by metric: index into kCounterNames, or -1
  std::vector<Row> rows_;
  SummaryBuilder summary_;
  DetailKeeper detail_;
  archive::MessageMatcher matcher_;
  std::uint64_t now_ = 0;
  std::uint64_t next_id_ = 1;
  std::vector<Kept<PatternCase>> posted_queue_, posted_queue_in_collectives_, unexpected_queue_,
      complete_before_wait_;
  std::vector<Kept<MessageCase>> slowest_;
  std::array<std::vector<Kept<WaitCase>>, kWaitPatterns> waits_;
};

}  // namespace perusetrace::report::timeline
