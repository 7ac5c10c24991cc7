// The built-in sampler (MPITRACE_SAMPLING): every thread that records gets a timer that signals
// that very thread, on its CPU-time clock by default (MPITRACE_SAMPLING_CLOCK=cpu: a thread that
// is not running costs no signal) or on CLOCK_MONOTONIC (wall). The handler takes the thread's
// MPI state (lib/mpi_state.hpp) and its call stack and appends them to the thread's own sample
// buffer, written to the thread's samples file when full; each sample stands for the wall time
// since the thread's previous one, so the samples add up to the thread's wall time whichever
// clock drives them. Time in the program's blocking calls (lib/blocking_calls.cpp) is taken
// from their timestamps and charged to the call by a sample at its end. The handler takes no
// lock and allocates nothing; it never touches the record buffer, so it cannot tear a record
// the thread was writing.
#pragma once

#include <cstdint>
#include <string>

namespace perusetrace::sampling {

// At MPI_Init, before any thread records: `period_ns` 0 means off. False with `error` when the
// signal cannot be taken; `notice` says why samples will have no stacks, if they will not.
bool configure(std::uint64_t period_ns, bool wall_clock, std::string& error, std::string& notice);
// A thread's first record (thread_buffer.cpp): its timer and its buffer.
void start_thread(std::uint32_t thread_index) noexcept;
// The thread ends: its timer goes, its samples are written.
void stop_thread(std::uint32_t thread_index) noexcept;
// MPI_Finalize, or the program dying: every timer goes, every buffer is written.
void stop_all() noexcept;
bool enabled() noexcept;
// Whether this thread's timer is running, so that its blocking calls keep the sample signal
// out (lib/blocking_calls.cpp); async-signal-safe.
bool signals_this_thread() noexcept;
int signal_number() noexcept;
// A guarded or timed blocking call outside MPI (lib/blocking_calls.cpp, lib/timed_waits.cpp)
// begins and ends on this thread: the running time before it that no sample has taken is
// charged to its caller, the call's own time to the call (a sample of this stack once its calls
// add up to a period). Called from the wrappers, whose frame must be the next one out.
void blocking_begin() noexcept;
void blocking_end() noexcept;
// MPI_Pcontrol: samples taken while paused are dropped.
void pause(bool paused) noexcept;
std::uint64_t period_ns() noexcept;
bool wall_clock() noexcept;

}  // namespace perusetrace::sampling
