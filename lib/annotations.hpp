// Context annotations (include/perusetrace/annotate.h): attributes, their values interned once per
// process, and each thread's open values. A begin or end is one record (AnnotationBegin/End) in the
// thread's buffer; the context is not copied into other records but rebuilt by time when the
// trace is read (docs/annotations.md).
#pragma once

#include <string>
#include <vector>

#include "otf2_writer/writer.hpp"

namespace perusetrace::annotate {

// At MPI_Finalize: the "ATTRIBUTE=VALUE" pairs by local id, and the integer attributes' metrics.
std::vector<std::string> recorded_annotations();
std::vector<trace::MetricInfo> recorded_metrics();
// The attributes created with process scope.
std::vector<std::string> process_attributes();

}  // namespace perusetrace::annotate
