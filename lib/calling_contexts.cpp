#include "lib/calling_contexts.hpp"

#include "lib/mpi_functions.hpp"
#include "lib/mpi_state.hpp"

namespace perusetrace {

CallingContexts::CallingContexts(Symbolizer& symbols, std::uint64_t own_code)
    : symbols_(symbols), own_code_(own_code) {}

std::uint32_t CallingContexts::child(std::uint32_t parent, const CodePlace& place) {
  std::string key = place.function;
  key += '\0';
  key += place.file;
  key += '\0';
  key += std::to_string(place.line);
  const auto [it, fresh] =
      children_.try_emplace({parent, key}, static_cast<std::uint32_t>(nodes_.size()));
  if (fresh) {
    trace::ContextInfo info;
    info.local_id = it->second;
    info.parent = parent;
    info.function = place.function;
    info.file = place.file;
    info.line = place.line;
    nodes_.push_back(std::move(info));
  }
  return it->second;
}

CallingContexts::Place CallingContexts::place_of(const sampling::SampleHeader& sample,
                                                 const std::uint64_t* frames) {
  // Innermost first: the sampler's own frames, then the interrupted code. Inside
  // MPI that is the MPI's own code down to the tracer's wrapper: the program's frames start
  // past the outermost frame of the tracer.
  std::size_t first = std::min<std::size_t>(sample.own_frames, sample.frames);
  const bool in_mpi = sample.state != static_cast<std::uint8_t>(state::State::NotInMpi);
  if (in_mpi) {
    for (std::size_t i = sample.frames; i-- > first;) {
      if (symbols_.same_module(frames[i], own_code_)) {
        first = i + 1;
        break;
      }
    }
  }
  std::uint32_t node = trace::kNoContext;
  std::uint32_t depth = 0;
  for (std::size_t i = sample.frames; i-- > first;) {
    // Return addresses point after their call: the call is one byte before. The interrupted
    // instruction itself (outside MPI, the innermost frame of a signal's sample) is exact.
    const bool exact = !in_mpi && i == first && sample.interrupted != 0;
    node = child(node, symbols_.place(exact ? frames[i] : frames[i] - 1));
    ++depth;
  }
  if (in_mpi && sample.fn < static_cast<std::uint16_t>(Fn::Count)) {
    node = child(node, CodePlace{kMpiFunctions[sample.fn].name, "", 0});
    ++depth;
  }
  if (node == trace::kNoContext) node = child(node, CodePlace{"(no stack)", "", 0}), depth = 1;
  return {node, depth};
}

SampleStream::SampleStream(const std::string& path, const GlobalClock& clock,
                           CallingContexts& contexts)
    : file_(std::fopen(path.c_str(), "rb")), clock_(clock), contexts_(contexts) {
  advance();
}

SampleStream::~SampleStream() {
  if (file_ != nullptr) std::fclose(file_);
}

void SampleStream::advance() {
  more_ = false;
  if (file_ == nullptr) return;
  sampling::SampleHeader h;
  std::uint64_t frames[sampling::kMaxFrames];
  if (std::fread(&h, sizeof h, 1, file_) != 1 || h.frames > sampling::kMaxFrames ||
      std::fread(frames, sizeof frames[0], h.frames, file_) != h.frames)
    return;  // the end, or a sample cut short by a full disk
  const CallingContexts::Place place = contexts_.place_of(h, frames);
  const bool in_mpi = h.state != static_cast<std::uint8_t>(state::State::NotInMpi);
  next_ = Record{clock_.offsets.to_global(clock_.scale.to_ns(h.time)),
                 RecordKind::Sample,
                 h.state,
                 in_mpi ? h.fn : kNoRegion,
                 place.context,
                 0,
                 h.activity,
                 place.depth,
                 0,
                 h.weight};
  more_ = true;
}

Record SampleStream::take() {
  const Record r = next_;
  ++count_;
  advance();
  return r;
}

}  // namespace perusetrace
