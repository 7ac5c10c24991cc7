// Batches of event records passed from one thread that fills them to one that empties them,
// through a fixed pool: the filling thread waits when the pool is used up, so memory stays
// bounded however far ahead it could run.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "reader/event_batch.hpp"

namespace perusetrace::archive {

class BatchQueue final : public BatchConsumer {
 public:
  explicit BatchQueue(std::size_t batches);
  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // The filling thread: the first batch to fill; then each full one for an empty one. When the
  // emptying thread gave up (abort), rethrows its reason instead.
  EventBatch* first();
  EventBatch* consume(EventBatch* full) override;
  // The filling thread is done: `last` (may be empty) is the last batch, `error` why the
  // stream ended early (null when it did not).
  void close(EventBatch* last, std::exception_ptr error);

  // The emptying thread: the next full batch, waiting for it; null once the stream is closed
  // and every batch taken (then error() says whether it ended early).
  EventBatch* take();
  void give_back(EventBatch* batch);
  std::exception_ptr error();
  // The emptying thread gives up: the filling thread's next consume() throws `why`, and take()
  // returns null from now on.
  void abort(std::exception_ptr why);
  std::exception_ptr aborted();  // abort's reason, or null

 private:
  std::vector<std::unique_ptr<EventBatch>> pool_;
  std::mutex mutex_;
  std::condition_variable to_consumer_, to_producer_;
  std::deque<EventBatch*> full_;
  std::vector<EventBatch*> empty_;
  bool closed_ = false;
  std::exception_ptr error_, abort_;
};

}  // namespace perusetrace::archive
