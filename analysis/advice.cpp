#include "analysis/advice.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

namespace perusetrace::report {

namespace {

std::string ms(std::uint64_t ns) {
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

// Ranks that computed without calling MPI while their messages were in flight.
void progress_stalls(const WaitStates& w, std::vector<Advice>& out) {
  const WaitPatternStat& p = w.patterns[static_cast<std::size_t>(WaitPattern::ProgressStall)];
  for (const auto& [who, ns] : p.causes) {
    const auto& [rank, activity] = who;
    Advice a;
    a.ns = ns;
    a.kind = "code";
    a.finding = fmt::format(
        "rank {} spent time in {} without calling MPI while its messages were being "
        "transferred: the processes at their other end waited {} for the transfers to go on "
        "(progress stall)",
        rank, activity, ms(ns));
    a.change = fmt::format(
        "in {} on rank {}, call MPI_Test on the pending requests every few hundred microseconds "
        "(or finish the transfer before the computation): Open MPI moves the rest of a "
        "rendezvous message only inside MPI calls",
        activity, rank);
    out.push_back(std::move(a));
  }
}

// Rendezvous messages that a raised eager limit would send at once.
void protocols(const InsideMpi& in, std::vector<Advice>& out) {
  for (const ProtocolStat* p : {&in.intra, &in.inter}) {
    if (p->near == 0 || p->near_handshake_ns == 0) continue;
    const bool intra = p == &in.intra;
    const std::string parameter =
        !p->parameter.empty() ? p->parameter
        : intra               ? "btl_vader_eager_limit (Open MPI 4.1; btl_sm_eager_limit in 5.0)"
                              : "btl_tcp_eager_limit";
    // The limit covers Open MPI's match header too: a KiB of room above the largest message.
    const std::uint64_t value = (p->near_max_bytes + 1024 + 1023) / 1024 * 1024;
    Advice a;
    a.ns = p->near_handshake_ns;
    a.kind = "setting";
    a.finding = fmt::format(
        "{} messages of up to {} bytes {} took the rendezvous protocol (the eager limit is {}) "
        "and waited {} in its handshake",
        p->near, p->near_max_bytes, intra ? "within a host" : "between hosts",
        p->limit ? fmt::format("{} bytes", p->limit) : std::string("unknown"),
        ms(p->near_handshake_ns));
    a.change = fmt::format(
        "raise the eager limit for the next run: perusetrace run --mca {} {} (or "
        "OMPI_MCA_{}={}); it is read-only through MPI_T",
        parameter.substr(0, parameter.find(' ')), value, parameter.substr(0, parameter.find(' ')),
        value);
    out.push_back(std::move(a));
  }
}

void unexpected(const UnexpectedCopies& u, std::vector<Advice>& out) {
  if (u.messages == 0) return;
  const auto top = std::max_element(
      u.receives.begin(), u.receives.end(),
      [](const auto& a, const auto& b) { return a.second.count < b.second.count; });
  Advice a;
  a.ns = u.copy_ns;
  a.kind = "code";
  a.finding = fmt::format(
      "{} messages ({} bytes) arrived before their receive was posted and were copied twice; "
      "the copies out of the unexpected queue took {}{}",
      u.messages, u.bytes, ms(u.copy_ns),
      top == u.receives.end()
          ? std::string()
          : fmt::format(", {} of them received by {}", top->second.count, top->first));
  a.change = fmt::format(
      "post those receives before the messages can arrive (MPI_Irecv{})",
      top == u.receives.end() ? std::string() : " ahead of the code that reaches " + top->first);
  out.push_back(std::move(a));
}

void searches(const QueueSearches& s, std::vector<Advice>& out) {
  std::uint64_t n = 0, ns = 0, max_ns = 0;
  for (std::size_t c = 2; c < s.posted.size(); ++c) {  // 64 receives or more
    n += s.posted[c].searches;
    ns += s.posted[c].ns;
    max_ns = std::max(max_ns, s.posted[c].max_ns);
  }
  if (n == 0) return;
  Advice a;
  a.ns = ns;
  a.kind = "code";
  a.finding = fmt::format(
      "{} arriving messages searched a posted queue of {} or more receives: {} in all, the "
      "longest {}",
      n, kDepthFrom[2], ms(ns), ms(max_ns));
  a.change =
      "post the receives in the order their messages arrive (Open MPI searches the queue from "
      "its oldest receive), keep fewer outstanding at a time, and name the source instead of "
      "MPI_ANY_SOURCE where it is known";
  out.push_back(std::move(a));
}

// The costliest delays the wait states found, apart from progress stalls (above).
void delays(const WaitStates& w, std::vector<Advice>& out) {
  const WaitPatternStat& stall = w.patterns[static_cast<std::size_t>(WaitPattern::ProgressStall)];
  std::vector<std::pair<std::uint64_t, const std::pair<std::uint32_t, std::string>*>> costs;
  for (const auto& [who, d] : w.causes) {
    std::uint64_t ns = d.direct + d.propagated;
    if (auto s = stall.causes.find(who); s != stall.causes.end()) ns -= std::min(ns, s->second);
    // A delay in an MPI call is waiting of its own or MPI's work: the wait states show both.
    if (ns > 0 && who.second.rfind("MPI_", 0) != 0) costs.emplace_back(ns, &who);
  }
  std::sort(costs.begin(), costs.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < costs.size() && i < 3; ++i) {
    const auto& [rank, activity] = *costs[i].second;
    Advice a;
    a.ns = costs[i].first;
    a.kind = "code";
    a.finding = fmt::format("other processes waited {} for rank {} while it was in {}",
                            ms(costs[i].first), rank, activity);
    a.change = fmt::format(
        "balance the work of {} across the ranks (rank {} takes longer in it than the others "
        "wait for)",
        activity, rank);
    out.push_back(std::move(a));
  }
}

}  // namespace

std::vector<Advice> what_to_try(const Report& report) {
  std::vector<Advice> out;
  if (report.wait_states.present) progress_stalls(report.wait_states, out);
  protocols(report.inside, out);
  unexpected(report.inside.unexpected, out);
  searches(report.inside.searches, out);
  if (report.wait_states.present) delays(report.wait_states, out);
  // What cost less than a ten-thousandth of the run's rank time is not worth a change.
  const std::uint64_t rank_time = report.trace_ns * report.ranks.size();
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Advice& a) { return a.ns == 0 || a.ns * 10'000 < rank_time; }),
            out.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const Advice& a, const Advice& b) { return a.ns > b.ns; });
  return out;
}

}  // namespace perusetrace::report
