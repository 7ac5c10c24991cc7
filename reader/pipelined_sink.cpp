#include "reader/pipelined_sink.hpp"

namespace perusetrace::archive {

PipelinedSink::PipelinedSink(EventSink& next) : next_(next), queue_(kBatches) {
  writer_.reset(queue_.first(), this);
  worker_ = std::thread([this] { work(); });
}

PipelinedSink::~PipelinedSink() {
  // The reading side gave up (an error of its own): the analyses stop where they are.
  if (!finished_) queue_.abort(std::make_exception_ptr(ArchiveError("reading abandoned")));
  if (worker_.joinable()) worker_.join();
}

void PipelinedSink::work() {
  while (EventBatch* batch = queue_.take()) {
    try {
      replay(*batch, next_);
    } catch (...) {
      // The reading side's next hand-over throws this; it stops reading and passes it on.
      queue_.abort(std::current_exception());
      return;
    }
    queue_.give_back(batch);
  }
}

void PipelinedSink::finish() {
  finished_ = true;
  queue_.close(writer_.batch(), nullptr);
  if (worker_.joinable()) worker_.join();
  writer_.reset(nullptr, nullptr);
  if (std::exception_ptr error = queue_.aborted()) std::rethrow_exception(error);
}

}  // namespace perusetrace::archive
