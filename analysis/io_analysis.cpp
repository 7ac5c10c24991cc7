#include "analysis/io_analysis.hpp"

#include <algorithm>

namespace perusetrace::report {

IoAnalysis::IoAnalysis(const archive::Definitions& defs, Report& out)
    : defs_(defs), out_(out.io), calls_(defs.locations.size()) {
  out_.present = !defs.files.empty();
  out_.ranks.resize(defs.ranks.size());
  for (const archive::FileDef& f : defs.files)
    out_.files.push_back({f.name,
                          f.initial_size == archive::kUnknownSize ? kIoUnknownSize : f.initial_size,
                          std::vector<IoRankStat>(defs.ranks.size())});
  file_function_.reserve(defs.regions.size());
  for (const archive::RegionDef& r : defs.regions)
    file_function_.push_back(r.kind == archive::RegionKind::MpiFunction &&
                             r.role == archive::RegionRole::FileIo);
}

std::uint32_t IoAnalysis::file_of(std::uint32_t handle) const {
  return handle < defs_.io_handles.size() ? defs_.io_handles[handle].file : 0xffffffffu;
}

IoRankStat* IoAnalysis::stat(std::uint32_t loc, std::uint32_t file) {
  const std::uint32_t rank = rank_of(loc);
  if (file >= out_.files.size() || rank >= out_.files[file].ranks.size()) return nullptr;
  Call& c = calls_[loc];
  if (c.depth > 0 && std::find(c.files.begin(), c.files.end(), file) == c.files.end())
    c.files.push_back(file);
  IoRankStat& s = out_.files[file].ranks[rank];
  s.used = true;
  return &s;
}

void IoAnalysis::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size() ||
      defs_.regions[region].kind != archive::RegionKind::MpiFunction)
    return;
  Call& c = calls_[loc];
  if (c.depth++ > 0) return;
  c.since = t;
  c.file_function = file_function_[region];
  c.files.clear();
}

void IoAnalysis::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  if (region >= defs_.regions.size() ||
      defs_.regions[region].kind != archive::RegionKind::MpiFunction)
    return;
  Call& c = calls_[loc];
  if (c.depth == 0 || --c.depth > 0) return;
  const std::uint64_t ns = t - std::min(t, c.since);
  const std::uint32_t rank = rank_of(loc);
  for (const std::uint32_t file : c.files) {
    IoRankStat& s = out_.files[file].ranks[rank];
    ++s.calls;
    s.call_ns += ns;
  }
  if (c.file_function && rank < out_.ranks.size()) {
    ++out_.ranks[rank].calls;
    out_.ranks[rank].ns += ns;
  }
}

void IoAnalysis::io_handle_created(std::uint32_t loc, std::uint64_t, std::uint32_t handle,
                                   std::uint64_t) {
  if (IoRankStat* s = stat(loc, file_of(handle))) ++s->opens;
}

void IoAnalysis::io_handle_destroyed(std::uint32_t loc, std::uint64_t, std::uint32_t handle) {
  if (IoRankStat* s = stat(loc, file_of(handle))) ++s->closes;
}

void IoAnalysis::io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                          const archive::IoBegin& op) {
  const std::uint32_t file = file_of(handle);
  if (stat(loc, file) == nullptr) return;
  pending_[{rank_of(loc), op.matching}] = {file, op.mode, op.flags, t};
}

void IoAnalysis::io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t,
                             const archive::IoComplete& done) {
  auto bytes = done.bytes;
  const auto matching = done.matching;
  const auto it = pending_.find({rank_of(loc), matching});
  if (it == pending_.end()) return;
  const Pending op = it->second;
  pending_.erase(it);
  IoRankStat* s = stat(loc, op.file);
  if (s == nullptr) return;
  const std::uint64_t ns = t - std::min(t, op.since);
  if (op.mode == archive::IoMode::Flush) {
    ++s->flushes.operations;
    s->flushes.ns += ns;
    return;
  }
  if (bytes == archive::kUnknownSize) bytes = 0;
  const bool collective = (op.flags & archive::kIoCollective) != 0;
  const bool nonblocking = (op.flags & archive::kIoNonBlocking) != 0;
  const IoKind kind = nonblocking
                          ? (collective ? kIoCollectiveNonblocking : kIoIndependentNonblocking)
                          : (collective ? kIoCollective : kIoIndependent);
  for (IoTraffic* traffic :
       {op.mode == archive::IoMode::Read ? &s->reads : &s->writes, &s->kinds[kind]}) {
    ++traffic->operations;
    traffic->bytes += bytes;
    traffic->ns += ns;
  }
}

void IoAnalysis::io_seek(std::uint32_t loc, std::uint64_t, std::uint32_t handle,
                         const archive::IoSeek& /*seek*/) {
  if (IoRankStat* s = stat(loc, file_of(handle))) ++s->seeks;
}

void IoAnalysis::io_resize(std::uint32_t loc, std::uint64_t, std::uint32_t handle,
                           const archive::IoResize& /*resize*/) {
  if (IoRankStat* s = stat(loc, file_of(handle))) ++s->resizes;
}

void IoAnalysis::io_delete(std::uint32_t loc, std::uint64_t, std::uint32_t file) {
  if (IoRankStat* s = stat(loc, file)) ++s->deletes;
}

void IoAnalysis::finish() {
  for (const auto& [key, op] : pending_)
    if (op.file < out_.files.size() && key.first < out_.files[op.file].ranks.size())
      ++out_.files[op.file].ranks[key.first].unfinished;
  pending_.clear();
}

}  // namespace perusetrace::report
