#include "analysis/inside_mpi_json.hpp"

#include <fmt/core.h>

#include "analysis/advice.hpp"
#include "analysis/json_text.hpp"

namespace perusetrace::report {

namespace {

using archive::json_array;
const auto& quote = archive::json_string;

std::string paths(const std::map<std::string, PathCost>& m) {
  return json_array(m, [](const auto& e) {
    return fmt::format(R"({{"path":{},"count":{},"bytes":{},"ns":{}}})", quote(e.first),
                       e.second.count, e.second.bytes, e.second.ns);
  });
}

std::string protocol(const ProtocolStat& p) {
  std::string classes = "[";
  for (std::size_t i = 0; i < p.classes.size(); ++i) {
    const ProtocolClass& c = p.classes[i];
    if (i) classes += ',';
    classes += fmt::format(
        R"({{"from_bytes":{},"label":{},"eager":{},"eager_bytes":{},"rendezvous":{},"rendezvous_bytes":{},"handshakes":{},"handshake_ns":{}}})",
        kSizeClassFrom[i], quote(size_class_label(i)), c.eager, c.eager_bytes, c.rendezvous,
        c.rendezvous_bytes, c.handshakes, c.handshake_ns);
  }
  return fmt::format(
      R"({{"parameter":{},"limit":{},"eager_max":{},"rendezvous_min":{},"near":{},"near_max_bytes":{},"near_handshake_ns":{},"size_classes":{}]}})",
      quote(p.parameter), p.limit, p.eager_max, p.rendezvous_min, p.near, p.near_max_bytes,
      p.near_handshake_ns, classes);
}

}  // namespace

std::string inside_mpi_json(const InsideMpi& in) {
  const UnexpectedCopies& u = in.unexpected;
  std::string depths = "[";
  for (std::size_t i = 0; i < in.searches.posted.size(); ++i) {
    const SearchDepth& d = in.searches.posted[i];
    if (i) depths += ',';
    depths += fmt::format(R"({{"from_depth":{},"searches":{},"ns":{},"max_ns":{}}})", kDepthFrom[i],
                          d.searches, d.ns, d.max_ns);
  }
  return fmt::format(
      R"({{"transfers":{},"intra_host":{},"inter_host":{},"unexpected_copies":{{"messages":{},"bytes":{},"copy_ns":{},"rendezvous":{},"receives":{}}},"posted_searches":{}],"search_paths":{}}})",
      in.transfers, protocol(in.intra), protocol(in.inter), u.messages, u.bytes, u.copy_ns,
      u.rendezvous, paths(u.receives), depths, paths(in.searches.paths));
}

std::string what_to_try_json(const Report& report) {
  return json_array(what_to_try(report), [](const Advice& a) {
    return fmt::format(R"({{"ns":{},"kind":{},"finding":{},"change":{}}})", a.ns, quote(a.kind),
                       quote(a.finding), quote(a.change));
  });
}

}  // namespace perusetrace::report
