// The send halves a parallel conversion ships to the ranks converting their receivers
// (tools/prv/parallel_convert.hpp, the Perfetto export's), as compact bytes: sorted by channel and
// place in it, each field a varint of its difference from what the half before it makes likely (the
// channel's next message, sent a little after the one before, from the same thread, with the same
// size), so a message costs about a dozen bytes instead of the struct's 72.
#pragma once

#include <string>
#include <vector>

#include "reader/message_matcher.hpp"

namespace perusetrace::archive {

std::string encode_halves(std::vector<SendHalf> halves);

// Appends the halves `bytes` holds to `out`. Throws ArchiveError for bytes encode_halves did not
// write.
void decode_halves(const std::string& bytes, std::vector<SendHalf>& out);

}  // namespace perusetrace::archive
