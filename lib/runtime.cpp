// Start and end of tracing: MPI_Init/MPI_Init_thread and MPI_Finalize.
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "lib/annotations.hpp"
#include "lib/clock_sync.hpp"
#include "lib/comm_registry.hpp"
#include "lib/crash_guard.hpp"
#include "lib/datatype_registry.hpp"
#include "lib/file_registry.hpp"
#include "lib/final_archive.hpp"
#include "lib/journal.hpp"
#include "lib/mpi_handlers.hpp"
#include "lib/mpi_state.hpp"
#include "lib/mpit_session.hpp"
#include "lib/output_directory.hpp"
#include "lib/peruse_session.hpp"
#include "lib/rma_group_registry.hpp"
#include "lib/sampler.hpp"
#include "lib/settings.hpp"
#include "lib/spawn.hpp"
#include "lib/window_registry.hpp"
#include "lib/world.hpp"
#include "lib/writeback.hpp"
#include "record/global_clock.hpp"
#include "record/tick_clock.hpp"

namespace perusetrace {

namespace {

struct Run {
  int rank = 0;
  int size = 1;
  std::string directory;
  std::uint64_t start_time = 0;
  std::uint64_t realtime_start = 0;
  TickPoint ticks_first;  // the records' clock at init; with the point at the end, its scale
  std::string settings;
  trace::CommLayout comm_layout = trace::CommLayout::Otf2;
  ClockSync clocks;
};
Run g_run;

// Bad settings stop the run at MPI_Init, before the program has done any work: a tracing run
// with settings other than the user asked for would be a wasted batch job.
[[noreturn]] void stop_for_bad_settings(const std::string& errors) {
  if (g_run.rank == 0) {
    std::fprintf(stderr, "perusetrace: the run stops at MPI_Init because of its settings:\n%s",
                 errors.c_str());
  }
  PMPI_Barrier(MPI_COMM_WORLD);
  PMPI_Finalize();
  std::exit(2);
}

void warn_unknown_variables() {
  const std::string lines = unknown_variables(environ);
  for (std::size_t start = 0, end; start < lines.size(); start = end + 1) {
    end = lines.find('\n', start);
    std::fprintf(stderr, "perusetrace: %.*s\n", static_cast<int>(end - start), &lines[start]);
  }
}

// MPITRACE_MAX_SIZE for this rank. By default each rank's share of 40 % of the space free in the
// trace directory at MPI_Init: at MPI_Finalize the journal and the archive made from it (about
// as large) are both on disk, so a run that hits the limit everywhere still leaves a fifth of
// the free space free. Ranks that share the directory's file system share its space: the share
// is of the whole job, the cautious choice where ranks on other nodes write elsewhere.
std::uint64_t journal_limit(const Settings& settings, const std::string& directory, int size) {
  if (!settings.max_size_auto) return settings.max_journal_bytes;
  struct statvfs fs;
  if (::statvfs(directory.c_str(), &fs) != 0) return 0;
  const auto free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  constexpr std::uint64_t kLeast = 64ull << 20;  // a few buffers: a run that starts at all
  return std::max(free_bytes / 5 * 2 / static_cast<std::uint64_t>(std::max(size, 1)), kLeast);
}

// Rank 0 tells which ranks stopped recording at MPITRACE_MAX_SIZE (each said so when it did);
// collective.
void say_cuts(const trace::ProcessInfo& process) {
  struct {
    double seconds;
    int rank;
  } mine{1e300, g_run.rank}, first{};
  int cut = 0, cuts = 0;
  if (process.cut_time != 0) {
    mine.seconds = static_cast<double>(process.cut_time - process.start_time) / 1e9;
    cut = 1;
  }
  PMPI_Reduce(&mine, &first, 1, MPI_DOUBLE_INT, MPI_MINLOC, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&cut, &cuts, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_run.rank == 0 && cuts > 0)
    std::fprintf(stderr,
                 "perusetrace: recording stopped early on %d of %d ranks, their journals full "
                 "(MPITRACE_MAX_SIZE), the first rank %d, %.3f s after MPI_Init. The archive "
                 "holds everything before; the report's analyses stop there.\n",
                 cuts, g_run.size, first.rank, first.seconds);
}

// A new offset measurement, noted in the journal as soon as it is known.
void measure_clock() {
  g_run.clocks.measure();
  journal::note_clock_offset(g_run.clocks.points().back());
}

}  // namespace

void on_init(int rc, Fn fn, std::uint64_t start, int provided) {
  if (rc != MPI_SUCCESS) return;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_run.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_run.size);

  Settings settings = read_settings([](const char* name) { return std::getenv(name); });
  if (!settings.errors.empty()) stop_for_bad_settings(settings.errors);
  if (g_run.rank == 0) warn_unknown_variables();
  if (!settings.enabled) return;
  if (g_run.rank == 0 && !settings.ranks.empty() && !settings.sample_only)
    std::fprintf(stderr,
                 "perusetrace: MPITRACE_RANKS with full tracing: a message between a rank that "
                 "collects and one that does not has one side only in the trace.\n");
  if (!rank_selected(settings, g_run.rank)) {
    // A rank left out still takes part in what is collective (the clocks, the archive), but
    // records nothing of its own beyond MPI_Init and MPI_Finalize.
    settings.group_mask = 0;
    settings.peruse_events = EventSet{};
    settings.sampling_period_ns = 0;
    settings.pvars.clear();
    settings.sample_only = false;
  } else if (settings.sample_only) {
    settings.group_mask = 0;  // no call, message or collective records
    // Peruse only tells the states apart (work from stall) there, unless the user said none:
    // then a waiting call is a stall from its start, and Open MPI dispatches no callback.
    if (!(settings.peruse_events_set && settings.peruse_events.none()))
      settings.peruse_events.set();
  }
  const mpit::SelectResult mpit_selection = mpit::select(settings);
  if (!all_ranks(mpit_selection.errors.empty())) stop_for_bad_settings(mpit_selection.errors);
  if (g_run.rank == 0 && !mpit_selection.notice.empty())
    std::fprintf(stderr, "perusetrace: %s", mpit_selection.notice.c_str());

  const spawn::ParentJob parent = spawn::parent_job(g_run.rank);
  std::string why;
  g_run.directory =
      broadcast(g_run.rank == 0 ? choose_directory(settings, parent.directory, why) : "");
  if (g_run.directory.empty()) {
    if (g_run.rank == 0)
      std::fprintf(stderr, "perusetrace: %s The program runs untraced.\n", why.c_str());
    return;
  }

  if (!same_directory_everywhere(g_run.directory, g_run.rank, g_run.size)) return;

  // `start` was read before the clock was chosen, so it is ns: records want ticks.
  std::string clock_problem;
  if (!choose_tick_clock(settings.clock, clock_problem))
    std::fprintf(stderr, "perusetrace rank %d: %s This rank uses CLOCK_MONOTONIC.\n", g_run.rank,
                 clock_problem.c_str());
  g_run.ticks_first = tick_point();
  TickPoint second = tick_point();
  // A scale for a rank that dies without a word (SIGKILL): 2 ms is an error of a few ppm.
  while (tick_clock_is_tsc() && second.ns - g_run.ticks_first.ns < 2'000'000) second = tick_point();
  const TickScale init_scale = tick_scale(g_run.ticks_first, second);
  const std::uint64_t start_ticks = init_scale.to_ticks(start);
  g_run.start_time = start;
  g_run.realtime_start = realtime_ns() - (now_ns() - start);
  g_run.settings = describe(settings) + " MPITRACE_CLOCK=" + tick_clock_name();
  g_run.comm_layout = settings.vite_comms ? trace::CommLayout::Vite : trace::CommLayout::Otf2;
  journal::Header header;
  header.rank = g_run.rank;
  header.size = g_run.size;
  header.host = host_name();
  header.start_time = g_run.start_time;
  header.realtime_start = g_run.realtime_start;
  header.ticks_first = g_run.ticks_first;
  header.ticks_second = second;
  header.settings = g_run.settings;
  std::string error;
  const bool ok = journal::open(g_run.directory, header, error);
  if (!all_ranks(ok)) {
    if (!ok)
      std::fprintf(stderr, "perusetrace rank %d: %s The program runs untraced.\n", g_run.rank,
                   error.c_str());
    return;
  }

  spawn::configure(g_run.directory);

  // Before Peruse is attached: the clock's messages are the tracer's, not the program's.
  g_run.clocks.join();
  journal::note_clock_domain(g_run.clocks.leader(), g_run.clocks.domain());
  measure_clock();

  g_group_mask = settings.group_mask;
  g_fold_polls = settings.fold_polls;
  g_fold_gap_ticks = init_scale.to_ticks(start + kFoldGapNs) - init_scale.to_ticks(start);
  std::string sampling_problem, sampling_notice;
  if (!sampling::configure(settings.sampling_period_ns, settings.sampling_wall_clock,
                           sampling_problem, sampling_notice) &&
      g_run.rank == 0)
    std::fprintf(stderr, "perusetrace: %s; the run is not sampled.\n", sampling_problem.c_str());
  else if (!sampling_notice.empty() && g_run.rank == 0)
    std::fprintf(stderr, "perusetrace: %s.\n", sampling_notice.c_str());
  configure_buffers(settings.buffer_bytes, settings.buffers_in_memory,
                    journal_limit(settings, g_run.directory, g_run.size));
  writeback::start(settings.writeback_period_ns);
  g_comms.start();
  rma_groups::start();
  const peruse::StartResult peruse =
      peruse::start(settings.peruse_events, provided == MPI_THREAD_MULTIPLE, settings.sample_only);
  state::configure(init_scale, peruse.active);
  // Without an explicit MPITRACE_PERUSE_EVENTS a missing Peruse is expected, not news.
  if (g_run.rank == 0 && !peruse.notice.empty() && (settings.peruse_events_set || peruse.active))
    std::fprintf(stderr, "perusetrace: %s\n", peruse.notice.c_str());
  peruse::attach(MPI_COMM_WORLD, g_comms.find(MPI_COMM_WORLD));
  peruse::attach(MPI_COMM_SELF, g_comms.find(MPI_COMM_SELF));

  g_state.store(TraceState::On);
  install_crash_guard();
  const auto region = static_cast<std::uint16_t>(fn);
  emit_first(Record{start_ticks, RecordKind::Enter, 0, region, 0, 0, 0, 0, 0, 0});
  // Inside MPI_Init's region: the PVARs' first values, and the CVARs as MPI_Init left them.
  mpit::start(settings, g_run.rank, init_scale);
  if (const CommEntry* world = g_comms.find(MPI_COMM_WORLD))
    mpit::attach(MPI_COMM_WORLD, world->local_id, world->world);
  if (const CommEntry* self = g_comms.find(MPI_COMM_SELF))
    mpit::attach(MPI_COMM_SELF, self->local_id, self->world);
  spawn::register_parent(parent);
  record_region(RecordKind::Leave, region);
}

void before_init() {
  mpit::before_init();
}

void on_pcontrol(int level) noexcept {
  // 0 pauses what is collected, any other level resumes it (MPI leaves levels to the tool).
  static std::uint32_t resumed_mask = 0;
  static bool paused = false;
  const bool pause = level == 0;
  if (g_state.load() != TraceState::On || pause == paused) return;
  paused = pause;
  if (pause) resumed_mask = g_group_mask;
  g_group_mask = pause ? 0 : resumed_mask;
  peruse::pause(pause);
  sampling::pause(pause);
}

void on_finalize() {
  if (g_state.load() == TraceState::Off) return;
  end_fold();
  const auto region = static_cast<std::uint16_t>(Fn::MPI_Finalize);
  record_region(RecordKind::Enter, region);
  sampling::stop_all();  // the samples end where the program's own work does
  peruse::stop();
  mpit::stop();
  measure_clock();
  g_run.clocks.leave();
  record_region(RecordKind::Leave, region);
  const std::uint64_t end = now_ns();

  const bool stopped = g_state.exchange(TraceState::Off) == TraceState::Stopped;
  writeback::stop();
  drain_all_buffers();
  remove_crash_guard();
  const TickPoint last = tick_point();
  journal::note_end(end, last);

  // Only what is on disk counts: the directory may have gone since the last drain.
  if (!all_ranks(journal::still_writable())) {
    if (g_run.rank == 0)
      std::fprintf(stderr,
                   "perusetrace: no trace was written: %s is missing or not writable (was the "
                   "directory removed while the program ran?).\n",
                   g_run.directory.c_str());
    return;
  }
  trace::ProcessInfo process;
  process.host = host_name();
  process.comms = g_comms.snapshot();
  process.files = g_files.snapshot();
  process.windows = g_windows.snapshot();
  process.rma_groups = rma_groups::snapshot();
  process.file_names = g_files.file_names();
  process.datatypes = g_datatypes.snapshot();
  process.metrics = mpit::recorded_metrics();
  for (trace::MetricInfo& m : annotate::recorded_metrics()) process.metrics.push_back(std::move(m));
  process.annotations = annotate::recorded_annotations();
  process.process_attributes = annotate::process_attributes();
  process.cvars = mpit::recorded_cvars();
  process.cvars_set = mpit::cvar_settings();
  GlobalClock clock;
  clock.scale = tick_scale(g_run.ticks_first, last);
  for (const trace::ClockOffset& p : g_run.clocks.points()) clock.offsets.add(p);
  process.clock_offsets = g_run.clocks.points();
  process.clock_leader = g_run.clocks.leader();
  process.start_time = clock.offsets.to_global(g_run.start_time);
  process.end_time = clock.offsets.to_global(end);
  process.realtime_start = g_run.realtime_start;
  if (const std::uint64_t cut = cut_ticks(); cut != 0)
    process.cut_time = clock.offsets.to_global(clock.scale.to_ns(cut));
  say_cuts(process);
  if (stopped) g_state.store(TraceState::Stopped);  // the archive says it is incomplete
  FinalArchive archive{g_run.directory,
                       g_run.rank,
                       g_run.size,
                       g_run.settings,
                       g_state.load() == TraceState::Stopped,
                       g_run.comm_layout};
  write_final_archive(archive, process, thread_count(), clock);
}

}  // namespace perusetrace
