// The report's analyses as one pass over the archive's events in time order. State is kept only
// for what is in flight: requests between activation and completion (and, for nonblocking ones,
// until the program collects them), receives in the posted queue, messages in the unexpected
// queue, open queue searches and the MPI call stack of each location.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/case_listener.hpp"
#include "analysis/report_data.hpp"
#include "events/catalogue.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class Analysis : public archive::EventSink {
 public:
  Analysis(const archive::Definitions& defs, Report& out);

  void listen(CaseListener& listener) { listener_ = &listener; }

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void polls_folded(std::uint32_t loc, std::uint64_t, const archive::PollFold& f) override {
    locations_[loc].fold = f;
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const archive::PeruseFields& f) override;
  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    archive::split_point_to_point(*this, loc, t, e);
  }
  void send(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p);
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void recv(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p);
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request);

  // Closes the time integrals at the trace's end and decides what is missing.
  void finish();

 private:
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};

  struct Request {
    std::int32_t peer = -1;
    std::int32_t tag = 0;
    std::uint64_t bytes = 0;
    std::uint8_t operation = 0;
    std::uint64_t first = kNever, activate = kNever, xfer_begin = kNever, first_fragment = kNever,
                  last_fragment = kNever, xfer_end = kNever, complete = kNever;
    std::uint32_t fragments = 0;
    std::uint64_t first_fragment_bytes = 0;  // an XFER_CONTINUE's bytes are its fragment's
    bool nonblocking = false;  // posted by MPI_Isend/Irecv/Start: the program collects it
    bool settled = false;      // the MPI call it completed in has returned
    bool counted = false;      // its message statistics are taken
  };
  struct Posted {
    std::uint64_t since;
    std::int32_t peer, tag;
    bool internal;  // a collective's own receive
  };
  struct Unexpected {
    std::uint64_t since;
    std::int32_t peer, tag;
    std::uint32_t comm;
    std::uint64_t bytes;
  };
  struct Frame {
    std::uint32_t region;
    std::uint64_t since;
  };
  struct Location {
    std::uint32_t rank = 0;
    std::vector<Frame> stack;  // MPI calls
    std::string collective;    // the outermost collective call, if inside one
    std::uint64_t search_posted = kNever, search_unexpected = kNever;
    std::vector<std::uint64_t> completed;  // requests completed during the current MPI call
    archive::PollFold fold;                // for the next leave()
  };
  struct RankState {
    std::unordered_map<std::uint64_t, Request> requests;
    std::unordered_map<std::uint64_t, Posted> posted;
    std::deque<Unexpected> unexpected;
  };

  Request& request(std::uint32_t rank, std::uint64_t id, std::uint64_t t,
                   const archive::PeruseFields* f);
  void count_message(std::uint32_t rank, Request& r);
  void maybe_forget(std::uint32_t rank, std::uint64_t id);
  void collected(std::uint32_t loc, std::uint64_t t, std::uint64_t request);
  void request_nonblocking(std::uint32_t loc, std::uint64_t t, std::uint64_t id);
  void depth(QueueStat& q, std::uint64_t t, int change);
  // The other job `peer` of `comm` is a process of, or nullptr.
  JobStat* other_job(std::uint32_t comm, std::uint32_t peer);
  std::size_t bin(std::uint64_t t) const;
  PlacementStat* placement(std::int64_t a, std::int64_t b);
  // The Peruse events by family (peruse() dispatches).
  void activated(Location& l, std::uint64_t t, const archive::PeruseFields& f);
  void posted_queue(PeruseEvent e, const Location& l, std::uint64_t t,
                    const archive::PeruseFields& f);
  // A request of a collective's own traffic: made inside a collective call, or with one of Open
  // MPI's internal tags (below MPI_ANY_TAG, -1, which is a program's wildcard receive).
  static bool internal(const Location& l, std::int32_t tag) {
    return !l.collective.empty() || tag < kAnyTag;
  }
  static constexpr std::int32_t kAnyTag = -1;
  void unexpected_queue(PeruseEvent e, std::uint32_t rank, std::uint64_t t,
                        const archive::PeruseFields& f);
  void queue_search(PeruseEvent e, Location& l, std::uint64_t t);
  void transfer(PeruseEvent e, Location& l, std::uint64_t t, const archive::PeruseFields& f);
  void add_case(Pattern& p, const PatternCase& c);

  const archive::Definitions& defs_;
  Report& out_;
  std::vector<int> event_of_region_;  // index into peruse_event_names(), or -1
  std::vector<Location> locations_;
  std::vector<RankState> ranks_;
  bool remove_unexpected_selected_ = false;  // else REQ_MATCH_UNEX ends the unexpected wait
  bool track_requests_ = false;              // REQ_COMPLETE selected: requests end
  std::uint64_t pull_limit_ = 0;             // eager_limits.hpp
  std::uint64_t in_flight_ = 0;
  // Peruse events seen, by catalogue number (Report::observed, by name, once at the end: a
  // string per event made a tenth of the report's time).
  std::array<std::uint64_t, kPeruseEventCount> observed_{};
  CaseListener* listener_ = nullptr;
};

}  // namespace perusetrace::report
