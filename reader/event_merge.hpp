// The streams of the archive's reading threads merged into the archive's order. Each thread
// reads some of the locations with an OTF2 global event reader of its own, which hands over the
// event with the smallest time, of equal times the one of the smallest location id (OTF2 3.0's
// OTF2_GlobalEvtReader.c compares exactly these two), each location's events in file order. So
// taking, again and again, the smallest of the streams' next events by the same rule gives the
// order one global reader of every location gives: the sinks see the same sequence of
// callbacks whatever the number of threads.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "reader/batch_queue.hpp"
#include "reader/event_batch.hpp"
#include "reader/event_sequencer.hpp"

namespace perusetrace::archive {

// Where the records go once sequenced: copied into `out`'s batches (for a thread that replays
// them), or, with `sink`, replayed into it here, from the reading threads' own batches.
struct MergedOutput {
  BatchWriter* out = nullptr;
  EventSink* sink = nullptr;
};

// Until every stream has ended, each record in order, sequenced, to `out`; `now_and_then` is
// called every 2^16 records. `location_ids` gives the OTF2 location id of each location index.
// A stream that ended with an error stops the merge where its next record would have been
// needed: its error is thrown.
void merge_streams(const std::vector<BatchQueue*>& streams,
                   const std::vector<std::uint64_t>& location_ids, EventSequencer& sequencer,
                   MergedOutput out, const std::function<void()>& now_and_then);

// One location read in ranges by several threads in turn (EventDecoder::run_ranges): range r
// by stream r % streams.size(). The records of `ranges` ranges in their order, sequenced, to
// `out`; a stream's error is thrown where its range would have come.
void concatenate_ranges(const std::vector<BatchQueue*>& streams, std::size_t ranges,
                        EventSequencer& sequencer, MergedOutput out,
                        const std::function<void()>& now_and_then);

}  // namespace perusetrace::archive
