// The transports' eager limits as the archive's MPI_T control variables recorded them: a message
// above its transport's limit goes by rendezvous whatever Peruse shows of it (Open MPI 5's shared
// memory pulls it in one single copy, which looks like one eager piece).
#pragma once

#include <cstdint>
#include <string>

namespace perusetrace::report {

struct EagerLimit {
  std::string parameter;    // "" when the archive has none of the names
  std::uint64_t bytes = 0;  // 0: unknown
};

// Rank 0's value of the MPI_T control variable NAME at MPI_Init (archive_schema.hpp's
// "NAME=VALUE; ..." text), or "".
std::string recorded_cvar(const std::string& cvars, const std::string& name);

// Shared memory's (`same_host`: btl_sm_eager_limit of Open MPI 5, btl_vader_eager_limit of 4.1;
// 5.0 keeps the vader names as synonyms, so sm is looked for first) or TCP's.
EagerLimit eager_limit(const std::string& cvars, bool same_host);

// Where a receiver pulls a rendezvous message in one single copy (Open MPI 5's shared memory:
// btl_sm_eager_limit recorded), the limit above which such a one-piece message was not eager;
// 0 elsewhere. A receive's bytes are its buffer's, which may exceed its message's: the rule is
// used only where it is needed.
std::uint64_t pull_limit(const std::string& cvars);

// ob1's protocol of a message from its transfer events: an eager message moves as one piece
// (XFER_BEGIN..END, or one XFER_CONTINUE of all its bytes out of the unexpected queue); a
// rendezvous one as fragments, the first with the match header (over TCP one put after it,
// which Peruse does not report), or, above `pull_limit` on the same host, pulled whole.
inline bool went_rendezvous(std::uint32_t fragments, std::uint64_t first_fragment_bytes,
                            std::uint64_t bytes, std::uint64_t pull_limit) {
  return fragments > 1 || (fragments == 1 && first_fragment_bytes < bytes) ||
         (pull_limit != 0 && bytes > pull_limit);
}

}  // namespace perusetrace::report
