// Built against an MPI without peruse.h: PMPI-only tracing, said once at start.
#include "lib/peruse_session.hpp"

namespace perusetrace::peruse {

StartResult start(const EventSet& selected, bool, bool state_only) {
  StartResult r;
  if (selected.any() && !state_only) {
    r.notice =
        "this build was made against an MPI without Peruse: tracing MPI calls only (PMPI). "
        "For Peruse events, rebuild against an Open MPI configured with --enable-peruse "
        "(scripts/setup builds one).";
  }
  return r;
}
void attach(MPI_Comm, const CommEntry*) {}
void detach(MPI_Comm) {}
void pause(bool) {}
void stop() {}
bool tracks_activation() noexcept {
  return false;
}

}  // namespace perusetrace::peruse
