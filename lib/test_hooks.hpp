// Points where a test can make a traced rank die the way a real one might, at a moment no
// outside signal could pick: with a record half-written, half-way through writing a block to
// its journal, or inside the crash handler (tests/trace/kill_test.py). Compiled in only for the
// library the tests build for this (-DPERUSETRACE_TEST_HOOKS, lib/meson.build); in the
// installed library every hook is an empty inline function. Set by PERUSETRACE_TEST_KILL:
//   RANK:record:N     after thread 0's Nth drain, half a record in its next slot, then SIGKILL
//   RANK:block:N      half of the Nth block thread 0 writes to its journal, then SIGKILL
//   RANK:handler:S    the crash handler waits S seconds before it does anything (a SIGKILL
//                     that comes meanwhile finds it unfinished)
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/record.hpp"

namespace perusetrace::test_hooks {

#ifdef PERUSETRACE_TEST_HOOKS
void configure() noexcept;
void after_drain(std::uint32_t thread, Record* next_slot) noexcept;
void before_block(std::uint32_t thread, int fd, const void* block, std::size_t bytes) noexcept;
void in_crash_handler() noexcept;  // async-signal-safe
#else
inline void configure() noexcept {}
inline void after_drain(std::uint32_t, Record*) noexcept {}
inline void before_block(std::uint32_t, int, const void*, std::size_t) noexcept {}
inline void in_crash_handler() noexcept {}
#endif

}  // namespace perusetrace::test_hooks
