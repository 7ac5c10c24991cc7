#include "reader/event_batch.hpp"

namespace perusetrace::archive {

namespace {

PointToPoint request_event(P2pKind kind, std::uint64_t request) {
  PointToPoint e;
  e.kind = kind;
  e.request = request;
  return e;
}

inline void replay_one(const EventRecord& r, const EventBatch& batch, EventSink& sink) {
  switch (r.kind) {
    case RecordKind::Enter:
      sink.enter(r.loc, r.t, r.a);
      break;
    case RecordKind::Leave:
      sink.leave(r.loc, r.t, r.a);
      break;
    case RecordKind::Peruse:
      sink.peruse(r.loc, r.t, r.a, peruse_fields(r));
      break;
    case RecordKind::Send:
    case RecordKind::Recv:
      sink.point_to_point(r.loc, r.t,
                          {r.kind == RecordKind::Send ? P2pKind::Send : P2pKind::Recv, r.a, r.b,
                           r.c, r.x, r.y, r.flag != 0});
      break;
    case RecordKind::SendComplete:
      sink.point_to_point(r.loc, r.t, request_event(P2pKind::SendComplete, r.x));
      break;
    case RecordKind::RecvRequest:
      sink.point_to_point(r.loc, r.t, request_event(P2pKind::RecvRequest, r.x));
      break;
    case RecordKind::Cancelled:
      sink.point_to_point(r.loc, r.t, request_event(P2pKind::Cancelled, r.x));
      break;
    case RecordKind::Metric:
      sink.metric(r.loc, r.t, r.a, static_cast<std::int64_t>(r.x));
      break;
    case RecordKind::RealMetric:
      sink.real_metric(r.loc, r.t, r.a, std::bit_cast<double>(r.x));
      break;
    case RecordKind::Sample:
      sink.sample(r.loc, r.t, batch.samples[r.a]);
      break;
    case RecordKind::Rma:
      sink.rma(r.loc, r.t, batch.rmas[r.a]);
      break;
    case RecordKind::IoCreate:
      sink.io_handle_created(r.loc, r.t, r.a, r.x);
      break;
    case RecordKind::IoDestroy:
      sink.io_handle_destroyed(r.loc, r.t, r.a);
      break;
    case RecordKind::IoBegin:
      sink.io_begin(r.loc, r.t, r.a, {static_cast<IoMode>(r.flag), r.b, r.x, r.y});
      break;
    case RecordKind::IoComplete:
      sink.io_complete(r.loc, r.t, r.a, {r.x, r.y});
      break;
    case RecordKind::IoSeek:
      sink.io_seek(r.loc, r.t, r.a,
                   {static_cast<std::int64_t>(r.x), static_cast<IoSeekFrom>(r.flag), r.y});
      break;
    case RecordKind::IoResize:
      sink.io_resize(r.loc, r.t, r.a, {r.b, r.x});
      break;
    case RecordKind::PollFold:
      sink.polls_folded(r.loc, r.t, {r.a, r.x, r.y});
      break;
    case RecordKind::IoDelete:
      sink.io_delete(r.loc, r.t, r.a);
      break;
    case RecordKind::Collective:
      sink.collective(r.loc, r.t, Collective{r.a, r.b, r.x, r.y, std::uint64_t{r.c} << 32 | r.d});
      break;
    case RecordKind::CollectiveRequest:
      sink.collective_request(r.loc, r.t, r.x);
      break;
    case RecordKind::DatatypeUse:
      sink.datatype_use(r.loc, r.t, {r.a, static_cast<DatatypeUse>(r.flag), r.x});
      break;
    case RecordKind::Nothing:
      break;
  }
}

}  // namespace

void replay(const EventRecord& r, const EventBatch& batch, EventSink& sink) {
  replay_one(r, batch, sink);
}

void replay(const EventBatch& batch, EventSink& sink) {
  for (const EventRecord& r : batch.records) replay_one(r, batch, sink);
}

}  // namespace perusetrace::archive
