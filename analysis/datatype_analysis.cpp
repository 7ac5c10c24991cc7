#include "analysis/datatype_analysis.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace perusetrace::report {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string joined(const std::vector<std::int64_t>& v, std::size_t from, std::size_t n,
                   const char* separator) {
  std::string out;
  for (std::size_t i = from; i < from + n && i < v.size(); ++i)
    out += (i > from ? separator : "") + std::to_string(v[i]);
  return out;
}

}  // namespace

std::string datatype_name(const archive::Definitions& defs, std::uint32_t id, int depth) {
  if (id >= defs.datatypes.size()) return "datatype " + std::to_string(id);
  const archive::DatatypeDef& d = defs.datatypes[id];
  if (!d.name.empty()) return d.name;
  // Deep nesting is named by id: a name should fit a table's column.
  if (depth >= 2) return "datatype " + std::to_string(id);
  const std::string of =
      d.types.empty()
          ? ""
          : " of " + datatype_name(defs, static_cast<std::uint32_t>(d.types[0]), depth + 1);
  const std::vector<std::int64_t>& n = d.integers;
  const std::string c = d.combiner;
  if (c == "DUP") return "dup" + of;
  if (c == "CONTIGUOUS" && !n.empty()) return "contiguous(" + std::to_string(n[0]) + ")" + of;
  if (c == "VECTOR" && n.size() >= 3) return "vector(" + joined(n, 0, 3, ", ") + ")" + of;
  if (c == "HVECTOR" && n.size() >= 2 && !d.addresses.empty())
    return "hvector(" + joined(n, 0, 2, ", ") + ", " + std::to_string(d.addresses[0]) + " B)" + of;
  if ((c == "INDEXED" || c == "HINDEXED" || c == "INDEXED_BLOCK" || c == "HINDEXED_BLOCK") &&
      !n.empty())
    return lower(c) + "(" + std::to_string(n[0]) + " blocks)" + of;
  if (c == "SUBARRAY" && !n.empty()) {
    const auto dims = static_cast<std::size_t>(std::max<std::int64_t>(n[0], 0));
    return "subarray(" + joined(n, 1, dims, "x") + ", " + joined(n, 1 + dims, dims, "x") + " at " +
           joined(n, 1 + 2 * dims, dims, ",") + ")" + of;
  }
  if (c == "RESIZED" && d.addresses.size() >= 2)
    return "resized(lb " + std::to_string(d.addresses[0]) + ", extent " +
           std::to_string(d.addresses[1]) + ")" + of;
  if (c == "STRUCT") {
    std::string members;
    for (std::size_t i = 0; i < d.types.size() && i < 4; ++i)
      members +=
          (i ? ", " : "") + datatype_name(defs, static_cast<std::uint32_t>(d.types[i]), depth + 1);
    if (d.types.size() > 4) members += ", ...";
    return "struct(" + members + ")";
  }
  return lower(c) + of;
}

DatatypeAnalysis::DatatypeAnalysis(const archive::Definitions& defs, Report& out)
    : defs_(defs), out_(out), stats_(defs.datatypes.size()), used_(defs.datatypes.size(), false) {}

void DatatypeAnalysis::datatype_use(std::uint32_t loc, std::uint64_t t,
                                    const archive::DatatypeBytes& use_of) {
  const auto datatype = use_of.datatype;
  const auto use = use_of.use;
  const auto bytes = use_of.bytes;
  if (datatype >= stats_.size()) return;
  DatatypeStat& s = stats_[datatype];
  used_[datatype] = true;
  switch (use) {
    case archive::DatatypeUse::Send:
      ++s.sends, s.send_bytes += bytes;
      break;
    case archive::DatatypeUse::Receive:
      ++s.receives, s.receive_bytes += bytes;
      break;
    case archive::DatatypeUse::CollectiveSend:
      ++s.collectives, s.collective_bytes += bytes;
      last_collective_send_ = {loc, t, datatype};
      break;
    case archive::DatatypeUse::CollectiveReceive:
      // The receive of a call whose send buffer had the same type: one call, not two.
      if (last_collective_send_ != std::tuple{loc, t, datatype}) ++s.collectives;
      s.collective_bytes += bytes;
      break;
    case archive::DatatypeUse::FileRead:
    case archive::DatatypeUse::FileWrite:
      ++s.file_operations, s.file_bytes += bytes;
      break;
  }
}

void DatatypeAnalysis::finish() {
  out_.has_datatypes = !defs_.datatypes.empty();
  for (std::uint32_t i = 0; i < stats_.size(); ++i) {
    if (!used_[i]) continue;
    DatatypeStat s = stats_[i];
    const archive::DatatypeDef& d = defs_.datatypes[i];
    s.id = i;
    s.name = datatype_name(defs_, i);
    s.combiner = d.combiner;
    s.size = d.size;
    s.extent = d.extent;
    s.true_extent = d.true_extent;
    s.contiguous = trace::datatype_contiguous(d.size, d.extent, d.true_extent);
    out_.datatypes.push_back(std::move(s));
  }
  std::stable_sort(
      out_.datatypes.begin(), out_.datatypes.end(),
      [](const DatatypeStat& a, const DatatypeStat& b) { return a.bytes() > b.bytes(); });
}

}  // namespace perusetrace::report
