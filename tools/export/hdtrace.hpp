// `perusetrace export --hdtrace ARCHIVE -o DIR`: the archive in HDTrace's layout (docs/hdtrace.md),
// the human-readable XML that PIOsim simulates: one PROGRAM_HOST_RANK_THREAD.trc per thread with
// an element per MPI call, and PROGRAM.proj with the topology, the files, the communicators and
// the datatypes.
#pragma once

#include "tools/export/export_format.hpp"

namespace perusetrace::exporter {

int export_hdtrace(const ExportRequest& request);

}  // namespace perusetrace::exporter
