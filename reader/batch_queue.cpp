#include "reader/batch_queue.hpp"

namespace perusetrace::archive {

BatchQueue::BatchQueue(std::size_t batches) {
  for (std::size_t i = 0; i < batches; ++i) {
    pool_.push_back(std::make_unique<EventBatch>());
    empty_.push_back(pool_.back().get());
  }
}

EventBatch* BatchQueue::first() {
  std::lock_guard lock(mutex_);
  EventBatch* b = empty_.back();
  empty_.pop_back();
  return b;
}

EventBatch* BatchQueue::consume(EventBatch* full) {
  std::unique_lock lock(mutex_);
  if (abort_) std::rethrow_exception(abort_);
  full_.push_back(full);
  to_consumer_.notify_one();
  to_producer_.wait(lock, [&] { return !empty_.empty() || abort_; });
  if (abort_) std::rethrow_exception(abort_);
  EventBatch* b = empty_.back();
  empty_.pop_back();
  return b;
}

void BatchQueue::close(EventBatch* last, std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (abort_) {
      closed_ = true;  // nobody takes batches any more, and `last` may already be queued
      return;
    }
    if (last != nullptr && !last->records.empty()) {
      full_.push_back(last);
    } else if (last != nullptr) {
      empty_.push_back(last);
    }
    error_ = error;
    closed_ = true;
  }
  to_consumer_.notify_all();
}

EventBatch* BatchQueue::take() {
  std::unique_lock lock(mutex_);
  to_consumer_.wait(lock, [&] { return !full_.empty() || closed_ || abort_; });
  if (abort_ || full_.empty()) return nullptr;
  EventBatch* b = full_.front();
  full_.pop_front();
  return b;
}

void BatchQueue::give_back(EventBatch* batch) {
  batch->clear();
  {
    std::lock_guard lock(mutex_);
    empty_.push_back(batch);
  }
  to_producer_.notify_one();
}

std::exception_ptr BatchQueue::error() {
  std::lock_guard lock(mutex_);
  return error_;
}

std::exception_ptr BatchQueue::aborted() {
  std::lock_guard lock(mutex_);
  return abort_;
}

void BatchQueue::abort(std::exception_ptr why) {
  {
    std::lock_guard lock(mutex_);
    if (!abort_) abort_ = why;
  }
  to_producer_.notify_all();
  to_consumer_.notify_all();
}

}  // namespace perusetrace::archive
