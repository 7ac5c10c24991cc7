// The rounds in which a parallel conversion's ranks exchange message halves while they read
// (tools/prv/parallel_convert.cpp, tools/export/perfetto_parallel.cpp): the trace's time cut
// into windows of about kEventsPerRound events of the archive each, a round whenever a rank's
// pass reaches the end of one, the rounds it has not reached done after its pass. Every rank
// runs every round (the exchange is collective), whatever its share and even when its pass
// failed, so what waits for its other half is what crosses ranks in about one window.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "reader/forwarding_sink.hpp"
#include "reader/message_halves.hpp"
#include "reader/message_matcher.hpp"
#include "tools/common/analysis_group.hpp"

namespace perusetrace::tools {

constexpr std::uint64_t kEventsPerRound = std::uint64_t{1} << 22;
constexpr unsigned kMaxRounds = 4096;

// The same on every rank: it depends on the definitions alone, and on
// PERUSETRACE_EVENTS_PER_ROUND when set (the same in every rank's environment: mpirun passes
// the launcher's on), which smaller rounds need: less held, more rounds.
inline unsigned exchange_rounds(const archive::Definitions& defs) {
  std::uint64_t per_round = kEventsPerRound;
  if (const char* text = std::getenv("PERUSETRACE_EVENTS_PER_ROUND"); text != nullptr) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(text, &end, 10);
    if (end != text && *end == '\0' && n > 0) per_round = n;
  }
  return static_cast<unsigned>(
      std::clamp<std::uint64_t>(defs.total_events / per_round, 1, kMaxRounds));
}

// Collective: one round's exchange. Each of `mine` goes, encoded, to the analysis rank that
// reads its receiver (`owner`, by world rank: tools/common/parallel_parts.hpp's share_owners);
// returns the halves the others sent here, in no particular order. Throws
// archive::ArchiveError for bytes that are not halves (after the exchange: every rank has
// taken part).
inline std::vector<archive::SendHalf> exchange_halves(AnalysisGroup& group,
                                                      const std::vector<archive::SendHalf>& mine,
                                                      const std::vector<unsigned>& owner) {
  std::vector<std::vector<archive::SendHalf>> to(group.size());
  for (const archive::SendHalf& h : mine)
    to[h.key.to < owner.size() ? owner[h.key.to] : 0].push_back(h);
  std::vector<std::string> outgoing(group.size());
  for (unsigned p = 0; p < group.size(); ++p)
    outgoing[p] = archive::encode_halves(std::move(to[p]));
  const std::vector<std::string> incoming = group.exchange(std::move(outgoing));
  std::vector<archive::SendHalf> halves;
  for (const std::string& bytes : incoming) archive::decode_halves(bytes, halves);
  return halves;
}

class RoundSink final : public archive::ForwardingSink<RoundSink> {
 public:
  RoundSink(archive::EventSink& next, std::uint64_t trace_ns, unsigned rounds,
            std::function<void()> round)
      : next_(next), trace_ns_(trace_ns), rounds_(rounds), round_(std::move(round)) {}

  template <typename Call>
  void route(std::uint32_t /*loc*/, std::uint64_t t, const Call& call) {
    while (done_ < rounds_ && t >= end_of(done_)) run();
    call(next_, t);
  }
  // The rounds the pass did not reach.
  void finish() {
    while (done_ < rounds_) run();
  }
  unsigned done() const { return done_; }

 private:
  std::uint64_t end_of(unsigned round) const {
    // trace_ns * (round + 1) / rounds, without overflow.
    const std::uint64_t k = round + 1;
    return trace_ns_ / rounds_ * k + trace_ns_ % rounds_ * k / rounds_;
  }
  void run() {
    ++done_;
    round_();
  }

  archive::EventSink& next_;
  std::uint64_t trace_ns_;
  unsigned rounds_;
  unsigned done_ = 0;
  std::function<void()> round_;
};

}  // namespace perusetrace::tools
