#include "tools/export/export_main.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "reader/trace_paths.hpp"
#include "tools/common/command_line.hpp"
#include "tools/common/tool_run.hpp"
#include "tools/export/export_format.hpp"
#include "tools/export/hdtrace.hpp"
#include "tools/export/output_stream.hpp"
#include "tools/export/perfetto.hpp"

namespace perusetrace::exporter {

namespace {

// The formats `perusetrace export` writes: one row each, its option, its help and its writer.
struct Format {
  std::string_view option;
  std::string_view help;  // lines of the usage text, indented by the usage
  int (*run)(const ExportRequest&);
};

constexpr Format kFormats[] = {
    {"--perfetto",
     "Chrome's trace-event JSON, which ui.perfetto.dev and chrome://tracing open:\n"
     "ranks as processes (named with their host), threads as threads, MPI calls as\n"
     "slices, Peruse events as instants with their fields, messages as arrows from\n"
     "the sending call to the receiving one, MPI-IO and one-sided operations as\n"
     "async slices from start to completion, queue depths, bytes in flight, MPI_T\n"
     "values and the sampled MPI state as counter tracks. Default output:\n"
     "TRACE-DIR.perfetto.json",
     export_perfetto},
    {"--hdtrace",
     "HDTrace's XML, which PIOsim reads: PROGRAM_HOST_RANK_THREAD.trc per thread (an\n"
     "element per MPI call) and PROGRAM.proj (topology, files, communicators,\n"
     "datatypes) in a directory (docs/hdtrace.md). Default output: TRACE-DIR.hdtrace",
     export_hdtrace},
};

std::string usage() {
  std::string text =
      "usage: perusetrace export FORMAT ARCHIVE [-o FILE] [-q] [--np N]\n\n"
      "Writes an OTF2 trace written by perusetrace in another tool's format. The events are\n"
      "streamed in time order: memory stays bounded whatever the trace's size (docs/export.md).\n\n"
      "FORMAT, one of:\n";
  for (const Format& f : kFormats) {
    text += fmt::format("  {:<14}", f.option);
    std::size_t start = 0;
    bool first = true;
    while (start < f.help.size()) {
      std::size_t end = f.help.find('\n', start);
      if (end == std::string_view::npos) end = f.help.size();
      text += fmt::format("{}{}\n", first ? " " : std::string(17, ' '),
                          f.help.substr(start, end - start));
      first = false;
      start = end + 1;
    }
  }
  text +=
      "  ARCHIVE        the trace directory (PROGRAM-trace) or its traces.otf2\n"
      "  -o FILE        the output file, '-' for standard output (default: next to the trace\n"
      "                 directory, named after it); a directory for --hdtrace\n"
      "  --program NAME the traced program's name, for formats whose files carry it (default:\n"
      "                 the trace directory's name without -trace)\n"
      "  -q, --quiet    no progress bar and no summary\n"
      "  --np N         run as an MPI job of N analysis ranks (perusetrace-analyze, started\n"
      "                 with the mpirun perusetrace was built with), each exporting a share of\n"
      "                 the archive's ranks: for --perfetto rank 0 joins their parts into the\n"
      "                 one file (the same events, in another order: viewers order them by\n"
      "                 time); for --hdtrace each writes its threads' files (the same files)\n"
      "  --mpirun-arg ARG with --np: one more argument for mpirun (repeatable), e.g. --host\n"
      "  --analysis-stats FILE  with --np: write what each analysis rank read, sent, used\n";
  return text;
}

}  // namespace

std::string default_output(const std::string& anchor, const std::string& suffix) {
  return archive::trace_directory(anchor) + suffix;
}

std::string program_name(const ExportRequest& request, const std::string& anchor) {
  if (!request.program.empty()) return request.program;
  std::string dir =
      anchor.substr(0, anchor.rfind('/') == std::string::npos ? 0 : anchor.rfind('/'));
  dir = dir.substr(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/') + 1);
  // A trace is never overwritten: DIR.1, DIR.2, ... are later runs of the same program.
  const std::size_t dot = dir.rfind('.');
  if (dot != std::string::npos && dot + 1 < dir.size() &&
      dir.find_first_not_of("0123456789", dot + 1) == std::string::npos)
    dir.erase(dot);
  const std::string suffix = "-trace";
  if (dir.size() > suffix.size() &&
      dir.compare(dir.size() - suffix.size(), suffix.size(), suffix) == 0)
    dir.erase(dir.size() - suffix.size());
  return dir.empty() || dir == "." ? "trace" : dir;
}

}  // namespace perusetrace::exporter

int export_main(int argc, char** argv) {
  using namespace perusetrace;
  using exporter::kFormats;
  const std::string text = exporter::usage();
  exporter::ExportRequest request;
  bool chosen[std::size(kFormats)] = {};
  std::vector<tools::Option> options = {{"-o", "--output", &request.output, nullptr},
                                        {"", "--program", &request.program, nullptr},
                                        {"-q", "--quiet", nullptr, &request.quiet},
                                        {"", "--analysis-stats", &request.analysis_stats, nullptr}};
  for (std::size_t i = 0; i < std::size(kFormats); ++i)
    options.push_back({"", kFormats[i].option, nullptr, &chosen[i]});
  const int rc =
      tools::parse_command_line("export", text.c_str(), argc, argv, options, request.archive);
  if (rc >= 0) return rc;
  const exporter::Format* format = nullptr;
  for (std::size_t i = 0; i < std::size(kFormats); ++i) {
    if (!chosen[i]) continue;
    if (format != nullptr) {
      fmt::print(stderr, "perusetrace export: one format at a time: {} or {}\n\n{}", format->option,
                 kFormats[i].option, text);
      return 2;
    }
    format = &kFormats[i];
  }
  if (format == nullptr) {
    fmt::print(stderr, "perusetrace export: no format given: say which, e.g. {}\n\n{}",
               kFormats[0].option, text);
    return 2;
  }
  const bool parallel = tools::analysis_group().parallel();
  if (!parallel && !request.analysis_stats.empty()) {
    fmt::print(stderr, "perusetrace export: --analysis-stats goes with --np N\n");
    return 2;
  }
  return tools::run_tool("export", [&] {
    try {
      return format->run(request);
    } catch (const exporter::OutputError& e) {
      // In a parallel export the ranks have agreed on the failure: rank 0 alone says it.
      if (tools::analysis_group().rank() == 0)
        fmt::print(stderr, "perusetrace export: {}\n", e.what());
      return 1;
    }
  });
}
