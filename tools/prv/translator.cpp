#include "tools/prv/translator.hpp"

#include <algorithm>
#include <array>

#include "reader/call_kind.hpp"
#include "tools/prv/extrae_mpi.hpp"
#include "tools/prv/metric_types.hpp"
#include "tools/prv/prv_codes.hpp"

namespace perusetrace::prv {

std::uint32_t state_of(const RegionDef& r) {
  switch (archive::call_kind(r)) {
    case archive::CallKind::OutsideMpi:
      return kStateRunning;
    case archive::CallKind::WaitMessage:
      return kStateWaitMessage;
    case archive::CallKind::BlockingSend:
      return kStateBlockingSend;
    case archive::CallKind::SendRecv:
      return kStateSendRecv;
    case archive::CallKind::ImmediateSend:
      return kStateImmediateSend;
    case archive::CallKind::ImmediateRecv:
      return kStateImmediateRecv;
    case archive::CallKind::Wait:
      return kStateWait;
    case archive::CallKind::TestProbe:
      return kStateTestProbe;
    case archive::CallKind::Synchronization:
      return kStateSynchronization;
    case archive::CallKind::Collective:
      return kStateCollective;
    case archive::CallKind::Io:
      return kStateIo;
    case archive::CallKind::OtherMpi:
      return kStateOtherMpi;
    case archive::CallKind::Tracer:
      return kStateTracer;
  }
  return kStateOtherMpi;
}

Translator::Translator(const Definitions& defs, PrvWriter& out,
                       const std::vector<PrvObject>& objects)
    : defs_(defs), out_(out), objects_(objects), messages_(defs, *this) {
  threads_.resize(defs.locations.size());
  for (std::size_t i = 0; i < threads_.size(); ++i)
    threads_[i].state = defs.locations[i].thread == 0 ? kStateRunning : kStateNotCreated;
  for (const RegionDef& r : defs.regions) {
    region_state_.push_back(state_of(r));
    const auto extrae = extrae_mpi_call(r);
    region_extrae_.emplace_back(extrae ? std::uint64_t{extrae->group} : 0,
                                extrae ? extrae->value : 0);
  }
  metric_type_ = metric_types(defs);
  annotations_ = annotation_types(defs);
  for (std::size_t i = 0; i < defs.peruse_events.size(); ++i)
    if (defs.peruse_events[i] == "REQ_XFER_CONTINUE")
      xfer_continue_ = static_cast<std::uint32_t>(i);
}

void Translator::set_state(std::uint32_t loc, std::uint64_t t, std::uint32_t state) {
  Thread& th = threads_[loc];
  if (state == th.state) return;
  if (t > th.since) out_.state(objects_[loc], th.since, t, th.state);
  th.state = state;
  th.since = std::max(th.since, t);
}

// A thread other than a rank's first exists from its first record on.
void Translator::touch(std::uint32_t loc, std::uint64_t t) {
  Thread& th = threads_[loc];
  if (th.seen) return;
  th.seen = true;
  if (th.state == kStateNotCreated) set_state(loc, t, kStateRunning);
}

// The state and the MPI call event follow the innermost region.
void Translator::update(std::uint32_t loc, std::uint64_t t) {
  Thread& th = threads_[loc];
  set_state(loc, t, th.stack.empty() ? kStateRunning : region_state_[th.stack.back()]);
  std::uint64_t call = 0;
  for (auto it = th.stack.rbegin(); it != th.stack.rend(); ++it) {
    if (defs_.regions[*it].kind == RegionKind::MpiFunction) {
      call = *it + 1;
      break;
    }
  }
  if (call == th.mpi_call) return;
  th.mpi_call = call;
  // The call in our type, and in Extrae's: the group's type holds the function's value during
  // the call and 0 after it, as Extrae writes them (a function Extrae has no value for is
  // outside MPI there).
  std::array<std::pair<std::uint64_t, std::uint64_t>, 3> e;
  std::size_t n = 0;
  e[n++] = {kTypeMpiCall, call};
  const auto [type, value] =
      call == 0 ? std::pair<std::uint64_t, std::uint64_t>{0, 0} : region_extrae_[call - 1];
  if (th.extrae_type != 0 && th.extrae_type != type) e[n++] = {th.extrae_type, 0};
  if (type != 0) e[n++] = {type, value};
  th.extrae_type = type;
  out_.event(objects_[loc], t, e.data(), n);
}

void Translator::annotation_event(std::uint32_t loc, std::uint64_t t, std::uint32_t attribute) {
  std::uint64_t value = 0;
  const Thread& th = threads_[loc];
  for (auto it = th.stack.rbegin(); it != th.stack.rend(); ++it) {
    if (annotations_.attribute_of_region[*it] == attribute) {
      value = annotations_.value_of_region[*it];
      break;
    }
  }
  const std::pair<std::uint64_t, std::uint64_t> e{annotations_.attributes[attribute].type, value};
  out_.event(objects_[loc], t, &e, 1);
}

void Translator::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  touch(loc, t);
  Thread& th = threads_[loc];
  th.stack.push_back(region);
  th.began.push_back(t);
  if (const std::uint32_t a = annotations_.attribute_of_region[region]; a != AnnotationTypes::kNone)
    annotation_event(loc, t, a);
  if (defs_.regions[region].kind == RegionKind::MpiFunction && th.mpi_depth++ == 0)
    messages_.call_enter(loc);
  update(loc, t);
}

void Translator::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  touch(loc, t);
  Thread& th = threads_[loc];
  if (!th.began.empty()) th.began.pop_back();
  // Unwind to the region left (a missing Leave must not leave the thread stuck inside).
  auto it = std::find(th.stack.rbegin(), th.stack.rend(), region);
  if (it == th.stack.rend()) return;
  const std::size_t keep = static_cast<std::size_t>(th.stack.rend() - it) - 1;
  for (std::size_t i = keep; i < th.stack.size(); ++i) {
    if (defs_.regions[th.stack[i]].kind == RegionKind::MpiFunction && th.mpi_depth > 0 &&
        --th.mpi_depth == 0)
      messages_.call_leave(loc);
  }
  std::vector<std::uint32_t> ended;  // the annotation attributes whose value changes
  for (std::size_t i = keep; i < th.stack.size(); ++i)
    if (const std::uint32_t a = annotations_.attribute_of_region[th.stack[i]];
        a != AnnotationTypes::kNone && std::find(ended.begin(), ended.end(), a) == ended.end())
      ended.push_back(a);
  th.stack.resize(keep);
  update(loc, t);
  for (const std::uint32_t a : ended) annotation_event(loc, t, a);
}

void Translator::polls_folded(std::uint32_t loc, std::uint64_t t, const archive::PollFold& f) {
  touch(loc, t);
  const std::pair<std::uint64_t, std::uint64_t> e[2] = {{kTypePollCalls, f.calls},
                                                        {kTypePollInsideNs, f.inside_ns}};
  out_.event(objects_[loc], t, e, 2);
}

void Translator::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                        const PeruseFields& f) {
  touch(loc, t);
  const std::uint32_t index = defs_.regions[region].peruse_index;
  std::array<std::pair<std::uint64_t, std::uint64_t>, 10> e;
  std::size_t n = 0;
  e[n++] = {kTypePeruseEvent, index + 1};
  e[n++] = {kTypePeruseEachFirst + index, 1};
  if (f.request != 0) e[n++] = {kTypePeruseRequest, f.request};
  e[n++] = {kTypePerusePeer, peer_value(defs_.ranks.size(), f.peer)};
  if (f.tag >= 0) {
    e[n++] = {kTypePeruseTag, static_cast<std::uint64_t>(f.tag)};
  } else {
    e[n++] = {kTypePeruseInternalTag,
              static_cast<std::uint64_t>(-static_cast<std::int64_t>(f.tag))};
  }
  e[n++] = {kTypePeruseBytes, f.bytes};
  e[n++] = {kTypePeruseOperation, static_cast<std::uint64_t>(f.operation) + 1};
  if (f.comm != kNoComm) e[n++] = {kTypePeruseComm, static_cast<std::uint64_t>(f.comm) + 1};
  if (index == xfer_continue_) e[n++] = {kTypeFragmentBytes, f.bytes};
  out_.event(objects_[loc], t, e.data(), n);
  messages_.peruse(loc, t, index, f);
}

void Translator::point_to_point(std::uint32_t loc, std::uint64_t t,
                                const archive::PointToPoint& e) {
  touch(loc, t);
  const std::vector<std::uint64_t>& began = threads_[loc].began;
  messages_.point_to_point(loc, t, e, began.empty() ? t : began.back());
}

void Translator::metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                        std::int64_t value) {
  if (metric >= metric_type_.size() || metric_type_[metric] == 0) return;
  touch(loc, t);
  // A curve drifts below zero when only one event of a pair was selected, an MPI_T value can be
  // negative (docs/mpit.md): Paraver's values are not, show 0 then.
  const std::pair<std::uint64_t, std::uint64_t> e{
      metric_type_[metric], static_cast<std::uint64_t>(std::max<std::int64_t>(value, 0))};
  out_.event(objects_[loc], t, &e, 1);
}

void Translator::rma(std::uint32_t loc, std::uint64_t t, const archive::RmaEvent& e) {
  using K = archive::RmaEventKind;
  if ((e.kind != K::Put && e.kind != K::Get && e.kind != K::Atomic) || loc >= objects_.size())
    return;
  touch(loc, t);
  std::pair<std::uint64_t, std::uint64_t> events[4] = {
      {kTypeRmaOperation, e.kind == K::Put   ? 1u
                          : e.kind == K::Get ? 2u
                                             : 3u},
      {kTypeRmaWindow, e.window < defs_.windows.size() ? e.window + 1u : 0u},
      {kTypeRmaBytes, e.sent + e.received}};
  std::size_t n = 3;
  // The target as a world rank, through the window's communicator.
  if (e.window < defs_.windows.size()) {
    const std::uint32_t comm = defs_.windows[e.window].comm;
    if (comm < defs_.comms.size() && e.target < defs_.comms[comm].world_ranks.size())
      events[n++] = {kTypeRmaTarget, defs_.comms[comm].world_ranks[e.target] + 1u};
  }
  out_.event(objects_[loc], t, events, n);
}

void Translator::message(const archive::MatchedMessage& m) {
  out_.comm(objects_[m.send_loc], m.send_logical, m.send_physical, objects_[m.recv_loc],
            m.recv_logical, m.recv_physical, m.bytes, m.tag);
}

std::uint64_t Translator::settled_before() const {
  std::uint64_t earliest = messages_.earliest_pending_send();
  for (const Thread& th : threads_) earliest = std::min(earliest, th.since);
  return earliest;
}

void Translator::share(const std::vector<std::uint32_t>& locations) {
  converted_.assign(threads_.size(), false);
  std::vector<bool> ranks(defs_.ranks.size(), false);
  for (const std::uint32_t loc : locations) {
    converted_[loc] = true;
    if (defs_.locations[loc].rank < ranks.size()) ranks[defs_.locations[loc].rank] = true;
  }
  messages_.share(std::move(ranks));
}

void Translator::finish(std::uint64_t end) {
  messages_.finish();
  for (std::uint32_t loc = 0; loc < threads_.size(); ++loc) {
    if (!converted_.empty() && !converted_[loc]) continue;
    Thread& th = threads_[loc];
    const std::uint64_t last = std::max(end, th.since);
    if (last > th.since) out_.state(objects_[loc], th.since, last, th.state);
    th.since = last;
  }
}

}  // namespace perusetrace::prv
