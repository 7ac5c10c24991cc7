// Events as fixed-size 48-byte records in batches: what the threads that decode an archive hand
// on (to the merge, to the analyses' thread), so that a batch crosses threads in one step and
// memory stays bounded by the number of batches, whatever the archive's size.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

enum class RecordKind : std::uint8_t {
  Enter,
  Leave,
  Peruse,
  Send,
  SendComplete,
  RecvRequest,
  Recv,
  Cancelled,
  Metric,
  RealMetric,
  Sample,
  Rma,
  IoCreate,
  IoDestroy,
  IoBegin,
  IoComplete,
  IoSeek,
  IoResize,
  PollFold,
  IoDelete,
  Collective,
  CollectiveRequest,
  DatatypeUse,
  Nothing,  // a record that turned out to say nothing: replay skips it
};

// One event; fields by kind as replay() reads them. `aux` is free for the reading threads'
// own notes (the Peruse fields an event carried); the analyses never see it.
struct EventRecord {
  RecordKind kind;
  std::uint8_t flag;
  std::uint8_t aux;
  std::uint32_t loc;
  std::uint64_t t;
  std::uint32_t a, b, c, d;
  std::uint64_t x, y;
};
static_assert(sizeof(EventRecord) == 48);

// A Peruse event's fields in its record: written by the batch, read by the merge and the replay.
inline void store_peruse(EventRecord& r, const PeruseFields& f) {
  r.b = static_cast<std::uint32_t>(f.peer);
  r.c = static_cast<std::uint32_t>(f.tag);
  r.d = f.comm;
  r.x = f.request;
  r.y = f.bytes;
  r.flag = f.operation;
}
inline PeruseFields peruse_fields(const EventRecord& r) {
  PeruseFields f;
  f.request = r.x;
  f.bytes = r.y;
  f.peer = static_cast<std::int32_t>(r.b);
  f.tag = static_cast<std::int32_t>(r.c);
  f.comm = r.d;
  f.operation = r.flag;
  return f;
}

// Samples and RMA events, rare and larger, wait beside the records that index them (`a`).
struct EventBatch {
  static constexpr std::size_t kRecords = 8192;
  std::vector<EventRecord> records;
  std::vector<Sample> samples;
  std::vector<RmaEvent> rmas;
  bool ends_range = false;  // the last batch of a range of events (EventDecoder::run_ranges)
  EventBatch() { records.reserve(kRecords); }
  bool full() const { return records.size() == kRecords; }
  void clear() {
    records.clear();
    samples.clear();
    rmas.clear();
    ends_range = false;
  }
};

// Takes a full batch and gives one to fill next (the same one, emptied, or another).
class BatchConsumer {
 public:
  virtual ~BatchConsumer() = default;
  virtual EventBatch* consume(EventBatch* full) = 0;
};

// Hands every record of `batch` to `sink` as the callback it stands for; or one record of it.
void replay(const EventBatch& batch, EventSink& sink);
void replay(const EventRecord& r, const EventBatch& batch, EventSink& sink);

// A BatchConsumer that replays each batch into a sink on the calling thread.
class ReplayInto final : public BatchConsumer {
 public:
  explicit ReplayInto(EventSink& sink) : sink_(sink) {}
  EventBatch* consume(EventBatch* full) override {
    replay(*full, sink_);
    full->clear();
    return full;
  }

 private:
  EventSink& sink_;
};

// Packs events into a batch, handing it to `consumer` when full. Final, so that a caller that
// knows the type (the archive's reading threads) calls it without a virtual call.
class BatchWriter final : public EventSink {
 public:
  BatchWriter() = default;
  BatchWriter(EventBatch* batch, BatchConsumer* consumer) : batch_(batch), consumer_(consumer) {}
  void reset(EventBatch* batch, BatchConsumer* consumer) {
    batch_ = batch;
    consumer_ = consumer;
  }
  EventBatch* batch() const { return batch_; }
  EventRecord& last() { return batch_->records.back(); }  // the record added last
  // Hands over what the batch holds (even if not full); keeps writing into the batch returned.
  void flush() {
    if (!batch_->records.empty()) batch_ = consumer_->consume(batch_);
  }
  void hand_over() { batch_ = consumer_->consume(batch_); }  // even when empty

  // A copy of `r`, whose sample or RMA event (if it has one) is in `from`.
  EventRecord& copy(const EventRecord& r, const EventBatch& from) {
    if (batch_->full()) batch_ = consumer_->consume(batch_);
    EventRecord& c = batch_->records.emplace_back(r);
    if (r.kind == RecordKind::Sample) {
      c.a = static_cast<std::uint32_t>(batch_->samples.size());
      batch_->samples.push_back(from.samples[r.a]);
    } else if (r.kind == RecordKind::Rma) {
      c.a = static_cast<std::uint32_t>(batch_->rmas.size());
      batch_->rmas.push_back(from.rmas[r.a]);
    }
    return c;
  }

  // A record with the fields most kinds use, where replay() reads them back: `a` the region,
  // handle or index, `x` and `y` the sizes and ids.
  [[gnu::always_inline]] EventRecord& add(RecordKind kind, std::uint32_t loc, std::uint64_t t,
                                          std::uint32_t a = 0, std::uint64_t x = 0,
                                          std::uint64_t y = 0) {
    if (batch_->full()) batch_ = consumer_->consume(batch_);
    EventRecord& r = batch_->records.emplace_back();
    r.kind = kind;
    r.flag = 0;
    r.aux = 0;
    r.loc = loc;
    r.t = t;
    r.a = a;
    r.x = x;
    r.y = y;
    return r;
  }

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    add(RecordKind::Enter, loc, t, region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    add(RecordKind::Leave, loc, t, region);
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    store_peruse(add(RecordKind::Peruse, loc, t, region), f);
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override {
    switch (e.kind) {
      case P2pKind::Send:
      case P2pKind::Recv: {
        EventRecord& r = add(e.kind == P2pKind::Send ? RecordKind::Send : RecordKind::Recv, loc, t,
                             e.peer, e.bytes, e.request);
        r.b = e.comm;
        r.c = e.tag;
        r.flag = e.blocking ? 1 : 0;
        break;
      }
      case P2pKind::SendComplete:
        add(RecordKind::SendComplete, loc, t, 0, e.request);
        break;
      case P2pKind::RecvRequest:
        add(RecordKind::RecvRequest, loc, t, 0, e.request);
        break;
      case P2pKind::Cancelled:
        add(RecordKind::Cancelled, loc, t, 0, e.request);
        break;
    }
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    add(RecordKind::Metric, loc, t, metric, static_cast<std::uint64_t>(value));
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    add(RecordKind::RealMetric, loc, t, metric, std::bit_cast<std::uint64_t>(value));
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    // Indexed after add(), which may have handed the batch over and started another.
    EventRecord& r = add(RecordKind::Sample, loc, t);
    r.a = static_cast<std::uint32_t>(batch_->samples.size());
    batch_->samples.push_back(s);
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    EventRecord& r = add(RecordKind::Rma, loc, t);
    r.a = static_cast<std::uint32_t>(batch_->rmas.size());
    batch_->rmas.push_back(e);
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size_at_open) override {
    add(RecordKind::IoCreate, loc, t, handle, size_at_open);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    add(RecordKind::IoDestroy, loc, t, handle);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    EventRecord& r = add(RecordKind::IoBegin, loc, t, handle, op.bytes, op.matching);
    r.flag = static_cast<std::uint8_t>(op.mode);
    r.b = op.flags;
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const IoComplete& e) override {
    add(RecordKind::IoComplete, loc, t, handle, e.bytes, e.matching);
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, const IoSeek& e) override {
    add(RecordKind::IoSeek, loc, t, handle, static_cast<std::uint64_t>(e.offset), e.reached).flag =
        static_cast<std::uint8_t>(e.from);
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                 const IoResize& e) override {
    add(RecordKind::IoResize, loc, t, handle, e.size).b = e.region;
  }
  void polls_folded(std::uint32_t loc, std::uint64_t t, const PollFold& f) override {
    add(RecordKind::PollFold, loc, t, f.region, f.calls, f.inside_ns);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    add(RecordKind::IoDelete, loc, t, file);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    EventRecord& r = add(RecordKind::Collective, loc, t, c.comm, c.sent, c.received);
    r.b = c.root;
    r.c = static_cast<std::uint32_t>(c.request >> 32);
    r.d = static_cast<std::uint32_t>(c.request);
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    add(RecordKind::CollectiveRequest, loc, t, 0, request);
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, const DatatypeBytes& d) override {
    add(RecordKind::DatatypeUse, loc, t, d.datatype, d.bytes).flag =
        static_cast<std::uint8_t>(d.use);
  }

 private:
  EventBatch* batch_ = nullptr;
  BatchConsumer* consumer_ = nullptr;
};

}  // namespace perusetrace::archive
