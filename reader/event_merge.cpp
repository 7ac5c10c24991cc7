#include "reader/event_merge.hpp"

#include <exception>

namespace perusetrace::archive {

namespace {

struct Head {
  BatchQueue* queue;
  EventBatch* batch = nullptr;
  EventRecord* at = nullptr;
  EventRecord* end = nullptr;
};

// A record of `batch` (the merge's until given back), sequenced where it is, on its way.
inline void emit(EventRecord& r, const EventBatch& batch, EventSequencer& sequencer,
                 const MergedOutput& out) {
  sequencer.sequence(r);
  if (out.sink != nullptr) {
    replay(r, batch, *out.sink);
  } else {
    out.out->copy(r, batch);
  }
}

// The stream's next batch; false when the stream ended (throws its error if it had one).
bool refill(Head& h) {
  if (h.batch != nullptr) h.queue->give_back(h.batch);
  h.batch = h.queue->take();
  if (h.batch == nullptr) {
    if (std::exception_ptr error = h.queue->error()) std::rethrow_exception(error);
    return false;
  }
  h.at = h.batch->records.data();
  h.end = h.at + h.batch->records.size();
  return true;
}

}  // namespace

void merge_streams(const std::vector<BatchQueue*>& streams,
                   const std::vector<std::uint64_t>& location_ids, EventSequencer& sequencer,
                   MergedOutput out, const std::function<void()>& now_and_then) {
  std::vector<Head> live;
  for (BatchQueue* q : streams) {
    Head h{q};
    if (refill(h)) live.push_back(h);
  }
  const std::uint64_t* id = location_ids.data();
  auto before = [id](const EventRecord& a, std::uint64_t t, std::uint64_t loc_id) {
    return a.t < t || (a.t == t && id[a.loc] < loc_id);
  };
  std::uint64_t copied = 0, next_call = 1 << 16;
  while (!live.empty()) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < live.size(); ++i)
      if (before(*live[i].at, live[best].at->t, id[live[best].at->loc])) best = i;
    // The smallest of the other streams' next records: the best stream's records go out until
    // one of them is not before it (two streams never share a location, so never a key).
    std::uint64_t bound_t = ~std::uint64_t{0}, bound_id = ~std::uint64_t{0};
    for (std::size_t i = 0; i < live.size(); ++i)
      if (i != best && before(*live[i].at, bound_t, bound_id)) {
        bound_t = live[i].at->t;
        bound_id = id[live[i].at->loc];
      }
    Head& h = live[best];
    const bool alone = live.size() == 1;
    do {
      emit(*h.at, *h.batch, sequencer, out);
      ++h.at;
      ++copied;
    } while (h.at != h.end && (alone || before(*h.at, bound_t, bound_id)));
    if (copied >= next_call) {
      now_and_then();
      next_call = copied + (1 << 16);
    }
    if (h.at == h.end && !refill(h)) live.erase(live.begin() + static_cast<std::ptrdiff_t>(best));
  }
}

void concatenate_ranges(const std::vector<BatchQueue*>& streams, std::size_t ranges,
                        EventSequencer& sequencer, MergedOutput out,
                        const std::function<void()>& now_and_then) {
  std::uint64_t copied = 0, next_call = 1 << 16;
  for (std::size_t r = 0; r < ranges; ++r) {
    BatchQueue& q = *streams[r % streams.size()];
    for (bool end = false; !end;) {
      EventBatch* batch = q.take();
      if (batch == nullptr) {
        if (std::exception_ptr error = q.error()) std::rethrow_exception(error);
        throw ArchiveError("a reading thread ended before its range of events did");
      }
      for (EventRecord& r : batch->records) emit(r, *batch, sequencer, out);
      copied += batch->records.size();
      end = batch->ends_range;
      q.give_back(batch);
      if (copied >= next_call) {
        now_and_then();
        next_call = copied + (1 << 16);
      }
    }
  }
}

}  // namespace perusetrace::archive
