// What `perusetrace prv` says once the files are written, whether one process converted the
// archive or the ranks of a parallel conversion did (their counts added up).
#pragma once

#include <cstdint>
#include <string>

#include "reader/message_matcher.hpp"
#include "tools/prv/prv_archive.hpp"
#include "tools/prv/prv_writer.hpp"

namespace perusetrace::prv {

struct ConversionCounts {
  std::uint64_t records = 0, latest = 0;  // of the .prv; the largest time of a record
  std::uint64_t matched = 0, unmatched_sends = 0, unmatched_recvs = 0, with_other_jobs = 0,
                late_physical_sends = 0, clock_breaks = 0;

  // As text, to travel between analysis ranks (AnalysisGroup::reduce), and back.
  std::string text() const;
  static ConversionCounts parse(const std::string& text);
  // Sums the counts, keeps the later `latest`.
  void add(const ConversionCounts& other);
};

ConversionCounts counts_of(const PrvWriter& prv, const archive::MessageMatcher& m);

// On stderr: the MPI_T values left out, the messages without a communication record (no
// partner, other MPI jobs) and those whose physical send is the logical one.
void tell_about_messages(const Definitions& defs, const std::string& anchor,
                         const ConversionCounts& c, bool quiet);

}  // namespace perusetrace::prv
