// The OTF2 archive each rank encodes from its journal at MPI_Finalize (collective).
#pragma once

#include <cstdint>
#include <string>

#include "otf2_writer/writer.hpp"
#include "record/global_clock.hpp"

namespace perusetrace {

struct FinalArchive {
  std::string directory;
  int rank = 0, size = 1;
  std::string settings;  // recorded in the archive
  bool stopped = false;  // the rank stopped recording (its directory went): say "incompletely"
  trace::CommLayout comm_layout = trace::CommLayout::Otf2;
};

// Encodes this rank's journal into the OTF2 archive. The journal goes once the archive is
// complete on every rank; otherwise it stays for `perusetrace recover`, and the user is told.
void write_final_archive(const FinalArchive& run, trace::ProcessInfo process, std::uint32_t threads,
                         const GlobalClock& clock);

}  // namespace perusetrace
