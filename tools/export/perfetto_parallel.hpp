// `perusetrace export --perfetto --np N`: the export as an MPI job of analysis ranks
// (tools/common/analysis_group.hpp). Each rank writes its share of the archive's ranks as a
// part of JSON events, every arrow end where it lies among its thread's events; a send to a
// rank exported elsewhere travels as its half (reader/message_halves.hpp), in rounds
// (tools/common/exchange_rounds.hpp), to the rank exporting its receiver, which fills its
// arrow id into the receive's end. Rank 0 writes the opening and the metadata, appends the
// parts and closes the file: the events of one process's export, in another order across threads (a
// viewer orders them by time), the same within each, with other flow and operation ids.
#pragma once

#include "tools/export/export_format.hpp"

namespace perusetrace::exporter {

// Returns the exit code; throws archive::ArchiveError or OutputError, on every rank, when any
// rank fails, and then leaves no output behind.
int export_perfetto_in_group(const ExportRequest& request);

}  // namespace perusetrace::exporter
