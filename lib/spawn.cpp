#include "lib/spawn.hpp"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "lib/comm_registry.hpp"
#include "lib/mpit_session.hpp"
#include "lib/peruse_session.hpp"
#include "lib/world.hpp"

namespace perusetrace {

namespace {

// Left in DIR/spawn-N by the parent's root; the children's rank 0 renames it to kClaimedNote
// when it takes the directory, so that a later job whose environment still names it (a child's
// own children) does not write there too.
constexpr const char* kNote = "/.perusetrace-spawn";
constexpr const char* kClaimedNote = "/.perusetrace-parent";
constexpr const char* kNoteHeader = "perusetrace-spawn 1";

std::string g_directory;                 // the trace's, once configure() ran on every rank
std::atomic<bool> g_told_untold{false};  // said once per process

std::string spawn_directory_name(int n) {
  return "spawn-" + std::to_string(n);
}

// The world ranks of comm's members in rank order; empty when one is not in this job.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group, world;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> mine(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(group, n, mine.data(), world, out.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  for (const int r : out)
    if (r == MPI_UNDEFINED) return {};
  return out;
}

// Rank `root`'s text on every rank of `comm`.
std::string broadcast_in(std::string text, int root, MPI_Comm comm) {
  int length = static_cast<int>(text.size());
  PMPI_Bcast(&length, 1, MPI_INT, root, comm);
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) PMPI_Bcast(text.data(), length, MPI_CHAR, root, comm);
  return text;
}

void follow(MPI_Comm comm, const CommEntry* entry) {
  peruse::attach(comm, entry);
  if (entry != nullptr) mpit::attach(comm, entry->local_id, entry->world);
}

// The parent's ranks from a note (kNoteHeader, then "parent-ranks R R ..."); false when it is
// not one.
bool read_note(const std::string& path, std::vector<int>& ranks) {
  std::ifstream in(path);
  std::string header, key;
  if (!std::getline(in, header) || header != kNoteHeader || !(in >> key) || key != "parent-ranks")
    return false;
  for (int r; in >> r;) ranks.push_back(r);
  return !ranks.empty();
}

// The spawn info key whose newline-separated NAME=VALUE lines Open MPI puts into the children's
// environment: "env" until 5.0, which says it is deprecated for PMIX_ENVAR on every spawn.
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5
constexpr const char* kEnvKey = "PMIX_ENVAR";
#else
constexpr const char* kEnvKey = "env";
#endif

}  // namespace

namespace spawn {

void configure(const std::string& directory) {
  g_directory = directory;
}

ParentJob parent_job(int rank) {
  ParentJob parent;
  PMPI_Comm_get_parent(&parent.comm);
  if (parent.comm == MPI_COMM_NULL) return parent;
  std::string text;
  if (rank == 0) {
    const char* dir = std::getenv(kSpawnDirectoryVariable);
    std::vector<int> ranks;
    if (dir != nullptr && *dir != '\0' && read_note(std::string(dir) + kNote, ranks) &&
        std::rename((std::string(dir) + kNote).c_str(),
                    (std::string(dir) + kClaimedNote).c_str()) == 0) {
      text = dir;
      for (const int r : ranks) text += ' ' + std::to_string(r);
    }
  }
  text = broadcast(text);
  const std::size_t space = text.find(' ');
  if (space == std::string::npos) return parent;
  parent.directory = text.substr(0, space);
  std::istringstream in(text.substr(space + 1));
  for (int r; in >> r;) parent.ranks.push_back(r);
  return parent;
}

void register_parent(const ParentJob& parent) {
  if (parent.comm == MPI_COMM_NULL) return;
  OtherJob job;
  job.relation = trace::JobRelation::Parent;
  job.name = "parent";
  int remote = 0;
  PMPI_Comm_remote_size(parent.comm, &remote);
  // Without a note the parent's ranks are those of its spawning communicator.
  if (!parent.directory.empty() && static_cast<int>(parent.ranks.size()) == remote) {
    job.archive = "../traces.otf2";
    job.ranks = parent.ranks;
  }
  follow(parent.comm, g_comms.add(parent.comm, "MPI_Comm_get_parent", MPI_COMM_NULL, &job));
}

}  // namespace spawn

SpawnedJob::SpawnedJob(const Call& call, int root, MPI_Comm comm, int count,
                       const MPI_Info* infos) noexcept
    : fn_(call.fn()), comm_(comm), given_(infos) {
  if (g_directory.empty()) return;  // untraced on every rank: no collective of ours
  // An erroneous call is the MPI's to refuse, in its own words: nothing of ours goes first.
  int inter = 1, rank = 0, size = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || PMPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      root < 0 || root >= size)
    return;
  if (rank == root) {
    const std::vector<int> parents = world_ranks_of(comm);
    for (int n = 1; !parents.empty() && n < 100000; ++n) {
      const std::string dir = g_directory + "/" + spawn_directory_name(n);
      if (::mkdir(dir.c_str(), 0777) == 0) {
        directory_ = dir;
        job_ = spawn_directory_name(n);
        break;
      }
      if (errno != EEXIST) break;
    }
    std::string note = std::string(kNoteHeader) + "\nparent-ranks";
    for (const int r : parents) note += ' ' + std::to_string(r);
    if (!job_.empty() && !tell_children(note + '\n', count)) {
      ::rmdir(directory_.c_str());
      directory_.clear();
      job_.clear();
    }
  }
  job_ = broadcast_in(job_, root, comm);
}

bool SpawnedJob::tell_children(const std::string& note, int count) {
  FILE* f = std::fopen((directory_ + kNote).c_str(), "w");
  const bool written = f != nullptr && std::fputs(note.c_str(), f) >= 0;
  if (f == nullptr || std::fclose(f) != 0 || !written) {
    const int error = errno;
    std::remove((directory_ + kNote).c_str());
    return untold("cannot write " + directory_ + kNote + ": " + std::strerror(error));
  }
  // Open MPI starts the children in the root's working directory unless "wdir" says otherwise:
  // a relative path serves when the absolute one is too long for the info value.
  std::vector<std::string> paths;
  if (char* real = ::realpath(directory_.c_str(), nullptr)) {
    paths.emplace_back(real);
    std::free(real);
  }
  if (directory_[0] != '/') paths.push_back(directory_);
  if (count <= 0) return false;  // an erroneous call: the MPI says so
  made_.assign(static_cast<std::size_t>(count), MPI_INFO_NULL);
  bool all = true, fits = true;
  for (int i = 0; i < count && all; ++i) {
    MPI_Info& info = made_[static_cast<std::size_t>(i)];
    const MPI_Info given = given_ == nullptr ? MPI_INFO_NULL : given_[i];
    if (given == MPI_INFO_NULL ? PMPI_Info_create(&info) : PMPI_Info_dup(given, &info))
      info = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1] = {0};
    char other[MPI_MAX_INFO_VAL + 1] = {0};
    int has_env = 0, has_other = 0, has_wdir = 0;
    if (info != MPI_INFO_NULL) {
      PMPI_Info_get(info, kEnvKey, MPI_MAX_INFO_VAL, value, &has_env);
      // The program's own variables under the other key (Open MPI 5 reads both).
      if (std::strcmp(kEnvKey, "env") != 0)
        PMPI_Info_get(info, "env", MPI_MAX_INFO_VAL, other, &has_other);
      char wdir[MPI_MAX_INFO_VAL + 1];
      PMPI_Info_get(info, "wdir", MPI_MAX_INFO_VAL, wdir, &has_wdir);
    }
    const std::string given_env =
        std::string(has_env ? value : "") + '\n' + std::string(has_other ? other : "");
    bool set = false;
    for (const std::string& path : paths) {
      if (path[0] != '/' && has_wdir) continue;
      std::string env = (has_env ? std::string(value) + '\n' : std::string()) +
                        kSpawnDirectoryVariable + '=' + path;
      // Open MPI reads at most MPI_MAX_INFO_VAL - 1 characters of it.
      fits = env.size() < MPI_MAX_INFO_VAL;
      if (info == MPI_INFO_NULL || !fits) continue;
      inherit(given_env, env);
      set = PMPI_Info_set(info, kEnvKey, env.c_str()) == MPI_SUCCESS;
      if (set) break;
    }
    all = set;
  }
  if (all) return true;
  for (MPI_Info& info : made_)
    if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
  made_.clear();
  std::remove((directory_ + kNote).c_str());
  if (!fits) {
    // Where the launcher does not pass the parent's environment on, the children still need
    // the tracer and its settings to trace as a run of their own.
    if (std::strcmp(kEnvKey, "env") != 0) settings_only(count);
    return untold("the path of " + directory_ + " does not fit into the spawn's info (\"env\", " +
                  std::to_string(MPI_MAX_INFO_VAL - 1) +
                  " characters with the program's own); a shorter MPITRACE_OUTPUT keeps them "
                  "with this trace");
  }
  return untold("the MPI refused a copy of the spawn's info");
}

void SpawnedJob::settings_only(int count) {
  made_.assign(static_cast<std::size_t>(count), MPI_INFO_NULL);
  for (int i = 0; i < count; ++i) {
    MPI_Info& info = made_[static_cast<std::size_t>(i)];
    const MPI_Info given = given_ == nullptr ? MPI_INFO_NULL : given_[i];
    if (given == MPI_INFO_NULL ? PMPI_Info_create(&info) : PMPI_Info_dup(given, &info))
      info = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL) continue;
    char value[MPI_MAX_INFO_VAL + 1] = {0}, other[MPI_MAX_INFO_VAL + 1] = {0};
    int has_env = 0, has_other = 0;
    PMPI_Info_get(info, kEnvKey, MPI_MAX_INFO_VAL, value, &has_env);
    PMPI_Info_get(info, "env", MPI_MAX_INFO_VAL, other, &has_other);
    std::string env = has_env ? value : "";
    inherit(env + '\n' + (has_other ? other : ""), env, true);
    if (!env.empty() && env[0] == '\n') env.erase(0, 1);
    if (!env.empty()) PMPI_Info_set(info, kEnvKey, env.c_str());
  }
}

// Open MPI 4.1's launcher gives spawned children the environment mpirun forwarded to the parent;
// 5.0's (PRRTE) does not: the tracer's preload and settings go along in "env" where they fit,
// unless the program's own "env" names LD_PRELOAD (it wants its children as it says).
void SpawnedJob::inherit(const std::string& given, std::string& env, bool output) {
  auto add = [&](const std::string& line) {
    if (env.size() + 1 + line.size() < MPI_MAX_INFO_VAL) env += '\n' + line;
  };
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "perusetrace") != nullptr &&
      given.find("LD_PRELOAD=") == std::string::npos)
    add(std::string("LD_PRELOAD=") + preload);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string line = *e;
    if (line.rfind("MPITRACE_", 0) != 0 || (!output && line.rfind("MPITRACE_OUTPUT=", 0) == 0) ||
        line.rfind(std::string(kSpawnDirectoryVariable) + '=', 0) == 0 ||
        given.find(line.substr(0, line.find('=') + 1)) != std::string::npos)
      continue;
    add(line);
  }
}

bool SpawnedJob::untold(const std::string& why) {
  if (!g_told_untold.exchange(true))
    std::fprintf(stderr,
                 "perusetrace: the children of %s are traced as a run of their own (and so are "
                 "later ones that meet the same problem): %s.\n",
                 kMpiFunctions[static_cast<std::size_t>(fn_)].name, why.c_str());
  return false;
}

SpawnedJob::~SpawnedJob() {
  for (MPI_Info& info : made_)
    if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
}

void SpawnedJob::done(int rc, MPI_Comm intercomm) noexcept {
  const bool started = rc == MPI_SUCCESS && intercomm != MPI_COMM_NULL;
  if (!started && !directory_.empty()) {
    std::remove((directory_ + kNote).c_str());
    ::rmdir(directory_.c_str());
  }
  if (!started || g_state.load() != TraceState::On || g_comms.find(intercomm) != nullptr) return;
  OtherJob job;
  job.relation = trace::JobRelation::Spawned;
  job.name = job_;
  if (!job_.empty()) job.archive = job_ + "/traces.otf2";
  int children = 0;
  PMPI_Comm_remote_size(intercomm, &children);
  // The children's MPI_COMM_WORLD is the remote group, in its order.
  for (int r = 0; r < children; ++r) job.ranks.push_back(r);
  follow(intercomm,
         g_comms.add(intercomm, kMpiFunctions[static_cast<std::size_t>(fn_)].name, comm_, &job));
}

}  // namespace perusetrace
