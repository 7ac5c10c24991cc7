// The .prv body: state, event and communication records, sorted by time with bounded memory.
// Records collect in a fixed-size buffer; a full buffer is sorted and spilled to a temporary
// file (a "run") next to the output; at the end the runs are merged, 64 at a time, behind the
// header. Paraver takes unsorted records without a word and then computes wrong statistics,
// hence the sort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace perusetrace::prv {

// A thread as Paraver names it: 1-based CPU (0: none), task and thread; application 1.
struct PrvObject {
  std::uint32_t cpu = 0;
  std::uint32_t task = 1;
  std::uint32_t thread = 1;
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

  std::uint64_t records() const { return records_; }
  std::uint64_t latest_time() const { return latest_; }  // the largest time of any record
  std::size_t runs() const { return runs_.size(); }

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
  void spill();
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
};

}  // namespace perusetrace::prv
