// Whether a stack walk from a signal handler could wait for the dynamic loader's lock held by
// the very thread it interrupted.
//
// libunwind looks up a frame's unwind table with dl_iterate_phdr, which takes the loader's
// recursive lock; dlopen and dlclose hold it while they change the list of loaded objects. A
// recursive lock is re-entered by its owner, except in the instructions where the owner has
// taken the lock word but not yet written its thread id (or cleared it, not yet the word): a
// sample there waits for itself forever. Open MPI's MPI_Init loads dozens of components, so
// at 10 kHz that was seen to hang a 4-rank run. The sampler asks first and takes such a sample
// without its stack.
#pragma once

#include <sys/types.h>

#include <string>

namespace perusetrace::loader {

// Before the first sample: finds the lock (glibc's ld.so does not name it; it is the mutex that
// dl_iterate_phdr holds with this thread's id). False with `why` when it cannot be found.
bool find_lock(std::string& why) noexcept;

// Async-signal-safe. True when the lock is taken and its owner not yet written (or already
// cleared), or is `tid` and the lock is not recursive; true too when the lock was never found.
bool may_hold_lock(pid_t tid) noexcept;

// For a walk from the thread's own code rather than a signal handler (a sample taken at a
// blocking call's end): such a thread cannot be between the lock's instructions, so only a lock
// it holds whole and cannot re-enter stops the walk; true then, and when the lock was never
// found. A lock another thread is taking only makes the walk wait its turn.
bool holds_lock(pid_t tid) noexcept;

}  // namespace perusetrace::loader
