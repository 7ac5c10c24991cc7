#include "clock_sync.hpp"

#include <mpi.h>

#include "clock.hpp"

namespace perusetrace {

namespace {
constexpr int kPings = 5;  // the fastest round trip of a few gives the tightest bound
constexpr int kTag = 0x7ace;
}  // namespace

void ClockOffsets::measure() {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      for (int i = 0; i < kPings; ++i) {
        char ping = 0;
        PMPI_Recv(&ping, 1, MPI_CHAR, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        const std::uint64_t now = now_ns();
        PMPI_Send(&now, 1, MPI_UINT64_T, peer, kTag, MPI_COMM_WORLD);
      }
    }
    points.emplace_back(now_ns(), 0);
    errors.push_back(0.0);
    return;
  }
  std::uint64_t best_rtt = UINT64_MAX, best_mid = 0;
  std::int64_t best_offset = 0;
  for (int i = 0; i < kPings; ++i) {
    const char ping = 0;
    std::uint64_t master = 0;
    const std::uint64_t t0 = now_ns();
    PMPI_Send(&ping, 1, MPI_CHAR, 0, kTag, MPI_COMM_WORLD);
    PMPI_Recv(&master, 1, MPI_UINT64_T, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const std::uint64_t t1 = now_ns();
    if (t1 - t0 < best_rtt) {
      best_rtt = t1 - t0;
      best_mid = t0 + (t1 - t0) / 2;
      best_offset = static_cast<std::int64_t>(master) - static_cast<std::int64_t>(best_mid);
    }
  }
  points.emplace_back(best_mid, best_offset);
  errors.push_back(static_cast<double>(best_rtt) / 2.0);
}

}  // namespace perusetrace
