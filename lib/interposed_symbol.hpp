// The C library functions this library interposes (lib/blocking_calls.cpp, lib/timed_waits.cpp)
// call the definition that comes after it.
#pragma once

#include <dlfcn.h>

#include <atomic>

namespace perusetrace {

// The next definition of NAME after this library's (the C library's, or a sanitizer's
// interceptor), looked up once.
template <typename F>
F next_definition(std::atomic<F>& slot, const char* name) noexcept {
  F f = slot.load(std::memory_order_acquire);
  if (f == nullptr) {
    f = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}

}  // namespace perusetrace

// `real`, the next definition of NAME. The C library's declarations carry attributes (nonnull,
// ...) a function pointer type drops, hence the type given.
#define PERUSETRACE_NEXT(name, type)             \
  static std::atomic<type> slot_##name{nullptr}; \
  const auto real = perusetrace::next_definition(slot_##name, #name)
