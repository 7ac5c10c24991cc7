#include "tools/archive/pipelined_sink.hpp"

#include <bit>

namespace perusetrace::archive {

PipelinedSink::PipelinedSink(EventSink& next) : next_(next) {
  for (std::size_t i = 0; i < kBatches; ++i) {
    pool_.push_back(std::make_unique<Batch>());
    pool_.back()->records.reserve(kBatchRecords);
    empty_.push_back(pool_.back().get());
  }
  current_ = empty_.front();
  empty_.pop_front();
  worker_ = std::thread([this] { work(); });
}

PipelinedSink::~PipelinedSink() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  to_worker_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void PipelinedSink::hand_over() {
  std::unique_lock lock(mutex_);
  full_.push_back(current_);
  current_ = nullptr;
  to_worker_.notify_one();
  to_reader_.wait(lock, [&] { return !empty_.empty() || error_; });
  // The analyses failed: the reading stops with their error (the reader passes it on).
  if (error_) std::rethrow_exception(error_);
  current_ = empty_.front();
  empty_.pop_front();
}

void PipelinedSink::work() {
  for (;;) {
    Batch* batch = nullptr;
    {
      std::unique_lock lock(mutex_);
      to_worker_.wait(lock, [&] { return !full_.empty() || done_ || stop_; });
      if (stop_ || full_.empty()) return;
      batch = full_.front();
      full_.pop_front();
    }
    try {
      if (!error_) replay(*batch);
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    batch->records.clear();
    batch->samples.clear();
    batch->rmas.clear();
    {
      std::lock_guard lock(mutex_);
      empty_.push_back(batch);
    }
    to_reader_.notify_one();
  }
}

void PipelinedSink::finish() {
  {
    std::unique_lock lock(mutex_);
    if (current_ != nullptr && !current_->records.empty()) {
      full_.push_back(current_);
      current_ = nullptr;
    }
    done_ = true;
  }
  to_worker_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (error_) std::rethrow_exception(error_);
}

void PipelinedSink::replay(const Batch& batch) {
  for (const Record& r : batch.records) {
    switch (r.kind) {
      case Kind::Enter:
        next_.enter(r.loc, r.t, r.a);
        break;
      case Kind::Leave:
        next_.leave(r.loc, r.t, r.a);
        break;
      case Kind::Peruse: {
        PeruseFields f;
        f.request = r.x;
        f.bytes = r.y;
        f.peer = static_cast<std::int32_t>(r.b);
        f.tag = static_cast<std::int32_t>(r.c);
        f.comm = r.d;
        f.operation = r.flag;
        next_.peruse(r.loc, r.t, r.a, f);
        break;
      }
      case Kind::Send:
        next_.send(r.loc, r.t, r.a, r.b, r.c, r.x, r.y, r.flag != 0);
        break;
      case Kind::SendComplete:
        next_.send_complete(r.loc, r.t, r.x);
        break;
      case Kind::RecvRequest:
        next_.recv_request(r.loc, r.t, r.x);
        break;
      case Kind::Recv:
        next_.recv(r.loc, r.t, r.a, r.b, r.c, r.x, r.y, r.flag != 0);
        break;
      case Kind::Cancelled:
        next_.request_cancelled(r.loc, r.t, r.x);
        break;
      case Kind::Metric:
        next_.metric(r.loc, r.t, r.a, static_cast<std::int64_t>(r.x));
        break;
      case Kind::RealMetric:
        next_.real_metric(r.loc, r.t, r.a, std::bit_cast<double>(r.x));
        break;
      case Kind::Sample:
        next_.sample(r.loc, r.t, batch.samples[r.a]);
        break;
      case Kind::Rma:
        next_.rma(r.loc, r.t, batch.rmas[r.a]);
        break;
      case Kind::IoCreate:
        next_.io_handle_created(r.loc, r.t, r.a, r.x);
        break;
      case Kind::IoDestroy:
        next_.io_handle_destroyed(r.loc, r.t, r.a);
        break;
      case Kind::IoBegin:
        next_.io_begin(r.loc, r.t, r.a, {static_cast<IoMode>(r.flag), r.b, r.x, r.y});
        break;
      case Kind::IoComplete:
        next_.io_complete(r.loc, r.t, r.a, r.x, r.y);
        break;
      case Kind::IoSeek:
        next_.io_seek(r.loc, r.t, r.a, static_cast<std::int64_t>(r.x),
                      static_cast<IoSeekFrom>(r.flag), r.y);
        break;
      case Kind::IoResize:
        next_.io_resize(r.loc, r.t, r.a, r.b, r.x);
        break;
      case Kind::IoDelete:
        next_.io_delete(r.loc, r.t, r.a);
        break;
      case Kind::Collective:
        next_.collective(r.loc, r.t,
                         Collective{r.a, r.b, r.x, r.y, std::uint64_t{r.c} << 32 | r.d});
        break;
      case Kind::CollectiveRequest:
        next_.collective_request(r.loc, r.t, r.x);
        break;
      case Kind::DatatypeUse:
        next_.datatype_use(r.loc, r.t, r.a, static_cast<DatatypeUse>(r.flag), r.x);
        break;
    }
  }
}

void PipelinedSink::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  next_record(Kind::Enter, loc, t).a = region;
}

void PipelinedSink::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  next_record(Kind::Leave, loc, t).a = region;
}

void PipelinedSink::peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
                           const PeruseFields& f) {
  Record& r = next_record(Kind::Peruse, loc, t);
  r.a = region;
  r.b = static_cast<std::uint32_t>(f.peer);
  r.c = static_cast<std::uint32_t>(f.tag);
  r.d = f.comm;
  r.x = f.request;
  r.y = f.bytes;
  r.flag = f.operation;
}

void PipelinedSink::send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
                         std::uint32_t tag, std::uint64_t bytes, std::uint64_t request,
                         bool blocking) {
  Record& r = next_record(Kind::Send, loc, t);
  r.a = peer;
  r.b = comm;
  r.c = tag;
  r.x = bytes;
  r.y = request;
  r.flag = blocking ? 1 : 0;
}

void PipelinedSink::send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  next_record(Kind::SendComplete, loc, t).x = request;
}

void PipelinedSink::recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  next_record(Kind::RecvRequest, loc, t).x = request;
}

void PipelinedSink::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
                         std::uint32_t tag, std::uint64_t bytes, std::uint64_t request,
                         bool blocking) {
  Record& r = next_record(Kind::Recv, loc, t);
  r.a = peer;
  r.b = comm;
  r.c = tag;
  r.x = bytes;
  r.y = request;
  r.flag = blocking ? 1 : 0;
}

void PipelinedSink::request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  next_record(Kind::Cancelled, loc, t).x = request;
}

void PipelinedSink::metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                           std::int64_t value) {
  Record& r = next_record(Kind::Metric, loc, t);
  r.a = metric;
  r.x = static_cast<std::uint64_t>(value);
}

void PipelinedSink::real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                                double value) {
  Record& r = next_record(Kind::RealMetric, loc, t);
  r.a = metric;
  r.x = std::bit_cast<std::uint64_t>(value);
}

void PipelinedSink::sample(std::uint32_t loc, std::uint64_t t, const Sample& s) {
  Record& r = next_record(Kind::Sample, loc, t);
  r.a = static_cast<std::uint32_t>(current_->samples.size());
  current_->samples.push_back(s);
}

void PipelinedSink::collective(std::uint32_t loc, std::uint64_t t, const Collective& c) {
  Record& r = next_record(Kind::Collective, loc, t);
  r.a = c.comm;
  r.b = c.root;
  r.c = static_cast<std::uint32_t>(c.request >> 32);
  r.d = static_cast<std::uint32_t>(c.request);
  r.x = c.sent;
  r.y = c.received;
}

void PipelinedSink::collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
  next_record(Kind::CollectiveRequest, loc, t).x = request;
}

void PipelinedSink::datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype,
                                 DatatypeUse use, std::uint64_t bytes) {
  Record& r = next_record(Kind::DatatypeUse, loc, t);
  r.a = datatype;
  r.flag = static_cast<std::uint8_t>(use);
  r.x = bytes;
}

void PipelinedSink::rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) {
  Record& r = next_record(Kind::Rma, loc, t);
  r.a = static_cast<std::uint32_t>(current_->rmas.size());
  current_->rmas.push_back(e);
}

}  // namespace perusetrace::archive

namespace perusetrace::archive {

void PipelinedSink::io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                                      std::uint64_t size_at_open) {
  Record& r = next_record(Kind::IoCreate, loc, t);
  r.a = handle;
  r.x = size_at_open;
}

void PipelinedSink::io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) {
  next_record(Kind::IoDestroy, loc, t).a = handle;
}

void PipelinedSink::io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                             const IoBegin& op) {
  Record& r = next_record(Kind::IoBegin, loc, t);
  r.a = handle;
  r.flag = static_cast<std::uint8_t>(op.mode);
  r.b = op.flags;
  r.x = op.bytes;
  r.y = op.matching;
}

void PipelinedSink::io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                                std::uint64_t bytes, std::uint64_t matching) {
  Record& r = next_record(Kind::IoComplete, loc, t);
  r.a = handle;
  r.x = bytes;
  r.y = matching;
}

void PipelinedSink::io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                            std::int64_t offset, IoSeekFrom from, std::uint64_t reached) {
  Record& r = next_record(Kind::IoSeek, loc, t);
  r.a = handle;
  r.flag = static_cast<std::uint8_t>(from);
  r.x = static_cast<std::uint64_t>(offset);
  r.y = reached;
}

void PipelinedSink::io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                              std::uint32_t region, std::uint64_t size) {
  Record& r = next_record(Kind::IoResize, loc, t);
  r.a = handle;
  r.b = region;
  r.x = size;
}

void PipelinedSink::io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) {
  next_record(Kind::IoDelete, loc, t).a = file;
}

}  // namespace perusetrace::archive
