// `perusetrace prv --np N`: the conversion as an MPI job of analysis ranks
// (tools/common/analysis_group.hpp). Each rank converts its share of the archive's ranks into
// a part of sorted records; a send to a rank converted elsewhere travels, as its half of the
// message (reader/message_matcher.hpp's SendHalf), in rounds (tools/common/exchange_rounds.hpp)
// to the rank that converts its receiver, which writes the communication record. Rank 0 merges the
// parts behind the header into the one .prv. The records are those of the conversion in one
// process; at equal times they may come in another order across threads, a thread's states and
// events never (docs/parallel-analysis.md).
#pragma once

#include <cstddef>
#include <string>

namespace perusetrace::prv {

// Throws ConvertError or archive::ArchiveError, on every rank, when any rank fails; then no
// output file is left behind.
int convert_in_group(const std::string& archive, std::string prefix, bool quiet,
                     std::size_t sort_memory, bool gzip, const std::string& stats);

}  // namespace perusetrace::prv
