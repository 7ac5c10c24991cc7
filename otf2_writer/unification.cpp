// Unification at MPI_Finalize: rank 0 gathers every rank's report, unifies them
// (rank_reports.cpp) and hands each rank its own id maps back.
#include <mpi.h>

#include "internal.hpp"

namespace perusetrace::trace::detail {

namespace {

// Rank 0 holds one map per rank; every rank gets its own.
std::vector<std::uint64_t> scatter_maps(const std::vector<std::vector<std::uint64_t>>& maps,
                                        int rank, int size) {
  std::vector<std::uint64_t> flat;
  std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      displs[r] = static_cast<int>(flat.size());
      counts[r] = static_cast<int>(maps[r].size());
      flat.insert(flat.end(), maps[r].begin(), maps[r].end());
    }
  }
  int mine = 0;
  PMPI_Scatter(counts.data(), 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::uint64_t> map(static_cast<std::size_t>(mine));
  PMPI_Scatterv(flat.data(), counts.data(), displs.data(), MPI_UINT64_T, map.data(), mine,
                MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return map;
}

}  // namespace

Unified unify(const ProcessInfo& process, const RankReport& mine) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);

  const std::vector<char> blob = serialize(RankInput{mine, process.comms, process.files});
  int length = static_cast<int>(blob.size());
  std::vector<int> lengths(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  PMPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<char> all;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) offsets[r] = total, total += lengths[r];
    all.resize(static_cast<std::size_t>(total));
  }
  PMPI_Gatherv(blob.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
               0, MPI_COMM_WORLD);

  Unified u;
  if (rank == 0) {
    std::vector<RankInput> inputs;
    for (int r = 0; r < size; ++r)
      inputs.push_back(deserialize(all.data() + offsets[r], static_cast<std::size_t>(lengths[r])));
    u = unify_all(inputs);
  } else {
    u.comm_maps.resize(size);
    u.handle_maps.resize(size);
  }
  u.comm_map = scatter_maps(u.comm_maps, rank, size);
  u.handle_map = scatter_maps(u.handle_maps, rank, size);
  return u;
}

}  // namespace perusetrace::trace::detail
