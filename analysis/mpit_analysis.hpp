// The report's MPI_T section: performance variables from the archive's "MPI_T ..." metrics,
// per rank and per MPI call they were written in, and the control variables from its properties.
// A metric value belongs to the innermost MPI call open on its location: perusetrace writes what
// changed outside MPI just before a call's Enter and what the call caused just before its Leave
// (lib/mpit_session.cpp), so the call stack at the value says which of the two it is.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/report_data.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class MpitAnalysis : public archive::EventSink {
 public:
  MpitAnalysis(const archive::Definitions& defs, Report& out);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    add(loc, t, metric, static_cast<double>(value));
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    add(loc, t, metric, value);
  }

 private:
  enum class Part : std::uint8_t { Main, Moves, Change };
  struct Member {
    std::int32_t stat = -1;  // index into Report::mpit.pvars; -1: not an MPI_T value
    Part part = Part::Main;
  };
  void add(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value);
  const std::string& place(std::uint32_t loc) const;

  const archive::Definitions& defs_;
  Mpit& out_;
  std::uint64_t bin_ns_ = 1;
  std::vector<Member> members_;                         // by metric id
  std::vector<std::vector<std::uint32_t>> stacks_;      // open MPI calls by location
  std::unordered_map<std::uint64_t, double> previous_;  // a watermark's last value on a location
};

// The control variables of the archive's properties into `out` (archive_schema.hpp's formats).
void read_cvars(const archive::Definitions& defs, Mpit& out);

// The variables of `kind` that varied (PvarStat::varied), largest first: counters by their total
// change, values and watermarks by their highest value.
std::vector<const PvarStat*> ranked(const Mpit& m, PvarKind kind);

// Where a variable changed (counters) or rose (watermarks), most first.
std::vector<std::pair<std::string, PvarPlace>> places_by_change(const PvarStat& s);

}  // namespace perusetrace::report
