// Hands a stream of events to another sink on a second thread, in order: the threads that read
// the archive (OTF2's decoding, three quarters of a report's instructions) and the analyses then
// run side by side. Events travel in batches of fixed-size records (event_batch.hpp) through a
// fixed pool, so memory stays bounded whatever the archive's size; the reading side waits when
// the analyses fall behind.
#pragma once

#include <cstdint>
#include <thread>

#include "reader/archive_reader.hpp"
#include "reader/batch_queue.hpp"
#include "reader/event_batch.hpp"

namespace perusetrace::archive {

class PipelinedSink : public EventSink, public BatchConsumer {
 public:
  explicit PipelinedSink(EventSink& next);
  ~PipelinedSink() override;
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    writer_.enter(loc, t, region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    writer_.leave(loc, t, region);
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    writer_.peruse(loc, t, region, f);
  }
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    writer_.send(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    writer_.send_complete(loc, t, request);
  }
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    writer_.recv_request(loc, t, request);
  }
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    writer_.recv(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    writer_.request_cancelled(loc, t, request);
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    writer_.metric(loc, t, metric, value);
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    writer_.real_metric(loc, t, metric, value);
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    writer_.sample(loc, t, s);
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    writer_.rma(loc, t, e);
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size_at_open) override {
    writer_.io_handle_created(loc, t, handle, size_at_open);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    writer_.io_handle_destroyed(loc, t, handle);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    writer_.io_begin(loc, t, handle, op);
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint64_t bytes,
                   std::uint64_t matching) override {
    writer_.io_complete(loc, t, handle, bytes, matching);
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::int64_t offset,
               IoSeekFrom from, std::uint64_t reached) override {
    writer_.io_seek(loc, t, handle, offset, from, reached);
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint32_t region,
                 std::uint64_t size) override {
    writer_.io_resize(loc, t, handle, region, size);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    writer_.io_delete(loc, t, file);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    writer_.collective(loc, t, c);
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    writer_.collective_request(loc, t, request);
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype, DatatypeUse use,
                    std::uint64_t bytes) override {
    writer_.datatype_use(loc, t, datatype, use, bytes);
  }

  // The batches themselves: the archive reader writes its records straight into them (and
  // hands full ones on through consume()), without a call per event.
  BatchWriter& writer() { return writer_; }
  EventBatch* consume(EventBatch* full) override {
    handed_over_ = true;
    return queue_.consume(full);
  }
  // The sink the events go to, and whether none has been given yet: then the archive reader
  // may call it itself, on its own thread, when this one would have no core to run on.
  EventSink& next() { return next_; }
  bool untouched() const { return !handed_over_ && writer_.batch()->records.empty(); }

  // After the last event: waits until `next` has seen every event; rethrows what it threw.
  void finish();

 private:
  static constexpr std::size_t kBatches = 16;
  void work();

  EventSink& next_;
  BatchQueue queue_;
  BatchWriter writer_;
  bool finished_ = false, handed_over_ = false;
  std::thread worker_;
};

}  // namespace perusetrace::archive
