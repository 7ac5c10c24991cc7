// OTF2 events of a perusetrace archive to Paraver records: per-thread states from the MPI
// regions, the MPI call in progress, Peruse events with their fields, the derived counters,
// the annotations in force, and (through MessageMatcher) the communications.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "reader/message_matcher.hpp"
#include "tools/prv/annotation_types.hpp"
#include "tools/prv/prv_archive.hpp"
#include "tools/prv/prv_writer.hpp"

namespace perusetrace::prv {

// The state a thread is in while the region is the innermost one it is inside.
std::uint32_t state_of(const RegionDef& region);

class Translator : public EventSink, private archive::MessageSink {
 public:
  Translator(const Definitions& defs, PrvWriter& out, const std::vector<PrvObject>& objects);

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t loc, std::uint64_t t, const archive::PollFold& f) override;
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override;
  void rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) override;

  // Closes every thread's last state at `end` (or later, if a thread went on longer).
  void finish(std::uint64_t end);

  // A parallel conversion: this process converts the locations `locations` (indices into
  // Definitions::locations) and no others; `finish` closes only theirs. The messages they send
  // to, and receive from, ranks read elsewhere go through MessageMatcher::share.
  void share(const std::vector<std::uint32_t>& locations);

  const archive::MessageMatcher& messages() const { return messages_; }
  archive::MessageMatcher& messages() { return messages_; }
  // No record still to come sorts before this time: every thread's current state began at or
  // after it (a thread not yet seen at 0), and so did every message not yet written. Events are
  // read in time order, so later ones come at or after it too (without clock repair's moves).
  std::uint64_t settled_before() const;

 private:
  struct Thread {
    std::vector<std::uint32_t> stack;  // regions entered, innermost last
    // When each open region began, as the clock repair's replay sees them (clock_repair.cpp):
    // every Enter pushes, every Leave pops.
    std::vector<std::uint64_t> began;
    std::uint32_t state;
    std::uint64_t since = 0;
    std::uint64_t mpi_call = 0;     // value of the MPI call event in effect
    std::uint64_t extrae_type = 0;  // Extrae's MPI type whose value is not 0 now, 0: none
    std::uint32_t mpi_depth = 0;
    bool seen = false;
  };
  void touch(std::uint32_t loc, std::uint64_t t);
  void set_state(std::uint32_t loc, std::uint64_t t, std::uint32_t state);
  void update(std::uint32_t loc, std::uint64_t t);
  // The value of the annotation attribute `attribute` now in force on the thread, as an event.
  void annotation_event(std::uint32_t loc, std::uint64_t t, std::uint32_t attribute);
  // A matched message, as a communication record.
  void message(const archive::MatchedMessage& m) override;

  const Definitions& defs_;
  PrvWriter& out_;
  const std::vector<PrvObject>& objects_;
  std::vector<Thread> threads_;
  std::vector<bool> converted_;  // by location; empty: all
  std::vector<std::uint32_t> region_state_;
  // By region: Extrae's MPI type and value of the call (type 0: Extrae has none).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> region_extrae_;
  std::vector<std::uint64_t> metric_type_;  // by metric id, 0: not shown
  AnnotationTypes annotations_;
  std::uint32_t xfer_continue_ = 0xffffffffu;  // peruse index of REQ_XFER_CONTINUE
  archive::MessageMatcher messages_;
};

}  // namespace perusetrace::prv
