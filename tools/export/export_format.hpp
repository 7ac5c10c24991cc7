// What `perusetrace export` hands each output format: the archive to read, where to write and
// how talkative to be. A format is one function taking this (export_main.cpp lists them).
#pragma once

#include <string>

namespace perusetrace::exporter {

struct ExportRequest {
  std::string archive;         // the trace directory or its traces.otf2
  std::string output;          // the file to write, "-" for standard output; "" for the default
  bool quiet = false;          // no progress bar and no summary
  std::string program;         // --program: the traced program's name, "" to derive it
  std::string analysis_stats;  // --analysis-stats: with --np, what each analysis rank did
};

// The output a format writes when no -o is given: the trace directory's path (its anchor's
// directory) with `suffix` appended, next to the directory, as `perusetrace prv` does.
std::string default_output(const std::string& anchor, const std::string& suffix);

// The traced program's name, for formats whose files carry it: --program, else the trace
// directory's name without "-trace" (perusetrace's default PROGRAM-trace) and without the ".N" of
// a later run, else "trace".
std::string program_name(const ExportRequest& request, const std::string& anchor);

}  // namespace perusetrace::exporter
