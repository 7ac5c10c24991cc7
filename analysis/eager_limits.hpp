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

}  // namespace perusetrace::report
