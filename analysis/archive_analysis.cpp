#include "analysis/archive_analysis.hpp"

#include <algorithm>
#include <vector>

#include "analysis/context_analysis.hpp"
#include "analysis/datatype_analysis.hpp"
#include "analysis/inside_mpi.hpp"
#include "analysis/io_analysis.hpp"
#include "analysis/mpit_analysis.hpp"
#include "analysis/peruse_analysis.hpp"
#include "analysis/rma_analysis.hpp"
#include "analysis/wait_states.hpp"
#include "reader/archive_reader.hpp"
#include "reader/clock_repair.hpp"
#include "reader/cut_sink.hpp"
#include "reader/fan_out_sink.hpp"
#include "reader/pipelined_sink.hpp"

namespace perusetrace::report {

Report analyse_archive(const std::string& path, const std::string& by, archive::ProgressBar& bar,
                       const ObserverFactory& observe) {
  archive::ArchiveReader reader(path);
  Report result;
  result.archive = reader.anchor();
  Analysis peruse_analysis(reader.definitions(), result);
  MpitAnalysis mpit_analysis(reader.definitions(), result);
  ContextAnalyses context_analysis(reader.definitions(), by, result);
  RmaAnalysis rma_analysis(reader.definitions(), result);
  IoAnalysis io_analysis(reader.definitions(), result);
  DatatypeAnalysis datatype_analysis(reader.definitions(), result);
  InsideMpiAnalysis inside_mpi(reader.definitions(), result.inside);
  WaitStateAnalysis wait_states(reader.definitions(), result.wait_states);
  // Every analysis sees each event, in this order; an observer last, after the analyses: the
  // page's timeline keeps detail around the cases they find.
  std::vector<archive::EventSink*> analyses = {
      &peruse_analysis,   &mpit_analysis,    &rma_analysis, &io_analysis,
      &datatype_analysis, &context_analysis, &inside_mpi,   &wait_states};
  PassObserver* observer = observe ? observe(reader.definitions(), result) : nullptr;
  if (observer != nullptr) {
    peruse_analysis.listen(*observer);
    wait_states.listen(*observer);
    analyses.push_back(observer);
  }
  archive::FanOutSink analysis(analyses);
  auto progress = [&](std::uint64_t done, std::uint64_t total) { bar(done, total); };
  // The clock condition is counted by the controlled logical clock's replay
  // (archive/clock_repair.hpp). On several clocks it runs as a first pass and the analysis sees
  // backwards receives moved after their send; on one clock nothing needs moving, and it reads
  // along with the analysis.
  archive::ClockRepair repair(reader.definitions());
  const bool several_clocks = archive::clock_domains(reader.definitions()) > 1;
  if (several_clocks) {
    archive::ArchiveReader first(path);
    first.read_events(repair, progress);
    repair.finish();
    bar.restart();
  }
  archive::RepairedSink repaired(repair.shifts(), analysis);
  analyses.insert(analyses.begin(), &repair);
  archive::FanOutSink counted(analyses);
  archive::EventSink& sink = !several_clocks         ? static_cast<archive::EventSink&>(counted)
                             : repair.repaired() > 0 ? static_cast<archive::EventSink&>(repaired)
                                                     : analysis;
  // A rank that stopped recording early has no side in anything after: the analyses stop there,
  // and the run they describe ends there.
  result.recording_cuts = reader.definitions().recording_cuts;
  result.analysed_until_ns = reader.definitions().analysis_cut();
  result.archive_ns = result.trace_ns;
  if (result.analysed_until_ns != 0)
    result.trace_ns = std::min(result.trace_ns, result.analysed_until_ns);
  archive::CutSink cut(sink, result.analysed_until_ns);
  // The analyses run on a thread of their own while others decode the archive.
  archive::PipelinedSink pipeline(
      result.analysed_until_ns != 0 ? static_cast<archive::EventSink&>(cut) : sink);
  reader.read_events(pipeline, progress);
  pipeline.finish();
  if (!several_clocks) repair.finish();
  bar.clear();
  peruse_analysis.finish();
  datatype_analysis.finish();
  rma_analysis.finish();
  io_analysis.finish();
  inside_mpi.finish();
  wait_states.finish(result.trace_ns);
  if (observer != nullptr) observer->finish();
  const bool moved = several_clocks && repair.repaired() > 0;
  result.clock = {repair.messages(),
                  repair.backwards(),
                  repair.worst_gap(),
                  repair.worst_sender(),
                  repair.worst_receiver(),
                  moved ? repair.repaired() : 0,
                  moved ? repair.max_shift() : 0};
  return result;
}

}  // namespace perusetrace::report
