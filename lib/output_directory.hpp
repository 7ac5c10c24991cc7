// Where a trace goes: the directory rank 0 chooses at MPI_Init, and the check that every rank
// sees that same directory.
#pragma once

#include <string>

#include "lib/settings.hpp"

namespace perusetrace {

// Rank 0 picks the directory: the requested one, or NAME.1, NAME.2, ... when it already holds
// something, since a trace is never overwritten; for a job spawned by a traced one, `spawned`,
// the directory its parent made for it (lib/spawn.hpp). An empty result carries the reason in
// `why`.
std::string choose_directory(const Settings& s, const std::string& spawned, std::string& why);

// Collective: whether every rank sees the directory rank 0 chose (not a node-local disk of
// its own); if not, rank 0 has said which hosts cannot and what to set, and removed it.
bool same_directory_everywhere(const std::string& dir, int rank, int size);

}  // namespace perusetrace
