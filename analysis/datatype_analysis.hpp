// Per MPI datatype: how many messages, collectives and file operations named it as their
// buffer's type and how many bytes they moved through it, and whether it is contiguous (data
// of a non-contiguous type is packed and unpacked by the MPI, which costs time and memory).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/report_data.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::report {

class DatatypeAnalysis : public archive::EventSink {
 public:
  DatatypeAnalysis(const archive::Definitions& defs, Report& out);
  void datatype_use(std::uint32_t loc, std::uint64_t t,
                    const archive::DatatypeBytes& use_of) override;
  // Puts the datatypes that carried anything into the report, most bytes first.
  void finish();

 private:
  const archive::Definitions& defs_;
  Report& out_;
  std::vector<DatatypeStat> stats_;  // by archive datatype id
  std::vector<bool> used_;
  // (location, time, datatype) of the latest collective send use: its receive may follow.
  std::tuple<std::uint32_t, std::uint64_t, std::uint32_t> last_collective_send_{~0u, 0, ~0u};
};

// How the report calls a datatype: its name, else its structure, inner types by name.
std::string datatype_name(const archive::Definitions& defs, std::uint32_t id, int depth = 0);

}  // namespace perusetrace::report
