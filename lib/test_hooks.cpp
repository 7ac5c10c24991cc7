#include "lib/test_hooks.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

namespace perusetrace::test_hooks {

namespace {

enum class Point { None, Record, Block, Handler };
Point g_point = Point::None;
long g_at = 0;      // the drain (1 = the first), or the handler's seconds
long g_drains = 0;  // thread 0's, so far

int own_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return -1;
}

}  // namespace

void configure() noexcept {
  const char* v = std::getenv("PERUSETRACE_TEST_KILL");
  if (v == nullptr) return;
  char* end = nullptr;
  const long rank = std::strtol(v, &end, 10);
  if (end == v || *end != ':' || rank != own_rank()) return;
  const char* what = end + 1;
  const char* colon = std::strchr(what, ':');
  if (colon == nullptr) return;
  const std::size_t length = static_cast<std::size_t>(colon - what);
  g_at = std::strtol(colon + 1, nullptr, 10);
  if (length == 6 && std::strncmp(what, "record", 6) == 0) g_point = Point::Record;
  if (length == 5 && std::strncmp(what, "block", 5) == 0) g_point = Point::Block;
  if (length == 7 && std::strncmp(what, "handler", 7) == 0) g_point = Point::Handler;
}

void after_drain(std::uint32_t thread, Record* next_slot) noexcept {
  if (g_point != Point::Record || thread != 0 || ++g_drains != g_at) return;
  // What a record being written looks like when its process dies: some fields set, the rest
  // whatever the slot held. Its kind is a real one, so a reader that took it would not notice.
  next_slot->time = ~std::uint64_t{0} >> 8;
  next_slot->kind = RecordKind::Peruse;
  next_slot->event = 0xee;
  ::kill(::getpid(), SIGKILL);
}

void before_block(std::uint32_t thread, int fd, const void* block, std::size_t bytes) noexcept {
  if (g_point != Point::Block || thread != 0 || ++g_drains != g_at) return;
  const ssize_t written = ::write(fd, block, bytes / 2);
  (void)written;
  ::kill(::getpid(), SIGKILL);
}

void in_crash_handler() noexcept {
  if (g_point != Point::Handler) return;
  timespec wait{g_at, 0};
  while (::nanosleep(&wait, &wait) != 0) {
  }
}

}  // namespace perusetrace::test_hooks
