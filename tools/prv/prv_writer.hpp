// The .prv body: state, event and communication records, sorted by time with bounded memory.
// Records collect in a fixed-size buffer. When the caller can say before which time no record
// is still to come (stream()), a full buffer is sorted and its records before that time go
// straight to the output: records arrive nearly in time order, late only by the length of the
// state or message they close, so the buffer keeps just those. Otherwise (or when too little
// could go) a full buffer is sorted and spilled to a temporary file (a "run") next to the
// output, and at the end the runs are merged, 64 at a time, behind what was written. Paraver
// takes unsorted records without a word and then computes wrong statistics, hence the sort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/prv/prv_archive.hpp"

namespace perusetrace::prv {

class ChunkWriter;

// A thread as Paraver names it: 1-based CPU (0: none), task and thread; application 1.
struct PrvObject {
  std::uint32_t cpu = 0;
  std::uint32_t task = 1;
  std::uint32_t thread = 1;
};

// finish() of a streamed conversion found a record after the end its header gave (an archive
// whose clock properties end before its last event): the conversion must be made again without
// streaming (convert.cpp does).
class StreamOverrun : public ConvertError {
 public:
  using ConvertError::ConvertError;
};

class PrvWriter {
 public:
  // Writes to `path`, gzip-compressed at zlib level `gzip_level` when it is above 0; temporary
  // runs of about `run_bytes` go to a directory beside it. Throws ConvertError.
  PrvWriter(std::string path, std::size_t run_bytes, int gzip_level = 0);
  ~PrvWriter();
  PrvWriter(const PrvWriter&) = delete;
  PrvWriter& operator=(const PrvWriter&) = delete;

  void state(const PrvObject& o, std::uint64_t begin, std::uint64_t end, std::uint32_t state);
  void event(const PrvObject& o, std::uint64_t time,
             const std::pair<std::uint64_t, std::uint64_t>* pairs, std::size_t count);
  void comm(const PrvObject& from, std::uint64_t logical_send, std::uint64_t physical_send,
            const PrvObject& to, std::uint64_t logical_recv, std::uint64_t physical_recv,
            std::uint64_t bytes, std::uint64_t tag);

  // Writes `header` now and from here on sends each full buffer's records that sort before
  // settled() to the output at once. The header's end time must then be known already: finish()
  // checks that no record passed it. Throws ConvertError.
  void stream(const std::string& header, std::uint64_t end, std::function<std::uint64_t()> settled);

  std::uint64_t records() const { return records_; }
  std::uint64_t streamed() const { return streamed_; }   // records written before finish()
  std::uint64_t latest_time() const { return latest_; }  // the largest time of any record
  std::size_t runs() const { return runs_.size(); }

  // A parallel conversion: a file of records sorted by time that another process wrote (its
  // share, finish()ed with an empty header), merged in by finish() and removed by it (or by the
  // destructor). At equal times its records come after those of the files added before it.
  // The header's end and the counts are the caller's to add up.
  void add_sorted_run(const std::string& path);

  // Writes header(END) and then every record in time order. progress(done, total).
  void finish(const std::function<std::string(std::uint64_t)>& header,
              const std::function<void(std::uint64_t, std::uint64_t)>& progress);

 private:
  struct Entry {
    std::uint64_t time;
    std::uint32_t offset;
    std::uint32_t length;
  };
  void add(std::uint64_t time, std::size_t start);
  void sort_entries();
  // Writes the sorted entries before `settled` to the output; keeps the rest, in the order
  // they came, at the start of the buffer. Returns whether it freed half of it.
  bool release(std::uint64_t settled);
  void spill();
  std::FILE* open_output();
  std::string merge(const std::vector<std::string>& inputs, std::FILE* out,
                    const std::function<void(std::uint64_t)>& written);
  std::string new_run_path();

  std::string path_;
  std::string tmpdir_;
  std::size_t run_bytes_;
  int gzip_level_;
  std::string buffer_;
  std::vector<Entry> entries_;
  std::vector<std::string> runs_;
  std::uint64_t records_ = 0;
  std::uint64_t latest_ = 0;
  std::uint64_t run_counter_ = 0;
  std::FILE* out_ = nullptr;  // open once stream() wrote the header
  std::vector<char> out_buf_;
  std::unique_ptr<ChunkWriter> writer_;     // to out_, while streaming
  std::function<std::uint64_t()> settled_;  // empty: spill every full buffer
  std::uint64_t streamed_end_ = 0;
  std::uint64_t streamed_ = 0;
  bool created_ = false, complete_ = false;  // of the output at path_
};

}  // namespace perusetrace::prv
