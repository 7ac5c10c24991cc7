// The few collectives over MPI_COMM_WORLD (through PMPI) that starting and ending a trace needs.
#pragma once

#include <string>

namespace perusetrace {

// Rank 0's `text` on every rank.
std::string broadcast(std::string text);
// Whether `ok` holds on every rank.
bool all_ranks(bool ok);
std::string host_name();

}  // namespace perusetrace
