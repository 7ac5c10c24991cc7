// When the program dies before MPI_Finalize, what every thread has recorded is saved to the
// journal: on fatal signals (then the program's or the MPI's own handler runs as before), on
// MPI_Abort, and at exit() without MPI_Finalize. `perusetrace recover` makes an archive of it.
#pragma once

namespace perusetrace {

// After MPI_Init, once tracing is on.
void install_crash_guard();
// At MPI_Finalize, once the journal is complete: the previous handlers come back.
void remove_crash_guard();
// From the MPI_Abort wrapper, before the MPI kills the job.
void save_before_abort(int errorcode) noexcept;

}  // namespace perusetrace
