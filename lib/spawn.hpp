// Dynamic processes: a traced job's MPI_Comm_spawn(_multiple) puts its children's trace, a job
// of their own, into a directory of its trace, and both archives record the intercommunicator
// with the other job's processes (docs/otf2-mapping.md, "Dynamic processes").
//
// The parent's root makes DIR/spawn-N (the first N free) and leaves in it a note of the parent's
// ranks; it tells the children the directory through the spawn's info key "env", which Open MPI
// puts into the children's environment (MPITRACE_SPAWN_DIRECTORY). Nothing travels over MPI:
// a parent or a child that is not traced (a child program without the library) cannot make the
// other side wait. Where the key does not reach the children (another MPI, a path too long for
// Open MPI's 255 characters), they are traced as a run of their own, as before.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "lib/mpi_handlers.hpp"

namespace perusetrace {

inline constexpr const char* kSpawnDirectoryVariable = "MPITRACE_SPAWN_DIRECTORY";

namespace spawn {

// Tracing runs on every rank, into `directory`: spawns from now on tell their children.
void configure(const std::string& directory);

// At MPI_Init of every job (collective over MPI_COMM_WORLD): the job's parent intercommunicator
// (MPI_COMM_NULL: not spawned) and, when a traced parent told this job, the directory the
// parent made for its trace and the parent's world ranks of the intercommunicator's remote group.
struct ParentJob {
  MPI_Comm comm = MPI_COMM_NULL;
  std::string directory;
  std::vector<int> ranks;
};
ParentJob parent_job(int rank);

// Once tracing is on: the parent intercommunicator, whose remote group is the job "parent".
void register_parent(const ParentJob& parent);

}  // namespace spawn

// MPI_Comm_spawn and MPI_Comm_spawn_multiple around their PMPI call, on every rank of `comm`
// (the spawn is collective over it).
class SpawnedJob {
 public:
  // `infos`: the `count` infos of the call (significant at the root only).
  SpawnedJob(const Call& call, int root, MPI_Comm comm, int count, const MPI_Info* infos) noexcept;
  ~SpawnedJob();
  SpawnedJob(const SpawnedJob&) = delete;
  SpawnedJob& operator=(const SpawnedJob&) = delete;

  // What to pass to the MPI: the program's infos, or copies that also tell the children.
  const MPI_Info* infos() const noexcept { return made_.empty() ? given_ : made_.data(); }
  // After the PMPI call: the intercommunicator reaches the children's job.
  void done(int rc, MPI_Comm intercomm) noexcept;

 private:
  bool tell_children(const std::string& note, int count);
  // Appends to the children's "env" what they inherit from this process (`output`: its
  // MPITRACE_OUTPUT too); `given` is the program's own "env", if any.
  static void inherit(const std::string& given, std::string& env, bool output = false);
  // The spawn's infos with only the inherited variables: the children trace as a run of their
  // own where the launcher passes the parent's environment on to none.
  void settings_only(int count);
  bool untold(const std::string& why);  // says once why children are not told; false

  Fn fn_;
  MPI_Comm comm_;
  const MPI_Info* given_;
  std::string job_;        // "spawn-N" on every rank; "" when the children are not told
  std::string directory_;  // the root's: the directory it made
  std::vector<MPI_Info> made_;
};

}  // namespace perusetrace
