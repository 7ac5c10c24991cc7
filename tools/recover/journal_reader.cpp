#include "tools/recover/journal_reader.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <type_traits>

#include "record/journal_format.hpp"
#include "record/tick_clock.hpp"

namespace perusetrace::recover {

namespace {

// Unreadable lines a rank's report shows; a garbage file would otherwise flood the terminal.
constexpr std::size_t kShownProblems = 5;
constexpr std::size_t kShownLineLength = 120;

std::vector<int> read_ranks(std::istringstream& in) {
  std::size_t n = 0;
  in >> n;
  std::vector<int> ranks;
  for (std::size_t i = 0; i < n && in; ++i) {
    int r = 0;
    if (in >> r) ranks.push_back(r);
  }
  return ranks;
}

std::string rest_of(std::istringstream& in) {
  std::string rest;
  std::getline(in >> std::ws, rest);
  return rest;
}

// A damaged line as it can be shown on a terminal: control bytes as '?', cut short.
std::string printable(const std::string& line) {
  std::string out = line.substr(0, kShownLineLength);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  if (line.size() > kShownLineLength) out += "...";
  return out;
}

void read_definitions(const std::string& path, RankJournal& j) {
  std::ifstream file(path);
  std::string line;
  TickPoint first, second, last;
  TickPoint middle;  // the latest midpoint
  bool have_ticks = false, have_last = false, have_middle = false, first_line = true;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    bool ok = true;
    if (key == "perusetrace-journal") {
      std::string word;
      in >> j.version >> word >> j.regions;
      // Only the first line is the header: a second one is damage, not another format.
      ok = first_line && !in.fail() && word == "regions";
      j.has_header = ok;
    } else if (key == "rank") {
      std::string of;
      in >> j.rank >> of >> j.size;
      ok = !in.fail() && of == "of";
      if (!ok) j.size = 0;
    } else if (key == "host") {
      j.process.host = rest_of(in);
    } else if (key == "clock") {
      in >> j.process.start_time >> j.process.realtime_start;
      ok = !in.fail();
    } else if (key == "ticks") {
      in >> first.ticks >> first.ns >> second.ticks >> second.ns;
      have_ticks = ok = !in.fail();
    } else if (key == "tickpoint") {
      TickPoint p;
      in >> p.ticks >> p.ns;
      if ((ok = !in.fail())) last = p, have_last = true;
    } else if (key == "midpoint") {
      TickPoint p;
      in >> p.ticks >> p.ns;
      if ((ok = !in.fail()) && p.ns > middle.ns) middle = p, have_middle = true;
    } else if (key == "settings") {
      j.settings = rest_of(in);
    } else if (key == "comm") {
      trace::CommInfo c;
      int inter = 0;
      std::string parent;
      in >> c.local_id >> parent >> inter;
      ok = !in.fail() && c.local_id < journal::kMaxLocalIds;
      if (parent != "-") {
        char* end = nullptr;
        const unsigned long id = std::strtoul(parent.c_str(), &end, 10);
        ok = ok && end != parent.c_str() && *end == '\0' && id < journal::kMaxLocalIds;
        c.parent = ok ? static_cast<std::uint32_t>(id) : trace::kNoParent;
      }
      c.inter = inter != 0;
      c.world_ranks = read_ranks(in);
      c.remote_world_ranks = read_ranks(in);
      c.name = rest_of(in);
      ok = ok && (!in.fail() || in.eof());
      if (ok) j.process.comms.push_back(std::move(c));
    } else if (key == "commname") {
      std::uint32_t id = 0;
      in >> id;
      const std::string name = rest_of(in);
      // Named after it was noted: the communicator's line comes first.
      auto it = std::find_if(j.process.comms.begin(), j.process.comms.end(),
                             [&](const trace::CommInfo& c) { return c.local_id == id; });
      ok = !in.fail() && it != j.process.comms.end();
      if (ok) it->name = name, it->named = true;
    } else if (key == "otherjob") {
      std::uint32_t id = 0;
      int relation = 0;
      std::string archive;
      in >> id >> relation >> archive;
      std::string job = rest_of(in);
      trace::CommInfo* c = j.process.comms.empty() ? nullptr : &j.process.comms.back();
      ok = !in.fail() && c != nullptr && c->local_id == id &&
           relation > static_cast<int>(trace::JobRelation::None) &&
           relation <= static_cast<int>(trace::JobRelation::Connected) && !job.empty();
      if (ok) {
        c->job_relation = static_cast<trace::JobRelation>(relation);
        c->job_archive = archive == "-" ? "" : archive;
        c->job = job == "-" ? "" : job;
      }
    } else if (key == "file") {
      trace::FileInfo f;
      in >> f.local_id >> f.comm;
      f.name = rest_of(in);
      ok = !in.fail() && f.local_id < journal::kMaxLocalIds;
      if (ok) j.process.files.push_back(std::move(f));
    } else if (key == "win") {
      trace::WindowInfo w;
      in >> w.local_id >> w.comm;
      w.name = rest_of(in);
      ok = !in.fail() && w.local_id < journal::kMaxLocalIds &&
           w.local_id == j.process.windows.size();  // they are noted in creation order
      if (ok) j.process.windows.push_back(std::move(w));
    } else if (key == "winname") {
      std::uint32_t id = 0;
      in >> id;
      const std::string name = rest_of(in);
      ok = !in.fail() && id < j.process.windows.size() && !name.empty();
      if (ok) j.process.windows[id].name = name;
    } else if (key == "rmagroup") {
      std::uint32_t id = 0;
      in >> id;
      std::vector<int> members = read_ranks(in);
      ok = !in.fail() && id == j.process.rma_groups.size();
      if (ok) j.process.rma_groups.push_back(std::move(members));
    } else if (key == "filename") {
      std::uint32_t id = 0;
      in >> id;
      const std::string name = rest_of(in);
      ok = !in.fail() && id < journal::kMaxLocalIds;
      if (ok) {
        if (j.process.file_names.size() <= id) j.process.file_names.resize(id + 1);
        j.process.file_names[id] = name;
      }
    } else if (key == "datatype") {
      trace::DatatypeInfo d;
      in >> d.local_id >> d.combiner >> d.size >> d.lb >> d.extent >> d.true_lb >> d.true_extent;
      ok = !in.fail() && d.local_id != trace::kNoDatatype && d.local_id < journal::kMaxLocalIds;
      auto numbers = [&](auto& out) {
        std::size_t n = 0;
        in >> n;
        for (std::size_t i = 0; i < n && i < journal::kMaxLocalIds && in; ++i) {
          typename std::decay_t<decltype(out)>::value_type v{};
          if (in >> v) out.push_back(v);
        }
        ok = ok && !in.fail() && out.size() == n;
      };
      numbers(d.integers);
      numbers(d.addresses);
      numbers(d.types);
      for (std::uint32_t t : d.types) ok = ok && t < d.local_id;  // inner ones come first
      d.name = rest_of(in);
      if (ok) j.process.datatypes.push_back(std::move(d));
    } else if (key == "metric") {
      trace::MetricInfo m;
      std::string flags;
      in >> m.local_id >> flags >> m.unit;
      const std::string rest = rest_of(in);
      const auto tab = rest.find('\t');
      m.name = rest.substr(0, tab);
      if (tab != std::string::npos) m.description = rest.substr(tab + 1);
      if (m.unit == "-") m.unit.clear();
      const bool sized = flags.size() == 2 || flags.size() == 3;  // 3: an annotation's
      m.delta = sized && flags[0] == '1';
      m.real = sized && flags[1] == '1';
      m.annotation = flags.size() == 3 && flags[2] == '1';
      ok = !in.fail() && sized && !m.name.empty() && m.local_id >= trace::kFirstPvarMetric &&
           m.local_id < journal::kMaxLocalIds;
      if (ok) j.process.metrics.push_back(std::move(m));
    } else if (key == "annotation") {
      std::uint32_t id = 0;
      in >> id;
      const std::string pair = rest_of(in);
      ok = !in.fail() && id < journal::kMaxLocalIds && !pair.empty();
      if (ok) {
        if (j.process.annotations.size() <= id) j.process.annotations.resize(id + 1);
        j.process.annotations[id] = pair;
      }
    } else if (key == "processattribute") {
      const std::string name = rest_of(in);
      if ((ok = !name.empty())) j.process.process_attributes.push_back(name);
    } else if (key == "cvar") {
      j.process.cvars += rest_of(in) + '\n';
    } else if (key == "cvarset") {
      j.process.cvars_set += rest_of(in) + '\n';
    } else if (key == "offset") {
      trace::ClockOffset o;
      in >> o.local_time >> o.offset >> o.error;
      if ((ok = !in.fail())) {
        if (!(in >> o.exchanges)) o.exchanges = 0;  // journals before the count was written
        j.process.clock_offsets.push_back(o);
      }
    } else if (key == "clockdomain") {
      in >> j.process.clock_leader;
      ok = !in.fail() && j.process.clock_leader >= 0;
    } else if (key == "end") {
      in >> j.process.end_time;
      j.ended = ok = !in.fail();
    } else if (key == "stopped") {
      j.stopped = rest_of(in);
    } else if (key == "cut") {
      in >> j.cut_ticks;  // then the limit, which the settings line gives too
      ok = !in.fail();
    } else {
      ok = false;
    }
    first_line = false;
    if (ok) continue;
    if (j.problems.size() < kShownProblems) {
      j.problems.push_back(printable(line));
    } else {
      ++j.more_problems;
    }
  }
  // The widest span known: to the last point the rank wrote, else the two read at init.
  // A midpoint widens the span, but says nothing of when the rank stopped recording (records
  // go on after it): the time limit stays with the tickpoints.
  TickPoint widest = have_last ? last : second;
  if (have_middle && middle.ns > widest.ns) widest = middle;
  if (have_ticks) j.clock.scale = tick_scale(first, widest);
  for (const trace::ClockOffset& o : j.process.clock_offsets) j.clock.offsets.add(o);
  j.have_scale = have_ticks;
  if (have_last) j.last_clock_point = last.ns;
  j.last_clock_point = std::max(j.last_clock_point, j.process.end_time);
}

}  // namespace

bool read_journal(const std::string& trace_dir, std::vector<RankJournal>& ranks,
                  std::vector<std::string>& ignored, std::string& error) {
  const std::string dir = journal::directory(trace_dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr && errno == ENOENT) {
    error = "no journal in " + trace_dir + " (" + dir +
            " is missing): there is nothing to recover. A run that reached MPI_Finalize "
            "leaves a complete archive, traces.otf2, instead.";
    return false;
  }
  if (d == nullptr) {
    error = "cannot read the journal directory " + dir + ": " + std::strerror(errno) + ".";
    return false;
  }
  std::map<int, RankJournal> by_rank;
  std::map<int, std::map<int, std::string>> records, buffers;
  while (dirent* e = ::readdir(d)) {
    int rank = 0, thread = 0;
    bool buffer = false;
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == "recovered") continue;
    // Samples name code addresses of the process that took them: without it they cannot be
    // symbolised, so a recovered archive goes without (docs/sampling.md).
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".samples") == 0) continue;
    if (!journal::parse_name(name, rank, thread, buffer) || rank < 0 || rank >= 1 << 24 ||
        thread >= static_cast<int>(journal::kMaxThreads)) {
      ignored.push_back(dir + "/" + name);
      continue;
    }
    if (thread < 0) {
      RankJournal& j = by_rank[rank];
      j.definitions_file = dir + "/" + name;
      read_definitions(j.definitions_file, j);
      if (j.rank != rank && j.size > 0)
        j.problems.insert(j.problems.begin(), "the file says rank " + std::to_string(j.rank));
      j.rank = rank;
    } else {
      (buffer ? buffers : records)[rank][thread] = dir + "/" + name;
    }
  }
  // A thread's buffer file without its records file (damage, or a copy that missed it) still
  // makes the thread a location.
  for (const auto& [rank, threads] : buffers)
    for (const auto& [t, path] : threads) records[rank].emplace(t, std::string());
  ::closedir(d);
  if (by_rank.empty()) {
    error = dir +
            " holds no rank's definitions (rank-N.defs): it is not a perusetrace journal, "
            "or it was emptied.";
    return false;
  }
  // The run's size, from every definitions file that states it: they must agree.
  int size = 0, size_rank = -1;
  for (const auto& [rank, j] : by_rank) {
    if (j.size <= 0 || j.size > 1 << 24) continue;
    if (size == 0) {
      size = j.size, size_rank = rank;
    } else if (j.size != size) {
      error = journal::definitions_path(trace_dir, rank) + " says the run had " +
              std::to_string(j.size) + " ranks, " +
              journal::definitions_path(trace_dir, size_rank) + " says " + std::to_string(size) +
              ": the journal mixes several runs, or one of these files is damaged (its line "
              "'rank R of SIZE'). Keep the files of one run and run recover again.";
      return false;
    }
  }
  if (size == 0) {
    error = "no definitions file in " + dir +
            " says how many ranks the run had (a line 'rank R of SIZE'): the journal is "
            "damaged and cannot be recovered.";
    return false;
  }
  // Every rank writes its definitions file at MPI_Init: ranks without any file are lost. A few
  // are a partial journal; nearly all of them is a damaged size, and recover would write an
  // empty location for each.
  std::size_t present = by_rank.size();
  for (const auto& [rank, threads] : records) present += by_rank.count(rank) ? 0 : 1;
  if (static_cast<std::size_t>(size) > 64 * present + 1024) {
    error = journal::definitions_path(trace_dir, size_rank) + " says the run had " +
            std::to_string(size) + " ranks, but only " + std::to_string(present) +
            " left files in " + dir +
            ". If the ranks wrote to directories of their own (node-local disks), gather their "
            "journal files into one directory first; otherwise that line ('rank R of SIZE') "
            "is damaged.";
    return false;
  }
  for (const auto& [rank, j] : by_rank) {
    if (rank >= size) {
      error = "the journal holds " + journal::definitions_path(trace_dir, rank) + " of a run of " +
              std::to_string(size) +
              " ranks: it mixes several runs or is damaged. Keep the files of one run and run "
              "recover again.";
      return false;
    }
  }
  for (const auto& [rank, threads] : records) {
    if (rank >= size) {
      error = "the journal holds " + threads.begin()->second + " of a run of " +
              std::to_string(size) +
              " ranks: it mixes several runs or is damaged. Keep the files of one run and run "
              "recover again.";
      return false;
    }
  }
  ranks.assign(static_cast<std::size_t>(size), RankJournal{});
  for (auto& [rank, j] : by_rank) ranks[static_cast<std::size_t>(rank)] = std::move(j);
  for (int r = 0; r < size; ++r) {
    RankJournal& j = ranks[static_cast<std::size_t>(r)];
    j.rank = r;
    j.size = size;
    const auto& threads = records[r];
    if (!threads.empty()) {
      j.record_files.resize(static_cast<std::size_t>(threads.rbegin()->first) + 1);
      j.buffer_files.resize(j.record_files.size());
    }
    for (const auto& [t, path] : threads) j.record_files[static_cast<std::size_t>(t)] = path;
    for (const auto& [t, path] : buffers[r]) j.buffer_files[static_cast<std::size_t>(t)] = path;
  }
  return true;
}

}  // namespace perusetrace::recover
