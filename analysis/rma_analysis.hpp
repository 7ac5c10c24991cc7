// The report's one-sided communication section: every RMA operation by origin and target (world
// ranks) and by window, the time each rank spent in each kind of RMA synchronisation call, and
// the operations the trace never saw complete (a run cut short inside an epoch).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/report_data.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class RmaAnalysis : public archive::EventSink {
 public:
  RmaAnalysis(const archive::Definitions& defs, Report& out);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) override;
  // After the last event: the operations still waiting for their completion.
  void finish();

 private:
  struct Open {
    std::uint32_t region = archive::kNoRegion;
    std::uint64_t since = 0;
  };
  const archive::Definitions& defs_;
  Rma& out_;
  std::vector<std::uint8_t> kind_of_;  // by region: RmaSyncKind, or kRmaSyncKinds for none
  std::vector<Open> open_;             // the synchronisation call open on each location
  // Operations issued and not yet completed locally, by (location, window, matching id).
  struct Key {
    std::uint32_t loc, window;
    std::uint64_t matching;
    bool operator==(const Key& o) const {
      return loc == o.loc && window == o.window && matching == o.matching;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>{}(k.matching * 0x9e3779b97f4a7c15ull ^ k.loc ^
                                        (std::uint64_t{k.window} << 32));
    }
  };
  std::unordered_map<Key, std::uint64_t, KeyHash> pending_;
};

}  // namespace perusetrace::report
