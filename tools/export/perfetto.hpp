// `perusetrace export --perfetto`: an archive as Chrome's trace-event JSON, the format that both
// the Perfetto UI (ui.perfetto.dev) and chrome://tracing open (docs/export.md says why this one
// and how the archive maps onto it).
#pragma once

#include "tools/export/export_format.hpp"

namespace perusetrace::exporter {

// Writes the JSON; returns the exit code. Throws archive::ArchiveError for an archive it cannot
// read and OutputError for an output it cannot write.
int export_perfetto(const ExportRequest& request);

}  // namespace perusetrace::exporter
