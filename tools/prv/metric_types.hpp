// Which Paraver event type shows each metric of the archive, for the records (translator) and
// their names (pcf_row): the Peruse-derived counters have fixed types, MPI_T's values one type
// each from kTypeMpitFirst on, annotations' integer values from kTypeAnnotationSetFirst on
// (prv_codes.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/prv/prv_archive.hpp"

namespace perusetrace::prv {

// By metric id: its event type, 0 for a metric not shown.
std::vector<std::uint64_t> metric_types(const Definitions& defs);

// The .pcf label of an MPI_T value's type: what it holds, and how its value became an integer.
std::string mpit_label(const MetricDef& m);

// The .pcf label of an annotation's integer values (perusetrace/annotate.h, set).
std::string annotation_set_label(const MetricDef& m);

// MPI_T values past the type range (not shown).
std::size_t mpit_metrics_dropped(const Definitions& defs);

}  // namespace perusetrace::prv
