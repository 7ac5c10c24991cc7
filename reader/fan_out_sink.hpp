// Hands every event to several sinks, in the order given: one call per sink and event, where a
// tree of sinks that each pass an event to two would add a call per level.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

class FanOutSink final : public EventSink {
 public:
  explicit FanOutSink(std::vector<EventSink*> sinks) : sinks_(std::move(sinks)) {}

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    for (EventSink* sink : sinks_) sink->enter(loc, t, region);
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    for (EventSink* sink : sinks_) sink->leave(loc, t, region);
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    for (EventSink* sink : sinks_) sink->peruse(loc, t, region, f);
  }
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    for (EventSink* sink : sinks_) sink->send(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    for (EventSink* sink : sinks_) sink->send_complete(loc, t, request);
  }
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    for (EventSink* sink : sinks_) sink->recv_request(loc, t, request);
  }
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t peer, std::uint32_t comm,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request, bool blocking) override {
    for (EventSink* sink : sinks_) sink->recv(loc, t, peer, comm, tag, bytes, request, blocking);
  }
  void request_cancelled(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    for (EventSink* sink : sinks_) sink->request_cancelled(loc, t, request);
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
              std::int64_t value) override {
    for (EventSink* sink : sinks_) sink->metric(loc, t, metric, value);
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                   double value) override {
    for (EventSink* sink : sinks_) sink->real_metric(loc, t, metric, value);
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& s) override {
    for (EventSink* sink : sinks_) sink->sample(loc, t, s);
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    for (EventSink* sink : sinks_) sink->rma(loc, t, e);
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size) override {
    for (EventSink* sink : sinks_) sink->io_handle_created(loc, t, handle, size);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    for (EventSink* sink : sinks_) sink->io_handle_destroyed(loc, t, handle);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& op) override {
    for (EventSink* sink : sinks_) sink->io_begin(loc, t, handle, op);
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint64_t bytes,
                   std::uint64_t matching) override {
    for (EventSink* sink : sinks_) sink->io_complete(loc, t, handle, bytes, matching);
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::int64_t offset,
               IoSeekFrom from, std::uint64_t reached) override {
    for (EventSink* sink : sinks_) sink->io_seek(loc, t, handle, offset, from, reached);
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, std::uint32_t region,
                 std::uint64_t size) override {
    for (EventSink* sink : sinks_) sink->io_resize(loc, t, handle, region, size);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    for (EventSink* sink : sinks_) sink->io_delete(loc, t, file);
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    for (EventSink* sink : sinks_) sink->collective(loc, t, c);
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    for (EventSink* sink : sinks_) sink->collective_request(loc, t, request);
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, std::uint32_t datatype, DatatypeUse use,
                    std::uint64_t bytes) override {
    for (EventSink* sink : sinks_) sink->datatype_use(loc, t, datatype, use, bytes);
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace perusetrace::archive
