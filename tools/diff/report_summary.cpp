#include "tools/diff/report_summary.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "analysis/archive_analysis.hpp"
#include "analysis/report_json.hpp"
#include "analysis/wait_state_data.hpp"
#include "reader/archive_reader.hpp"

namespace perusetrace::diff {

namespace {

using archive::ArchiveError;

// A regular file that starts with '{' is a report's JSON; anything else is taken for an archive
// and left to the archive reader's own errors.
bool is_json_file(const std::string& path, std::string& text) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ArchiveError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  char first = 0;
  while (in.get(first) && (first == ' ' || first == '\n' || first == '\t' || first == '\r')) {
  }
  if (first != '{') return false;
  std::ostringstream all;
  all << first << in.rdbuf();
  text = all.str();
  return true;
}

PatternTotals pattern(const JsonValue& p) {
  return {p["available"].boolean(), p["count"].count(), p["total_ns"].number()};
}

}  // namespace

ReportSummary summarize(const JsonValue& r, const std::string& source) {
  if (!r.is_object() || !r["ranks"].is_array() || !r["queue_measures"].is_object())
    throw ArchiveError(
        fmt::format("{} is JSON but not a perusetrace report: give a trace directory, or the file "
                    "`perusetrace report ARCHIVE --json FILE` wrote",
                    source));
  if (r["schema_version"].count() != 1)
    throw ArchiveError(fmt::format(
        "{} is a report of schema version {}, which this perusetrace does not read (it reads "
        "version 1): write the report again with this perusetrace, or compare the archives",
        source, r["schema_version"].number()));
  ReportSummary s;
  s.source = source;
  s.archive = r["archive"].string();
  s.trace_ns = r["trace_ns"].count();
  s.events = r["events"].count();
  s.ranks = r["ranks"].items().size();
  for (const JsonValue& rank : r["ranks"].items()) {
    s.mpi_ns += rank["mpi_ns"].count();
    for (const JsonValue& f : rank["functions"].items()) {
      FunctionTime& t = s.functions[f["name"].string()];
      t.ns += f["ns"].count();
      t.calls += f["calls"].count();
    }
  }
  const JsonValue& p = r["queue_measures"];
  s.posted_queue = pattern(p["posted_queue"]);
  s.posted_queue_in_collectives = pattern(p["posted_queue_in_collectives"]);
  s.complete_before_wait = pattern(p["complete_before_wait"]);
  const JsonValue& w = r["wait_states"]["patterns"];
  for (const report::WaitPatternInfo& info : report::kWaitPatternInfo)
    if (w.has(info.key)) {
      const JsonValue& value = w[info.key];
      s.waits[info.key] = {true, value["count"].count(), value["total_ns"].number()};
      s.wait_order.push_back(info.key);
      s.wait_titles[info.key] = value["title"].string();
    }
  const JsonValue& uq = r["unexpected_queue"];
  // The report keeps the queue times as a distribution: its mean times its count is their sum.
  s.unexpected_queue = {
      uq["available"].boolean(), uq["messages"].count(),
      uq["queue_ns"]["mean"].number() * static_cast<double>(uq["queue_ns"]["count"].count())};
  const JsonValue& m = r["messages"];
  s.messages_available = m["available"].boolean();
  for (const JsonValue& c : m["size_classes"].items()) {
    const double ns = c["transfer_ns"].number();
    s.size_classes.push_back({c["label"].string(), c["messages"].count(), c["bytes"].count(),
                              c["bandwidth_bytes_per_s"]["count"].count(),
                              ns > 0 ? c["transfer_bytes"].number() * 1e9 / ns : 0.0});
  }
  for (const JsonValue& g : m["groups"].items()) {
    const int op = g["operation"].string() == "receive" ? 1 : 0;
    const int protocol = g["protocol"].string() == "rendezvous" ? 1 : 0;
    s.requests[op][protocol] = g["count"].count();
  }
  if (r.has("inside_mpi")) {
    const JsonValue& in = r["inside_mpi"];
    s.inside_available = true;
    for (const char* where : {"intra_host", "inter_host"})
      for (const JsonValue& c : in[where]["size_classes"].items()) {
        s.handshakes.count += c["handshakes"].count();
        s.handshakes.ns += c["handshake_ns"].number();
      }
    s.copies = {in["unexpected_copies"]["messages"].count(),
                in["unexpected_copies"]["copy_ns"].number()};
    for (const JsonValue& d : in["posted_searches"].items())
      if (d["from_depth"].count() >= 64) {
        s.deep_searches.count += d["searches"].count();
        s.deep_searches.ns += d["ns"].number();
      }
  }
  for (const JsonValue& row : r["matrix"]["messages"].items())
    for (const JsonValue& cell : row.items()) s.p2p_messages += cell.count();
  for (const JsonValue& row : r["matrix"]["bytes"].items())
    for (const JsonValue& cell : row.items()) s.p2p_bytes += cell.count();
  return s;
}

ReportSummary load_report(const std::string& path, archive::ProgressBar& bar) {
  std::string text;
  if (is_json_file(path, text)) {
    try {
      return summarize(JsonValue::parse(text), path);
    } catch (const JsonError& e) {
      throw ArchiveError(
          fmt::format("{} is not valid JSON ({}): give a trace directory, or the "
                      "file `perusetrace report ARCHIVE --json FILE` wrote",
                      path, e.what()));
    }
  }
  // The report's own JSON, read back: an archive and a saved report go through one reading.
  const report::Report analysed = report::analyse_archive(path, "", bar);
  ReportSummary s = summarize(JsonValue::parse(report::to_json(analysed)), path);
  return s;
}

}  // namespace perusetrace::diff
