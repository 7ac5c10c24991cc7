// The samples' call stacks as a calling context tree per rank, built at MPI_Finalize from the
// threads' sample files (lib/sample_file.hpp), and the samples as records in the threads'
// streams (record/record.hpp, kind Sample).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lib/sample_file.hpp"
#include "lib/symbolizer.hpp"
#include "otf2_writer/writer.hpp"
#include "record/global_clock.hpp"
#include "record/record.hpp"

namespace perusetrace {

class CallingContexts {
 public:
  // `own_code`: an address in the tracer's library, whose frames (its wrappers and the sampler's
  // handler) are cut from the stacks along with the MPI internals below the wrapper.
  CallingContexts(Symbolizer& symbols, std::uint64_t own_code);
  // The context of a sample (its local id) and its depth.
  struct Place {
    std::uint32_t context;
    std::uint32_t depth;
  };
  Place place_of(const sampling::SampleHeader& sample, const std::uint64_t* frames);
  const std::vector<trace::ContextInfo>& contexts() const { return nodes_; }

 private:
  std::uint32_t child(std::uint32_t parent, const CodePlace& place);
  Symbolizer& symbols_;
  std::uint64_t own_code_;
  std::map<std::pair<std::uint32_t, std::string>, std::uint32_t> children_;
  std::vector<trace::ContextInfo> nodes_;
};

// A thread's samples file read in order, each sample as a Sample record on the global clock.
class SampleStream {
 public:
  SampleStream(const std::string& path, const GlobalClock& clock, CallingContexts& contexts);
  ~SampleStream();
  SampleStream(const SampleStream&) = delete;
  SampleStream& operator=(const SampleStream&) = delete;
  bool more() const { return more_; }
  const Record& peek() const { return next_; }
  Record take();
  std::uint64_t count() const { return count_; }

 private:
  void advance();
  std::FILE* file_ = nullptr;
  const GlobalClock& clock_;
  CallingContexts& contexts_;
  Record next_{};
  bool more_ = false;
  std::uint64_t count_ = 0;
};

}  // namespace perusetrace
