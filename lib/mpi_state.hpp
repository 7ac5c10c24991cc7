// Each thread's MPI state (include/perusetrace/mpi_state.h): kept by the wrappers and the Peruse
// callbacks with a few thread-local stores, classified only when someone asks (a sampler's
// signal handler, a profiler through perusetrace_mpi_state), so keeping it costs almost nothing.
#pragma once

#include <cstdint>

#include "lib/mpi_functions.hpp"
#include "record/clock.hpp"

namespace perusetrace::state {

// What a call of an MPI function waits for, when it waits (the proposal's stall, split by why).
enum class Activity : std::uint8_t { None, Message, Transfer, Collective, Io };
enum class State : std::uint8_t { NotInMpi, Work, Stall };

struct ThreadState {
  std::uint16_t fn;        // the outermost MPI function the thread is in
  Activity waits;          // what that function waits for (None: it does not wait)
  std::int8_t transfers;   // transfers begun and not ended on this thread in this call
  std::uint64_t progress;  // ticks of this thread's latest Peruse event in this call; 0: none
};

namespace detail {
extern constinit thread_local ThreadState t_state __attribute__((tls_model("initial-exec")));
extern Activity g_waits[static_cast<std::size_t>(Fn::Count)];
// MPI_Wtime and MPI_Wtick read a clock: a program that times its own loops with them is not in MPI.
extern bool g_clock_only[static_cast<std::size_t>(Fn::Count)];
// Peruse said something for the thread this recently: MPI is working for it.
extern std::uint64_t g_progress_window_ticks;
extern bool g_peruse;  // Peruse events tell progress; without them a waiting call is a stall
}  // namespace detail

// Entering the outermost MPI call (Call, lib/mpi_handlers.hpp).
inline void enter(Fn fn) noexcept {
  ThreadState& s = detail::t_state;
  s.fn = static_cast<std::uint16_t>(fn);
  s.waits = detail::g_waits[static_cast<std::size_t>(fn)];
  s.transfers = 0;
  s.progress = 0;
}

// A Peruse event on this thread, at `ticks` (the callbacks, lib/peruse_session.cpp).
inline void progress(std::uint64_t ticks) noexcept {
  detail::t_state.progress = ticks;
}
inline void transfer_begins() noexcept {
  ++detail::t_state.transfers;
}
inline void transfer_ends() noexcept {
  if (detail::t_state.transfers > 0) --detail::t_state.transfers;
}

// Sets up the table of what each function waits for and the progress window; at MPI_Init.
void configure(const TickScale& scale, bool peruse);

struct Classified {
  State state;
  Activity activity;
  std::uint16_t fn;  // valid inside MPI
};
// The calling thread's state now. Async-signal-safe.
Classified classify(int mpi_depth) noexcept;

}  // namespace perusetrace::state
