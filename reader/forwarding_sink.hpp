// A sink that hands every event on: to several sinks, to one at a moved time, into a batch. The
// one list of EventSink's callbacks a forwarder needs; `Route` says where each event goes:
//   template <typename Call> void route(std::uint32_t loc, std::uint64_t t, const Call& call);
// calls call(sink, time) once per sink the event goes to (sink may be any EventSink type, so a
// final one is called without a virtual call).
#pragma once

#include <cstdint>

#include "reader/archive_reader.hpp"

namespace perusetrace::archive {

template <typename Route>
class ForwardingSink : public EventSink {
 public:
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.enter(loc, at, region); });
  }
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.leave(loc, at, region); });
  }
  void peruse(std::uint32_t loc, std::uint64_t t, std::uint32_t region,
              const PeruseFields& f) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.peruse(loc, at, region, f); });
  }
  void point_to_point(std::uint32_t loc, std::uint64_t t, const PointToPoint& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.point_to_point(loc, at, e); });
  }
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t m, std::int64_t v) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.metric(loc, at, m, v); });
  }
  void real_metric(std::uint32_t loc, std::uint64_t t, std::uint32_t m, double v) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.real_metric(loc, at, m, v); });
  }
  void sample(std::uint32_t loc, std::uint64_t t, const Sample& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.sample(loc, at, e); });
  }
  void rma(std::uint32_t loc, std::uint64_t t, const RmaEvent& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.rma(loc, at, e); });
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t size) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_handle_created(loc, at, handle, size); });
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_handle_destroyed(loc, at, handle); });
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const IoBegin& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_begin(loc, at, handle, e); });
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                   const IoComplete& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_complete(loc, at, handle, e); });
  }
  void io_seek(std::uint32_t loc, std::uint64_t t, std::uint32_t handle, const IoSeek& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_seek(loc, at, handle, e); });
  }
  void io_resize(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                 const IoResize& e) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_resize(loc, at, handle, e); });
  }
  void polls_folded(std::uint32_t loc, std::uint64_t t, const PollFold& f) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.polls_folded(loc, at, f); });
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.io_delete(loc, at, file); });
  }
  void collective(std::uint32_t loc, std::uint64_t t, const Collective& c) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.collective(loc, at, c); });
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.collective_request(loc, at, request); });
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t, const DatatypeBytes& d) override {
    on(loc, t, [&](auto& s, std::uint64_t at) { s.datatype_use(loc, at, d); });
  }

 private:
  template <typename Call>
  void on(std::uint32_t loc, std::uint64_t t, const Call& call) {
    static_cast<Route*>(this)->route(loc, t, call);
  }
};

}  // namespace perusetrace::archive
