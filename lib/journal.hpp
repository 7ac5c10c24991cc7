// The journal: what this rank has recorded, on disk while the program runs, in a form that needs
// no finishing step to stay readable. Each thread's records go to a file of their own, packed
// when its buffer is full (record_packing.hpp: a few bytes per record, as the disk, not the
// packing, is what a drain waits for);
// the definitions those records refer to (communicators, files, clock offsets) go to one text
// file per rank as they appear. MPI_Finalize turns the journal into the OTF2 archive and removes
// it; when the program never gets there, `perusetrace recover` does the same from what is left.
// Paths and the definitions file's grammar: journal_format.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "otf2_writer/writer.hpp"
#include "record/clock.hpp"
#include "record/record.hpp"

namespace perusetrace::journal {

// Rank 0, before any rank opens its files: creates TRACE_DIR and TRACE_DIR/journal.
bool create_directories(const std::string& trace_dir, std::string& error);

struct Header {
  int rank = 0, size = 1;
  std::string host;
  std::uint64_t start_time = 0, realtime_start = 0;
  TickPoint ticks_first, ticks_second;  // the records' clock calibrated at init (tick_clock.hpp)
  std::string settings;
};
// Opens this rank's definitions file and writes the header.
bool open(const std::string& trace_dir, const Header& header, std::string& error);

// Facts the records refer to, appended as they appear (never on the hot path).
void note_comm(const trace::CommInfo& comm);
// MPI_Comm_set_name gave communicator `local_id` this name.
void note_comm_name(std::uint32_t local_id, const std::string& name);
void note_file(const trace::FileInfo& file);
void note_window(const trace::WindowInfo& window);
void note_window_name(std::uint32_t local_id, const std::string& name);  // MPI_Win_set_name
void note_rma_group(std::uint32_t local_id, const std::vector<int>& world_ranks);
// A file's local id for the deletions that name it (ProcessInfo::file_names).
void note_file_name(std::uint32_t local_id, const std::string& name);
// A datatype definition (lib/datatype_registry.hpp), after the inner ones it names.
void note_datatype(const trace::DatatypeInfo& datatype);
void note_metric(const trace::MetricInfo& metric);
// A nested annotation's "ATTRIBUTE=VALUE" pair at its first use (lib/annotations.hpp).
void note_annotation(std::uint32_t local_id, const std::string& pair);
// An attribute of process scope, before its first pair.
void note_process_attribute(const std::string& name);
// MPI_T control variables: ProcessInfo's `cvars` and `cvars_set` texts, line by line.
void note_cvars(const std::string& cvars, const std::string& cvars_set);
// The clock this rank reads (clock_sync.hpp): the world rank leading its domain, and its name.
void note_clock_domain(int leader, const std::string& name);
void note_clock_offset(const trace::ClockOffset& offset);
// MPI_Finalize reached: also the last point of the records' clock, which the scale spans.
void note_end(std::uint64_t end_time, TickPoint last);
// Async-signal-safe: the program is dying; `reason` says how ("signal 11", "MPI_Abort"). Reads
// the clocks once more, so the rank's ticks are scaled over its whole run.
void note_stopped(const char* reason, long code) noexcept;
// A point of the records' clock while the run goes on, at most every kMidpointEvery (called at
// buffer drains): the scale of a rank that dies without a word (SIGKILL) then spans nearly its
// whole run, not only the points read at MPI_Init. No lock, no allocation.
void note_midpoint() noexcept;
inline constexpr std::uint64_t kMidpointEvery = 10'000'000'000;  // ns
// Async-signal-safe: the records files reached `limit` bytes (MPITRACE_MAX_SIZE) at `ticks`;
// nothing is recorded after. Also tells the user, on standard error.
void note_cut(std::uint64_t ticks, std::uint64_t limit) noexcept;
// What the threads' records files hold so far, in bytes.
std::uint64_t bytes_written() noexcept;

// The records file of one thread of this rank: a file descriptor, or -1 (after saying why).
int open_records(std::uint32_t thread) noexcept;
// The buffer file of one thread (BufferHead in journal_format.hpp), `bytes` long with its blocks
// allocated, open for reading and writing: a file descriptor, or -1 with `error` set.
int open_buffer(std::uint32_t thread, std::size_t bytes, int& error) noexcept;
std::string buffer_file(std::uint32_t thread);
// Thread `thread`'s buffer could not be mapped from its file (errno `error`): says, once per
// rank, that records not yet written out would be lost if the rank is killed outright.
void note_buffer_in_memory(std::uint32_t thread, int error) noexcept;
// Appends `bytes` of packed records (record_packing.hpp). Async-signal-safe. On an error the
// first failure is reported once per rank (from a signal handler: not at all) and false is
// returned.
bool append(int fd, const void* data, std::size_t bytes, bool from_signal = false) noexcept;
// Whether the journal's directory is still there and writable (it may be removed under us).
bool still_writable() noexcept;
// Whether writing the journal failed (and the user was told).
bool failed() noexcept;
std::string records_file(std::uint32_t thread);
std::string samples_file(std::uint32_t thread);
// The samples file of one thread: a file descriptor, or -1 (after saying why).
int open_samples(std::uint32_t thread) noexcept;

// After the archive is written: the journal is no longer needed.
void remove(std::uint32_t threads);
const std::string& trace_directory();

}  // namespace perusetrace::journal
