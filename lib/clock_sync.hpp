// Which ranks read the same clock, and the offset of every other clock against rank 0's,
// measured at MPI_Init and at MPI_Finalize (global_clock.hpp applies them).
//
// A clock domain is one boot of one machine in one time namespace: its ranks read the very same
// CLOCK_MONOTONIC, so they share one offset, exactly 0 in rank 0's domain: measuring what is
// already exact would only add the measurement's error (on oversubscribed cores, milliseconds).
// Only one leader per domain measures, against another leader, in a binomial tree rooted at
// rank 0: the rounds grow with log2 of the number of hosts, whatever the number of ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "otf2_writer/writer.hpp"

namespace perusetrace {

class ClockSync {
 public:
  // Collective over MPI_COMM_WORLD (PMPI): finds this rank's clock domain and its leader.
  void join();
  // Collective: a new point of this rank's offset, appended to points().
  void measure();
  // Collective: frees the communicators (before PMPI_Finalize).
  void leave();

  int leader() const { return leader_; }                 // world rank leading this rank's domain
  const std::string& domain() const { return domain_; }  // what names the clock
  // Each measurement, as the journal and the archive record it.
  const std::vector<trace::ClockOffset>& points() const { return points_; }

 private:
  std::string domain_;
  int leader_ = 0;
  MPI_Comm domain_comm_ = MPI_COMM_NULL;   // the ranks reading this rank's clock
  MPI_Comm leaders_comm_ = MPI_COMM_NULL;  // one rank per domain; MPI_COMM_NULL elsewhere
  std::vector<trace::ClockOffset> points_;
};

}  // namespace perusetrace
