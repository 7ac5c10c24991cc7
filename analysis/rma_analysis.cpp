#include "analysis/rma_analysis.hpp"

#include <string>

namespace perusetrace::report {

namespace {

// The kind of synchronisation an MPI function is, by name; kRmaSyncKinds for none.
std::uint8_t sync_kind(const std::string& name) {
  static const std::pair<const char*, RmaSyncKind> kKinds[] = {
      {"MPI_Win_fence", kRmaFence},       {"MPI_Win_post", kRmaPscw},
      {"MPI_Win_start", kRmaPscw},        {"MPI_Win_complete", kRmaPscw},
      {"MPI_Win_wait", kRmaPscw},         {"MPI_Win_test", kRmaPscw},
      {"MPI_Win_lock", kRmaLock},         {"MPI_Win_lock_all", kRmaLock},
      {"MPI_Win_unlock", kRmaLock},       {"MPI_Win_unlock_all", kRmaLock},
      {"MPI_Win_flush", kRmaFlush},       {"MPI_Win_flush_all", kRmaFlush},
      {"MPI_Win_flush_local", kRmaFlush}, {"MPI_Win_flush_local_all", kRmaFlush},
      {"MPI_Win_sync", kRmaFlush},
  };
  for (const auto& [function, kind] : kKinds)
    if (name == function) return static_cast<std::uint8_t>(kind);
  return kRmaSyncKinds;
}

}  // namespace

RmaAnalysis::RmaAnalysis(const archive::Definitions& defs, Report& out)
    : defs_(defs), out_(out.rma), open_(defs.locations.size()) {
  out_.present = !defs.windows.empty();
  out_.sync.resize(defs.ranks.size());
  for (const archive::WindowDef& w : defs.windows)
    out_.windows.push_back(
        {w.name, w.comm < defs.comms.size() ? defs.comms[w.comm].name : std::string(), {}});
  kind_of_.reserve(defs.regions.size());
  for (const archive::RegionDef& r : defs.regions)
    kind_of_.push_back(r.kind == archive::RegionKind::MpiFunction
                           ? sync_kind(r.name)
                           : static_cast<std::uint8_t>(kRmaSyncKinds));
}

void RmaAnalysis::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (loc >= open_.size() || region >= kind_of_.size() || kind_of_[region] == kRmaSyncKinds) return;
  if (open_[loc].region == archive::kNoRegion) open_[loc] = {region, t};
}

void RmaAnalysis::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (loc >= open_.size() || open_[loc].region != region) return;
  const std::uint32_t rank = defs_.locations[loc].rank;
  const std::uint8_t kind = kind_of_[region];
  if (rank < out_.sync.size()) {
    out_.sync[rank].calls[kind] += 1;
    out_.sync[rank].ns[kind] += t >= open_[loc].since ? t - open_[loc].since : 0;
  }
  open_[loc] = {};
}

void RmaAnalysis::rma(std::uint32_t loc, std::uint64_t, const archive::RmaEvent& e) {
  using K = archive::RmaEventKind;
  if (e.kind == K::CompleteNonBlocking || e.kind == K::CompleteBlocking) {
    pending_.erase(Key{loc, e.window, e.matching});
    return;
  }
  if (e.kind != K::Put && e.kind != K::Get && e.kind != K::Atomic) return;
  ++pending_[Key{loc, e.window, e.matching}];
  RmaTraffic* window = e.window < out_.windows.size() ? &out_.windows[e.window].traffic : nullptr;
  RmaTraffic* pair = nullptr;
  if (window != nullptr && loc < defs_.locations.size()) {
    const std::uint32_t comm = defs_.windows[e.window].comm;
    const std::vector<std::uint32_t>* members =
        comm < defs_.comms.size() ? &defs_.comms[comm].world_ranks : nullptr;
    if (members != nullptr && e.target < members->size())
      pair = &out_.pairs[{defs_.locations[loc].rank, (*members)[e.target]}];
  }
  for (RmaTraffic* t : {window, pair}) {
    if (t == nullptr) continue;
    (e.kind == K::Put ? t->puts : e.kind == K::Get ? t->gets : t->atomics) += 1;
    t->bytes_sent += e.sent;
    t->bytes_received += e.received;
  }
}

void RmaAnalysis::finish() {
  for (const auto& [key, operations] : pending_) out_.never_completed += operations;
  pending_.clear();
}

}  // namespace perusetrace::report
