// Peruse on every communicator: after MPI_Init the selected events are registered on
// MPI_COMM_WORLD, MPI_COMM_SELF and each communicator the program creates, and released before
// the communicator is freed. Whether the MPI has Peruse is decided at run time.
#pragma once

#include <mpi.h>

#include <string>

#include "events/selection.hpp"

namespace perusetrace {
struct CommEntry;
}

namespace perusetrace::peruse {

struct StartResult {
  bool active = false;  // callbacks are registered from now on
  std::string notice;   // one line for the user when Peruse is off or incomplete; may be empty
};

// PERUSE_Init and the MPI's event ids. Nothing is registered when `selected` is empty.
// `thread_multiple`: the MPI was initialised with MPI_THREAD_MULTIPLE (back_to_back.hpp).
// `state_only` (MPITRACE_MODE=sample): the events that tell the threads' MPI state (matches,
// transfers, completions) are registered with callbacks that record nothing.
StartResult start(const EventSet& selected, bool thread_multiple, bool state_only = false);
// Registers and activates the selected events on `comm` (once per communicator).
void attach(MPI_Comm comm, const CommEntry* entry);
// Deactivates and releases them; call before the communicator is freed.
void detach(MPI_Comm comm);
// MPI_Pcontrol(0) and (1): the callbacks stop and start again on every communicator.
void pause(bool paused);
// Releases every registration (at MPI_Finalize, before the MPI tears down).
void stop();
// True when REQ_ACTIVATE is registered, so request ids come from Peruse activations.
bool tracks_activation() noexcept;

}  // namespace perusetrace::peruse
