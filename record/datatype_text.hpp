// How an MPI datatype's definition is written into an archive: OTF2 has no datatype definition,
// so each of the run's datatypes is a global String definition of this grammar, one line,
//   MPI_Datatype ID combiner=C size=S extent=E lb=L true_lb=TL true_extent=TE
//       integers=I,I,... addresses=A,A,... types=ID,ID,... name=NAME
// ID numbers the datatypes of the archive from 0 (the String's own id, too); `types` are the
// inner datatypes by ID, each defined before; NAME (to the end of the line, may hold spaces) is a
// named type's MPI name or what MPI_Type_set_name gave a derived one, empty otherwise. Messages,
// collectives and I/O operations point at these strings with the attributes mpi_datatype,
// mpi_send_datatype and mpi_recv_datatype (archive_schema.hpp). One source for the writer and
// for the tools' reader; no OTF2 here.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace perusetrace::trace {

inline constexpr const char* kDatatypePrefix = "MPI_Datatype ";

// A datatype as the archive holds it: inner types are archive ids.
struct DatatypeText {
  std::uint64_t id = 0;
  std::string combiner, name;
  std::int64_t size = 0, extent = 0, lb = 0, true_lb = 0, true_extent = 0;
  std::vector<std::int64_t> integers, addresses;
  std::vector<std::uint64_t> types;
};

namespace datatype_text_detail {
template <typename T>
std::string joined(const std::vector<T>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}
// The comma-separated integers of `text`; false on anything else.
template <typename T>
bool split(const std::string& text, std::vector<T>& out) {
  out.clear();
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    char* stop = nullptr;
    const long long v = std::strtoll(item.c_str(), &stop, 10);
    if (item.empty() || *stop != '\0') return false;
    out.push_back(static_cast<T>(v));
    at = end + 1;
  }
  return true;
}
}  // namespace datatype_text_detail

inline std::string datatype_text(const DatatypeText& d) {
  using datatype_text_detail::joined;
  return kDatatypePrefix + std::to_string(d.id) + " combiner=" + d.combiner +
         " size=" + std::to_string(d.size) + " extent=" + std::to_string(d.extent) +
         " lb=" + std::to_string(d.lb) + " true_lb=" + std::to_string(d.true_lb) +
         " true_extent=" + std::to_string(d.true_extent) + " integers=" + joined(d.integers) +
         " addresses=" + joined(d.addresses) + " types=" + joined(d.types) + " name=" + d.name;
}

// Reads a string of the grammar above; false if `text` is not one (another String).
inline bool parse_datatype_text(const std::string& text, DatatypeText& d) {
  using datatype_text_detail::split;
  const std::string prefix = kDatatypePrefix;
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  const std::size_t name_at = text.find(" name=");
  if (name_at == std::string::npos) return false;
  d = DatatypeText{};
  d.name = text.substr(name_at + 6);
  std::vector<std::string> words;
  for (std::size_t at = prefix.size(); at < name_at;) {
    const std::size_t end = std::min(text.find(' ', at), name_at);
    words.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (words.size() != 10) return false;
  std::vector<std::uint64_t> id;
  if (!split(words[0], id) || id.size() != 1) return false;
  d.id = id[0];
  const char* keys[] = {"combiner",    "size",     "extent",    "lb",   "true_lb",
                        "true_extent", "integers", "addresses", "types"};
  std::string values[9];
  for (int k = 0; k < 9; ++k) {
    const std::string key = std::string(keys[k]) + "=";
    if (words[k + 1].compare(0, key.size(), key) != 0) return false;
    values[k] = words[k + 1].substr(key.size());
  }
  d.combiner = values[0];
  std::int64_t* numbers[] = {&d.size, &d.extent, &d.lb, &d.true_lb, &d.true_extent};
  for (int k = 0; k < 5; ++k) {
    std::vector<std::int64_t> v;
    if (!split(values[k + 1], v) || v.size() != 1) return false;
    *numbers[k] = v[0];
  }
  return !d.combiner.empty() && split(values[6], d.integers) && split(values[7], d.addresses) &&
         split(values[8], d.types);
}

// Whether data of this type lies in one block with nothing between consecutive elements, so
// the MPI moves it without packing: as many bytes as its extent and its true extent.
inline bool datatype_contiguous(std::int64_t size, std::int64_t extent, std::int64_t true_extent) {
  return size == extent && size == true_extent;
}

}  // namespace perusetrace::trace
