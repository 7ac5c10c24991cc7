// The built-in sampler (MPITRACE_SAMPLING): every thread that records gets a timer on
// CLOCK_MONOTONIC that signals that very thread (so a thread asleep inside MPI is sampled too,
// which CPU-time timers miss); the handler takes the thread's MPI state (lib/mpi_state.hpp) and
// its call stack and appends them to the thread's own sample buffer, written to the thread's
// samples file when full. The handler takes no lock and allocates nothing; it never touches
// the record buffer, so it cannot tear a record the thread was writing.
#pragma once

#include <cstdint>
#include <string>

namespace perusetrace::sampling {

// At MPI_Init, before any thread records: `period_ns` 0 means off. False with `error` when the
// signal cannot be taken; `notice` says why samples will have no stacks, if they will not.
bool configure(std::uint64_t period_ns, std::string& error, std::string& notice);
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
// MPI_Pcontrol: samples taken while paused are dropped.
void pause(bool paused) noexcept;
std::uint64_t period_ns() noexcept;

}  // namespace perusetrace::sampling
