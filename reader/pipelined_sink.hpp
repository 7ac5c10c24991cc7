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
#include "reader/forwarding_sink.hpp"

namespace perusetrace::archive {

class PipelinedSink : public ForwardingSink<PipelinedSink>, public BatchConsumer {
 public:
  explicit PipelinedSink(EventSink& next);
  ~PipelinedSink() override;
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  template <typename Call>
  void route(std::uint32_t /*loc*/, std::uint64_t t, const Call& call) {
    call(writer_, t);
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
