#include "tools/report/archive_analysis.hpp"

#include <optional>

#include "tools/archive/archive_reader.hpp"
#include "tools/archive/clock_repair.hpp"
#include "tools/archive/pipelined_sink.hpp"
#include "tools/report/analysis.hpp"
#include "tools/report/context_analysis.hpp"
#include "tools/report/io_analysis.hpp"
#include "tools/report/datatype_analysis.hpp"
#include "tools/report/mpit_analysis.hpp"
#include "tools/report/rma_analysis.hpp"
#include "tools/report/timeline_builder.hpp"

namespace perusetrace::report {

Report analyse_archive(const std::string& path, const std::string& by, archive::ProgressBar& bar,
                       timeline::Timeline* timeline) {
  archive::ArchiveReader reader(path);
  Report result;
  result.archive = reader.anchor();
  Analysis peruse_analysis(reader.definitions(), result);
  MpitAnalysis mpit_analysis(reader.definitions(), result);
  ContextAnalyses context_analysis(reader.definitions(), by, result);
  RmaAnalysis rma_analysis(reader.definitions(), result);
  IoAnalysis io_analysis(reader.definitions(), result);
  archive::TeeSink first_two(peruse_analysis, mpit_analysis);
  archive::TeeSink first_three(first_two, rma_analysis);
  archive::TeeSink first_four(first_three, io_analysis);
  DatatypeAnalysis datatype_analysis(reader.definitions(), result);
  archive::TeeSink first_five(first_four, datatype_analysis);
  archive::TeeSink all_six(first_five, context_analysis);
  // The page's timeline sees each event after the analyses: it keeps detail around the cases
  // they find.
  std::optional<timeline::TimelineBuilder> builder;
  std::optional<archive::TeeSink> with_timeline;
  if (timeline != nullptr) {
    builder.emplace(reader.definitions(), result);
    peruse_analysis.listen(*builder);
    with_timeline.emplace(all_six, *builder);
  }
  archive::EventSink& analysis = with_timeline ? static_cast<archive::EventSink&>(*with_timeline)
                                               : static_cast<archive::EventSink&>(all_six);
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
  archive::TeeSink counted(repair, analysis);
  archive::EventSink& sink = !several_clocks         ? static_cast<archive::EventSink&>(counted)
                             : repair.repaired() > 0 ? static_cast<archive::EventSink&>(repaired)
                                                     : analysis;
  // The analyses run on a second thread while this one decodes the archive.
  archive::PipelinedSink pipeline(sink);
  reader.read_events(pipeline, progress);
  pipeline.finish();
  if (!several_clocks) repair.finish();
  bar.clear();
  peruse_analysis.finish();
  datatype_analysis.finish();
  rma_analysis.finish();
  io_analysis.finish();
  if (builder) *timeline = builder->finish();
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
