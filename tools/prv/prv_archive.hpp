// The shared archive reader (reader/) under the names the converter uses.
#pragma once

#include "reader/archive_reader.hpp"

namespace perusetrace::prv {

using archive::ArchiveReader;
using archive::CommDef;
using archive::Definitions;
using archive::EventSink;
using archive::kNoComm;
using archive::LocationDef;
using archive::MetricDef;
using archive::MetricMode;
using archive::MetricType;
using archive::NodeDef;
using archive::PeruseFields;
using archive::RankDef;
using archive::RegionDef;
using archive::RegionKind;
using archive::RegionRole;
// The converter's errors are worded for the user like the reader's.
using ConvertError = archive::ArchiveError;

}  // namespace perusetrace::prv
