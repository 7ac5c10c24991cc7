#include "lib/crash_guard.hpp"

#include <errno.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "lib/journal.hpp"
#include "lib/test_hooks.hpp"
#include "lib/thread_buffer.hpp"

namespace perusetrace {

namespace {

// Faults, abort(), and what batch systems and mpirun send before killing a job.
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGXCPU};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction g_previous[kSignalCount];
std::atomic<bool> g_installed{false};
std::atomic<bool> g_saved{false};

int slot_of(int sig) {
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) return i;
  return -1;
}

void save(const char* reason, long code) noexcept {
  test_hooks::in_crash_handler();
  // Not tracing (a child of fork(), which shares its parent's journal files): nothing to note.
  if (g_state.load() == TraceState::Off) return;
  if (g_saved.exchange(true)) return;
  save_all_buffers();
  journal::note_stopped(reason, code);
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  save("signal", sig);
  // Then whatever handled the signal before us (Open MPI prints a backtrace, the program may
  // have its own); the default action ends the process as it would have without us.
  const int slot = slot_of(sig);
  const struct sigaction& previous = g_previous[slot < 0 ? 0 : slot];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
  } else if (previous.sa_handler == SIG_DFL) {
    sigaction(sig, &previous, nullptr);
    raise(sig);  // blocked until this handler returns, then the default action
  } else if (previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  }
  errno = saved_errno;
}

void at_exit() {
  if (!records_kept(g_state.load())) return;  // finalized, or never traced
  save("exit", 0);
  std::fprintf(stderr,
               "perusetrace: the program ended without MPI_Finalize. What it recorded is in "
               "%s/journal: run `perusetrace recover %s` to make the OTF2 archive.\n",
               journal::trace_directory().c_str(), journal::trace_directory().c_str());
}

}  // namespace

void install_crash_guard() {
  if (g_installed.exchange(true)) return;
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction action {};
    action.sa_sigaction = on_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(kSignals[i], &action, &g_previous[i]);
  }
  std::atexit(at_exit);
}

void remove_crash_guard() {
  if (!g_installed.exchange(false)) return;
  for (int i = 0; i < kSignalCount; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

void save_before_abort(int errorcode) noexcept {
  if (!records_kept(g_state.load())) return;
  save("MPI_Abort", errorcode);
  std::fprintf(stderr,
               "perusetrace: MPI_Abort(%d) called. What was recorded is in %s/journal: run "
               "`perusetrace recover %s` to make the OTF2 archive.\n",
               errorcode, journal::trace_directory().c_str(), journal::trace_directory().c_str());
}

}  // namespace perusetrace
