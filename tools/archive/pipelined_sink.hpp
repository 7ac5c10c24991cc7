// Hands a stream of events to another sink on a second thread, in order: the thread that reads
// the archive (OTF2's decoding, three quarters of a report's instructions) and the analyses then
// run side by side on two cores. Events travel in batches of fixed-size records through a fixed
// pool, so memory stays bounded whatever the archive's size; the reading thread waits when the
// analyses fall behind.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tools/archive/archive_reader.hpp"

namespace perusetrace::archive {

class PipelinedSink : public EventSink {
 public:
  explicit PipelinedSink(EventSink& next);
  ~PipelinedSink() override;
  PipelinedSink(const PipelinedSink&) = delete;
  PipelinedSink& operator=(const PipelinedSink&) = delete;

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override;
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override;
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override;
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, double value) override;
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override;
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override;
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size_at_open) override;
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override;
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override;
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint64_t bytes,
                   std::uint64_t matching) override;
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::int64_t offset,
               IoSeekFrom from, std::uint64_t reached) override;
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint32_t region,
                 std::uint64_t size) override;
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override;
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override;
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype, DatatypeUse use,
                    std::uint64_t bytes) override;

  // After the last event: waits until `next` has seen every event; rethrows what it threw.
  void finish();

 private:
  enum class Kind : std::uint8_t {
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
    IoDelete,
    Collective,
    CollectiveRequest,
    DatatypeUse
  };
  // One event in 48 bytes; fields by kind as replay() reads them. Samples and RMA events, rare
  // and larger, wait beside the batch's records.
  struct Record {
    Kind kind;
    std::uint8_t flag;
    std::uint32_t loc;
    std::uint64_t t;
    std::uint32_t a, b, c, d;
    std::uint64_t x, y;
  };
  struct Batch {
    std::vector<Record> records;
    std::vector<Sample> samples;
    std::vector<RmaEvent> rmas;
  };
  static constexpr std::size_t kBatchRecords = 8192;
  static constexpr std::size_t kBatches = 8;

  Record& next_record(Kind kind, std::uint32_t loc, std::uint64_t t) {
    if (current_->records.size() == kBatchRecords) hand_over();
    Record& r = current_->records.emplace_back();
    r.kind = kind;
    r.loc = loc;
    r.t = t;
    return r;
  }
  void hand_over();
  void work();
  void replay(const Batch& batch);

  EventSink& next_;
  std::vector<std::unique_ptr<Batch>> pool_;
  Batch* current_ = nullptr;
  std::mutex mutex_;
  std::condition_variable to_worker_, to_reader_;
  std::deque<Batch*> full_, empty_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace perusetrace::archive
