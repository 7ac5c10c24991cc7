#include "journal_reader.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "journal_format.hpp"
#include "tick_clock.hpp"

namespace perusetrace::recover {

namespace {

// "rank-3.defs" -> 3; "rank-3.thread-1.records" -> (3, 1).
bool parse_name(const std::string& name, int& rank, int& thread) {
  thread = -1;
  if (std::sscanf(name.c_str(), "rank-%d.thread-%d.records", &rank, &thread) == 2)
    return name ==
           "rank-" + std::to_string(rank) + ".thread-" + std::to_string(thread) + ".records";
  thread = -1;
  if (std::sscanf(name.c_str(), "rank-%d.defs", &rank) == 1)
    return name == "rank-" + std::to_string(rank) + ".defs";
  return false;
}

std::vector<int> read_ranks(std::istringstream& in) {
  std::size_t n = 0;
  in >> n;
  std::vector<int> ranks;
  for (std::size_t i = 0; i < n && in; ++i) {
    int r = 0;
    in >> r;
    ranks.push_back(r);
  }
  return ranks;
}

std::string rest_of(std::istringstream& in) {
  std::string rest;
  std::getline(in >> std::ws, rest);
  return rest;
}

void read_definitions(const std::string& path, RankJournal& j) {
  std::ifstream file(path);
  std::string line;
  TickPoint first, second, last;
  bool have_ticks = false, have_last = false;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    bool ok = true;
    if (key == "perusetrace-journal") {
      std::string word;
      in >> j.version >> word >> j.regions;
    } else if (key == "rank") {
      std::string of;
      in >> j.rank >> of >> j.size;
    } else if (key == "host") {
      j.process.host = rest_of(in);
    } else if (key == "clock") {
      in >> j.process.start_time >> j.process.realtime_start;
    } else if (key == "ticks") {
      in >> first.ticks >> first.ns >> second.ticks >> second.ns;
      have_ticks = ok = !in.fail();
    } else if (key == "tickpoint") {
      TickPoint p;
      in >> p.ticks >> p.ns;
      if ((ok = !in.fail())) last = p, have_last = true;
    } else if (key == "settings") {
      j.settings = rest_of(in);
    } else if (key == "comm") {
      trace::CommInfo c;
      int inter = 0;
      std::string parent;
      in >> c.local_id >> parent >> inter;
      if (parent != "-") {
        char* end = nullptr;
        const unsigned long id = std::strtoul(parent.c_str(), &end, 10);
        ok = end != parent.c_str() && *end == '\0' && id < trace::kNoParent;
        c.parent = ok ? static_cast<std::uint32_t>(id) : trace::kNoParent;
      }
      c.inter = inter != 0;
      c.world_ranks = read_ranks(in);
      c.remote_world_ranks = read_ranks(in);
      c.name = rest_of(in);
      ok = ok && (!in.fail() || in.eof());
      if (ok) j.process.comms.push_back(std::move(c));
    } else if (key == "file") {
      trace::FileInfo f;
      in >> f.local_id >> f.comm;
      f.name = rest_of(in);
      j.process.files.push_back(std::move(f));
    } else if (key == "offset") {
      std::uint64_t local = 0;
      std::int64_t offset = 0;
      double error = 0;
      in >> local >> offset >> error;
      if (!in.fail()) {
        j.process.clock_offsets.emplace_back(local, offset);
        j.process.clock_offset_errors.push_back(error);
      }
    } else if (key == "end") {
      in >> j.process.end_time;
      j.ended = true;
    } else if (key == "stopped") {
      j.stopped = rest_of(in);
    } else {
      ok = false;
    }
    if (!ok) j.problems.push_back(line);
  }
  // The widest span known: to the last point the rank wrote, else the two read at init.
  if (have_ticks) j.scale = tick_scale(first, have_last ? last : second);
}

}  // namespace

bool read_journal(const std::string& trace_dir, std::vector<RankJournal>& ranks,
                  std::string& error) {
  const std::string dir = journal::directory(trace_dir);
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    error = "no journal in " + trace_dir + " (" + dir +
            " is missing): there is nothing to recover. A run that reached MPI_Finalize "
            "leaves a complete archive, traces.otf2, instead.";
    return false;
  }
  std::map<int, RankJournal> by_rank;
  std::map<int, std::map<int, std::string>> records;
  while (dirent* e = ::readdir(d)) {
    int rank = 0, thread = 0;
    const std::string name = e->d_name;
    if (!parse_name(name, rank, thread) || rank < 0 || rank > 1 << 24 || thread > 1 << 16) continue;
    if (thread < 0) {
      RankJournal& j = by_rank[rank];
      read_definitions(dir + "/" + name, j);
      if (j.rank != rank) j.problems.push_back("the file says rank " + std::to_string(j.rank));
      j.rank = rank;
    } else {
      records[rank][thread] = dir + "/" + name;
    }
  }
  ::closedir(d);
  if (by_rank.empty()) {
    error = dir +
            " holds no rank's definitions (rank-N.defs): it is not a perusetrace journal, "
            "or it was emptied.";
    return false;
  }
  const int size = by_rank.begin()->second.size;
  if (size <= 0 || size > 1 << 24) {
    error = journal::definitions_path(trace_dir, by_rank.begin()->first) +
            " does not say how many ranks the run had: the journal is damaged.";
    return false;
  }
  ranks.assign(static_cast<std::size_t>(size), RankJournal{});
  for (auto& [rank, j] : by_rank) {
    if (rank >= size) {
      error = "the journal holds rank " + std::to_string(rank) + " of a run of " +
              std::to_string(size) + " ranks: it mixes several runs or is damaged.";
      return false;
    }
    ranks[rank] = std::move(j);
  }
  for (int r = 0; r < size; ++r) {
    RankJournal& j = ranks[r];
    j.rank = r;
    j.size = size;
    const auto& threads = records[r];
    if (!threads.empty())
      j.record_files.resize(static_cast<std::size_t>(threads.rbegin()->first) + 1);
    for (const auto& [t, path] : threads) j.record_files[t] = path;
  }
  return true;
}

}  // namespace perusetrace::recover
