// MPITRACE_WRITEBACK: a thread of the tracer's own that, every period, writes the records the
// ranks' threads committed through to the trace directory's storage (fdatasync of every buffer
// and records file), so that a node that loses power keeps all but the last period of them.
// Without it the kernel writes dirty pages back once they are about 30 s old
// (vm.dirty_expire_centisecs), and a crash of the node loses what it had not.
#pragma once

#include <cstdint>

namespace perusetrace::writeback {

// At MPI_Init, once the buffers are configured; period 0: no thread.
void start(std::uint64_t period_ns) noexcept;
// At MPI_Finalize, before the buffers are closed: ends the thread.
void stop() noexcept;

}  // namespace perusetrace::writeback
