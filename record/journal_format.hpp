// Where the journal lives and how its files are named; shared by the runtime that writes it and
// by `perusetrace recover`, which reads it. See lib/journal.hpp for what the journal is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace perusetrace::journal {

// Written in the first line of every rank's definitions file; a reader refuses other versions.
inline constexpr int kFormatVersion = 7;  // 7: polls folded (the buffer head's fold)

// Threads of a process that get a records file (and an OTF2 location); later ones are not traced.
inline constexpr std::uint32_t kMaxThreads = 1024;
// Local communicator and file ids count up from 0 in a process; a reader takes a larger one for
// damage rather than size tables by it.
inline constexpr std::uint32_t kMaxLocalIds = 1u << 24;

inline std::string directory(const std::string& trace_dir) {
  return trace_dir + "/journal";
}

inline std::string definitions_name(int rank) {
  return "rank-" + std::to_string(rank) + ".defs";
}
inline std::string records_name(int rank, unsigned thread) {
  return "rank-" + std::to_string(rank) + ".thread-" + std::to_string(thread) + ".records";
}
// The buffer of one thread (BufferHead below).
inline std::string buffer_name(int rank, unsigned thread) {
  return "rank-" + std::to_string(rank) + ".thread-" + std::to_string(thread) + ".buffer";
}
inline std::string buffer_path(const std::string& trace_dir, int rank, unsigned thread) {
  return directory(trace_dir) + "/" + buffer_name(rank, thread);
}
// The samples of one thread (MPITRACE_SAMPLING, lib/sample_file.hpp).
inline std::string samples_name(int rank, unsigned thread) {
  return "rank-" + std::to_string(rank) + ".thread-" + std::to_string(thread) + ".samples";
}
inline std::string samples_path(const std::string& trace_dir, int rank, unsigned thread) {
  return directory(trace_dir) + "/" + samples_name(rank, thread);
}
inline std::string records_path(const std::string& trace_dir, int rank, unsigned thread) {
  return directory(trace_dir) + "/" + records_name(rank, thread);
}

// The inverse of definitions_name, records_name and buffer_name: "rank-3.defs" -> (3, -1),
// "rank-3.thread-1.records" -> (3, 1), "rank-3.thread-1.buffer" -> (3, 1, buffer); false for
// any other name, or one they would not write ("rank-03.defs").
inline bool parse_name(const std::string& name, int& rank, int& thread, bool& buffer) {
  thread = -1;
  buffer = false;
  const std::string prefix = "rank-";
  if (name.rfind(prefix, 0) != 0) return false;
  std::size_t at = prefix.size(), end = at;
  while (end < name.size() && end - at < 9 && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == at) return false;
  rank = std::stoi(name.substr(at, end - at));
  if (name == definitions_name(rank)) return true;
  const std::string middle = prefix + std::to_string(rank) + ".thread-";
  if (name.rfind(middle, 0) != 0) return false;
  at = end = middle.size();
  while (end < name.size() && end - at < 9 && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == at) return false;
  thread = std::stoi(name.substr(at, end - at));
  buffer = name == buffer_name(rank, static_cast<unsigned>(thread));
  return buffer || name == records_name(rank, static_cast<unsigned>(thread));
}
inline bool parse_name(const std::string& name, int& rank, int& thread) {
  bool buffer = false;
  return parse_name(name, rank, thread, buffer) && !buffer;
}
inline std::string definitions_path(const std::string& trace_dir, int rank) {
  return directory(trace_dir) + "/" + definitions_name(rank);
}

// A thread's buffer file: the records it committed since it last wrote its buffer out to its
// records file, as they sit in memory (48-byte Records), in a shared mapping of the file. A
// record is in the kernel's page cache the moment it is written, and stays there when the
// process dies, however it dies; `perusetrace recover` reads the buffer after the records file.
// The file starts with the writer's cursor, which its ThreadBuffer begins with (a commit is one
// store of `next`, made after the record's own stores):
struct BufferHead {
  std::uint64_t next;   // one past the last committed record, as an address in the writer; 0:
                        // closed (every record is in the records file)
  std::uint64_t end;    // one past the last slot
  std::uint64_t begin;  // the first slot, kBufferRecordsAt bytes into the file
  // How many records the thread had written to its records file when the buffer was last
  // emptied: the sequence number of the first slot. A reader skips the slots its records file
  // already holds (a process killed while writing them out).
  std::uint64_t drained;
  std::uint32_t magic;         // kBufferMagic
  std::uint32_t record_bytes;  // sizeof(Record)
  // The thread's polls being folded (lib/mpi_handlers.hpp, Call): the Enter of the first is in
  // the records, the Leave and PollFold that close them are not yet. fold_calls is 0 when no
  // fold is open and is stored last, so a reader finds the other three written for its value.
  std::uint64_t fold_calls;
  std::uint64_t fold_last;    // the last poll's exit (ticks)
  std::uint64_t fold_inside;  // the time inside the folded calls (ticks)
  std::uint32_t fold_region;
  std::uint32_t fold_spare;
};
inline constexpr std::uint32_t kBufferMagic = 0x46425450;  // "PTBF"
inline constexpr std::size_t kBufferRecordsAt = 4096;

// The definitions file is text, one fact per line, the keyword first; names come last on their
// line and run to its end, so they may hold spaces:
//   perusetrace-journal VERSION regions COUNT
//   rank RANK of SIZE
//   host NAME
//   clock START_NS REALTIME_START_NS
//   ticks TICKS NS TICKS NS   (two points of the records' clock, read at init: records carry
//                              ticks, which are ns along the line through the first point and
//                              the last one known — see record/tick_clock.hpp)
//   tickpoint TICKS NS        (a later point: at MPI_Finalize or when the program died)
//   midpoint TICKS NS         (a point noted while the run goes on, every 10 s at most: the
//                              scale of a rank killed without a word spans to the last one)
//   settings TEXT
//   comm LOCAL_ID PARENT_ID|- INTER N_MEMBERS WORLD_RANK... N_REMOTE WORLD_RANK... NAME
//   commname LOCAL_ID NAME    (MPI_Comm_set_name; the latest line for a communicator holds)
//   otherjob LOCAL_ID RELATION ARCHIVE|- JOB|-   (right after its comm line: the remote group
//                             is another MPI job, trace::JobRelation RELATION, its ranks there)
//   file LOCAL_ID COMM_LOCAL_ID NAME
//   win LOCAL_ID COMM_LOCAL_ID NAME      (an RMA window)
//   winname LOCAL_ID NAME                (MPI_Win_set_name: the window's name from now on)
//   rmagroup LOCAL_ID N WORLD_RANK...    (the group of an MPI_Win_post or MPI_Win_start)
//   filename LOCAL_ID NAME    (a file a deletion names: records IoDeleteFile carry LOCAL_ID)
//   datatype LOCAL_ID COMBINER SIZE LB EXTENT TRUE_LB TRUE_EXTENT N_INTEGERS INTEGER...
//            N_ADDRESSES ADDRESS... N_TYPES LOCAL_ID... NAME   (NAME may be empty)
//   clockdomain LEADER_RANK NAME   (the ranks reading one clock share its leader's offsets)
//   offset LOCAL_TIME OFFSET_NS ERROR_NS [EXCHANGES]   (add OFFSET_NS for rank 0's clock)
//   stopped REASON            (the program died; written by the crash handlers)
//   end END_NS                (MPI_Finalize reached; the archive is being written)
// Times are CLOCK_MONOTONIC ns except in the records, which hold ticks.

}  // namespace perusetrace::journal
