// `perusetrace diff`'s outputs: the table for people and the JSON (docs/diff.md).
#pragma once

#include <cstdio>
#include <string>

#include "tools/diff/comparison.hpp"
#include "tools/diff/report_summary.hpp"

namespace perusetrace::diff {

void write_text(std::FILE* out, const ReportSummary& a, const ReportSummary& b,
                const Comparison& c);
std::string to_json(const ReportSummary& a, const ReportSummary& b, const Comparison& c);

}  // namespace perusetrace::diff
