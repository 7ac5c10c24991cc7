// Every analysis of `perusetrace report` over one archive, as one call: what `report` prints and
// what `diff` compares come from the same place.
#pragma once

#include <functional>
#include <string>

#include "analysis/case_listener.hpp"
#include "analysis/report_data.hpp"
#include "analysis/wait_states.hpp"
#include "reader/archive_reader.hpp"
#include "reader/progress_bar.hpp"

namespace perusetrace::report {

// What rides along with the analyses in their pass (the report's HTML timeline): it sees every
// event after them, and each case they find as they find it. `finish` comes after the analyses'
// own, while the report they fill is still the one it was made with.
class PassObserver : public archive::EventSink, public CaseListener {
 public:
  virtual void finish() = 0;
};

// Made once the archive's definitions are read, with the report the analyses fill.
using ObserverFactory =
    std::function<PassObserver*(const archive::Definitions&, const Report& report)>;

// Reads the archive at `path` (a trace directory or its traces.otf2) and returns the report;
// `by` is report --by's attribute list ("" for none). Throws archive::ArchiveError for an
// archive it cannot read.
Report analyse_archive(const std::string& path, const std::string& by, archive::ProgressBar& bar,
                       const ObserverFactory& observe = {});

}  // namespace perusetrace::report
