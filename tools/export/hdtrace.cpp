// HDTrace's layout, as its MPI wrapper (HDMPIwrapper), its trace-writing library and its project
// description merger wrote it, read back by PIOsim's HDTraceFormat: docs/hdtrace.md says what
// each element holds and where perusetrace had to choose.
#include "tools/export/hdtrace.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <type_traits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reader/archive_reader.hpp"
#include "tools/common/markup_text.hpp"
#include "reader/location_share.hpp"
#include "tools/common/output_file.hpp"
#include "tools/common/parallel_share.hpp"
#include "tools/common/tool_run.hpp"

namespace perusetrace::exporter {

namespace {

using archive::Definitions;

// A name as part of a file name: HDTrace's tools split PROGRAM_HOST_RANK_THREAD at '_'.
std::string file_part(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '-';
  return out.empty() ? "unknown" : out;
}

bool make_directories(const std::string& path, std::string& error) {
  for (std::size_t at = 1; at <= path.size(); ++at) {
    if (at < path.size() && path[at] != '/') continue;
    const std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
      error = fmt::format("cannot create {}: {}", prefix, std::strerror(errno));
      return false;
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    error = fmt::format("{} is not a directory", path);
    return false;
  }
  return true;
}

// One attribute list: name='value' pairs in order, as HDTrace's wrapper wrote them.
// An attribute is written once: a second value of the same name is dropped (XML allows one).
class Attributes {
 public:
  template <typename T>
  void add(const std::string& name, const T& value) {
    if (has(name)) return;
    names_.insert(name);
    if constexpr (std::is_convertible_v<T, std::string>) {
      text_ += fmt::format(" {}='{}'", name, tools::markup_escaped(value));
    } else {
      text_ += fmt::format(" {}='{}'", name, value);
    }
  }
  bool has(const std::string& name) const { return names_.count(name) != 0; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::set<std::string> names_;
};

// An MPI call being written: HDTrace writes a state when it ends, its nested states first
// inside <Nested>, then its own element with its attributes and child elements.
struct Frame {
  std::string element;  // the MPI function without MPI_ ("Send"), or "Annotation"
  std::uint64_t start = 0;
  Attributes attributes;
  std::string children;  // child elements (<For request='..'/>)
  std::string nested;    // the states nested in it, written out
};

struct Output {
  std::string path;
  std::string pending;  // written out in blocks, appended
  std::vector<Frame> stack;
  std::uint64_t last_time = 0;
  bool opened = false;
};

class HdtraceWriter : public archive::EventSink {
 public:
  HdtraceWriter(const Definitions& defs, const std::string& dir, const std::string& program)
      : defs_(defs), outputs_(defs.locations.size()), ranks_(defs.ranks.size()) {
    time_adjustment_ = defs.realtime_start_ns / 1'000'000'000u;
    for (std::size_t i = 0; i < defs.locations.size(); ++i)
      outputs_[i].path = dir + "/" + trc_name(defs, program, static_cast<std::uint32_t>(i));
    used_types_.resize(defs.locations.size());
  }

  static std::string trc_name(const Definitions& defs, const std::string& program,
                              std::uint32_t loc) {
    const archive::LocationDef& l = defs.locations[loc];
    return fmt::format("{}_{}_{}_{}.trc", program, host_of(defs, l.rank), l.rank, l.thread);
  }
  static std::string host_of(const Definitions& defs, std::uint32_t rank) {
    const std::uint32_t node = defs.ranks[rank].node;
    return file_part(node < defs.nodes.size() ? defs.nodes[node].name : "");
  }

  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override {
    const archive::RegionDef& r = defs_.regions[region];
    Output& o = at(loc, t);
    Frame f;
    f.start = t;
    if (r.kind == archive::RegionKind::MpiFunction) {
      f.element = r.name.substr(4);
      // HDTrace wrote the end of a split collective as a Wait for the request its begin made.
      if (f.element.rfind("File_", 0) == 0 && f.element.size() > 4 &&
          f.element.compare(f.element.size() - 4, 4, "_end") == 0) {
        f.attributes.add("function", f.element);
        f.element = "Wait";
      }
    } else if (r.kind == archive::RegionKind::Annotation) {
      f.element = "Annotation";
      f.attributes.add("attribute", r.attribute);
      f.attributes.add("value", r.value);
    } else {
      f.element.clear();  // not a state of HDTrace's: kept for the nesting, not written
    }
    o.stack.push_back(std::move(f));
  }

  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) override {
    Output& o = at(loc, t);
    if (o.stack.empty()) return;  // a Leave without its Enter: nothing to close
    end(o, t);
  }

  void point_to_point(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& e) override {
    archive::split_point_to_point(*this, loc, t, e);
  }
  void send(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p) {
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    if (!p2p.blocking && f->attributes.has("request")) {
      // One call starting several requests (MPI_Startall): the further ones as children.
      f->children +=
          fmt::format("<Request request='{}' size='{}' toRank='{}' toTag='{}' comm='{}'/>",
                      rid(loc, 0, p2p.request), p2p.bytes, world_rank(p2p.comm, p2p.peer, loc),
                      p2p.tag, p2p.comm);
      type_in_for_ = &f->children;
      return;
    }
    f->attributes.add("size", p2p.bytes);
    f->attributes.add("toRank", world_rank(p2p.comm, p2p.peer, loc));
    f->attributes.add("toTag", p2p.tag);
    f->attributes.add("comm", p2p.comm);
    if (!p2p.blocking) f->attributes.add("request", rid(loc, 0, p2p.request));
  }
  void recv(std::uint32_t loc, std::uint64_t t, const archive::PointToPoint& p2p) {
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    if (p2p.blocking) {
      // MPI_Sendrecv sent first: the receive's size is recvSize, as HDTrace's collectives say.
      f->attributes.add(f->attributes.has("size") ? "recvSize" : "size", p2p.bytes);
      f->attributes.add("fromRank", world_rank(p2p.comm, p2p.peer, loc));
      f->attributes.add("fromTag", p2p.tag);
      f->attributes.add("comm", p2p.comm);
      return;
    }
    // A nonblocking receive completes in a Wait or Test: its source, tag and size are known
    // there, next to the request HDTrace's <For> names.
    f->children += fmt::format("<For request='{}' size='{}' fromRank='{}' fromTag='{}' comm='{}'/>",
                               rid(loc, 0, p2p.request), p2p.bytes,
                               world_rank(p2p.comm, p2p.peer, loc), p2p.tag, p2p.comm);
    type_in_for_ = &f->children;
  }
  void recv_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    if (f->attributes.has("request"))
      f->children += fmt::format("<Request request='{}'/>", rid(loc, 0, request));
    else
      f->attributes.add("request", rid(loc, 0, request));
  }
  void send_complete(std::uint32_t loc, std::uint64_t t, std::uint64_t request) {
    if (Frame* f = call(loc, t))
      f->children += fmt::format("<For request='{}'/>", rid(loc, 0, request));
  }
  void collective_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override {
    if (Frame* f = call(loc, t)) f->attributes.add("request", rid(loc, 0, request));
  }
  void collective(std::uint32_t loc, std::uint64_t t, const archive::Collective& c) override {
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    if (c.request != 0) {  // a nonblocking one completing in a Wait or Test
      f->children += fmt::format("<For request='{}' size='{}' recvSize='{}' comm='{}'/>",
                                 rid(loc, 0, c.request), c.sent, c.received, c.comm);
      type_in_for_ = &f->children;
      return;
    }
    f->attributes.add("size", c.sent);
    f->attributes.add("recvSize", c.received);
    f->attributes.add("comm", c.comm);
    if (c.root != archive::kNoRoot) f->attributes.add("rootRank", world_rank(c.comm, c.root, loc));
  }
  void io_handle_created(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                         std::uint64_t) override {
    Frame* f = call(loc, t);
    if (f == nullptr || handle >= defs_.io_handles.size()) return;
    const archive::IoHandleDef& h = defs_.io_handles[handle];
    f->attributes.add("file", h.file);
    f->attributes.add("name", h.name);
    if (h.comm != archive::kNoComm) f->attributes.add("comm", h.comm);
  }
  void io_handle_destroyed(std::uint32_t loc, std::uint64_t t, std::uint32_t handle) override {
    Frame* f = call(loc, t);
    if (f != nullptr && handle < defs_.io_handles.size())
      f->attributes.add("file", defs_.io_handles[handle].file);
  }
  void io_delete(std::uint32_t loc, std::uint64_t t, std::uint32_t file) override {
    if (Frame* f = call(loc, t)) f->attributes.add("file", file);
  }
  void io_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t handle,
                const archive::IoBegin& op) override {
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    if (handle < defs_.io_handles.size()) f->attributes.add("file", defs_.io_handles[handle].file);
    // A nonblocking or split-collective operation completes in another call: HDTrace names it
    // with a request there, in a <For>.
    const bool nonblocking = (op.flags & archive::kIoNonBlocking) != 0;
    if (nonblocking) f->attributes.add("request", rid(loc, 1, op.matching));
    nonblocking_io_[{defs_.locations[loc].rank, op.matching}] = nonblocking;
  }
  void io_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t,
                   const archive::IoComplete& done) override {
    const auto bytes = done.bytes;
    const auto matching = done.matching;
    Frame* f = call(loc, t);
    if (f == nullptr) return;
    const auto it = nonblocking_io_.find({defs_.locations[loc].rank, matching});
    const bool elsewhere = it != nonblocking_io_.end() && it->second;
    if (it != nonblocking_io_.end()) nonblocking_io_.erase(it);
    if (elsewhere) {
      f->children += fmt::format("<For request='{}' size='{}'/>", rid(loc, 1, matching), bytes);
      type_in_for_ = &f->children;
    } else {
      f->attributes.add("size", bytes);
    }
  }
  void datatype_use(std::uint32_t loc, std::uint64_t t,
                    const archive::DatatypeBytes& use_of) override {
    const auto datatype = use_of.datatype;
    const auto use = use_of.use;
    const auto bytes = use_of.bytes;
    Frame* f = call(loc, t, true);
    if (f == nullptr || datatype >= defs_.datatypes.size()) return;
    used_types_[loc].insert(datatype);
    const std::int64_t size = defs_.datatypes[datatype].size;
    const bool receive = use == archive::DatatypeUse::CollectiveReceive;
    const std::string count = size > 0 && bytes % static_cast<std::uint64_t>(size) == 0
                                  ? std::to_string(bytes / static_cast<std::uint64_t>(size))
                                  : std::string();
    if (type_in_for_ == &f->children && f->children.size() >= 2) {
      // The completion of a nonblocking operation: its types go into its <For>.
      f->children.insert(f->children.size() - 2,
                         fmt::format(" {}='{}'", receive ? "recvType" : "type", datatype));
      return;
    }
    // A second type in one call (MPI_Sendrecv's receive, a collective's receive buffer).
    // (A further request's type, in its <Request>, went above with type_in_for_.)
    const bool second =
        receive || (use == archive::DatatypeUse::Receive && f->attributes.has("type"));
    f->attributes.add(second ? "recvType" : "type", datatype);
    if (!count.empty()) f->attributes.add(second ? "recvCount" : "count", count);
  }

  // A parallel export: this process writes the files of `locations` alone.
  void share(const std::vector<std::uint32_t>& locations) {
    written_here_.assign(outputs_.size(), false);
    for (const std::uint32_t loc : locations) written_here_[loc] = true;
  }
  // The files this process writes.
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (std::uint32_t loc = 0; loc < outputs_.size(); ++loc)
      if (written_here_.empty() || written_here_[loc]) out.push_back(outputs_[loc].path);
    return out;
  }

  // Ends what stays open (a run cut short), writes every file out and returns the datatypes
  // each location used.
  const std::vector<std::set<std::uint32_t>>& finish(std::string& error) {
    for (std::uint32_t loc = 0; loc < outputs_.size(); ++loc) {
      if (!written_here_.empty() && !written_here_[loc]) continue;
      Output& o = outputs_[loc];
      while (!o.stack.empty()) end(o, o.last_time);
      o.pending += "</Program>\n";
      flush(o, error);
    }
    return used_types_;
  }

 private:
  Output& at(std::uint32_t loc, std::uint64_t t) {
    Output& o = outputs_[loc];
    o.last_time = std::max(o.last_time, t);
    type_in_for_ = nullptr;
    if (!o.opened) {
      o.opened = true;
      o.pending =
          fmt::format("<Program timeAdjustment='{}' rank='{}' thread='{}'>\n", time_adjustment_,
                      defs_.locations[loc].rank, defs_.locations[loc].thread);
    }
    return o;
  }
  // The innermost MPI call open on the location, which an event belongs to.
  // Every event but a datatype's resets where its type would go.
  Frame* call(std::uint32_t loc, std::uint64_t t, bool keep_type_target = false) {
    Output& o = outputs_[loc];
    o.last_time = std::max(o.last_time, t);
    if (!keep_type_target) type_in_for_ = nullptr;
    for (auto it = o.stack.rbegin(); it != o.stack.rend(); ++it)
      if (!it->element.empty() && it->element != "Annotation") return &*it;
    return nullptr;
  }

  // Seconds and nanoseconds since timeAdjustment (HDTrace's writer: seconds since the
  // program started, microseconds; PIOsim reads nine digits).
  std::string seconds(std::uint64_t t) const {
    const std::uint64_t ns = defs_.realtime_start_ns % 1'000'000'000u + t;
    return fmt::format("{}.{:09}", ns / 1'000'000'000u, ns % 1'000'000'000u);
  }

  void end(Output& o, std::uint64_t t) {
    Frame f = std::move(o.stack.back());
    o.stack.pop_back();
    const std::size_t depth = o.stack.size();
    std::string text;
    if (!f.element.empty()) {
      const std::string indent(depth, ' ');
      if (!f.nested.empty()) text += indent + "<Nested>\n" + f.nested + indent + "</Nested>\n";
      text += fmt::format("{}<{}{} time='{}' end='{}'", indent, f.element, f.attributes.text(),
                          seconds(f.start), seconds(t));
      text += f.children.empty() ? "/>\n" : fmt::format(">{}</{}>\n", f.children, f.element);
    } else {
      text = std::move(f.nested);  // a region HDTrace has no state for: its contents move up
    }
    if (o.stack.empty()) {
      o.pending += text;
      if (o.pending.size() > (1u << 20)) flush(o, flush_error_);
    } else {
      o.stack.back().nested += text;
    }
  }

  void flush(Output& o, std::string& error) {
    if (!error.empty()) return;
    // The first block creates the file, later ones append to it.
    std::FILE* f = std::fopen(o.path.c_str(), written_.count(o.path) ? "a" : "w");
    if (f == nullptr) {
      error = fmt::format("cannot write {}: {}", o.path, std::strerror(errno));
      return;
    }
    written_.insert(o.path);
    const bool ok = std::fwrite(o.pending.data(), 1, o.pending.size(), f) == o.pending.size();
    if (std::fclose(f) != 0 || !ok)
      error = fmt::format("writing {} failed: {}", o.path, std::strerror(errno));
    o.pending.clear();
  }

  std::int64_t world_rank(std::uint32_t comm, std::uint32_t peer, std::uint32_t loc) const {
    if (comm >= defs_.comms.size()) return peer;
    const archive::CommDef& c = defs_.comms[comm];
    if (c.self) return defs_.locations[loc].rank;
    return peer < c.world_ranks.size() ? static_cast<std::int64_t>(c.world_ranks[peer]) : -1;
  }

  // HDTrace's request ids, one space per rank: the archive's requests (kind 0) and its I/O
  // operations' matching ids (kind 1) are numbered apart and would collide.
  std::uint64_t rid(std::uint32_t loc, int kind, std::uint64_t id) {
    auto& ids = ranks_[defs_.locations[loc].rank];
    return ids.try_emplace({kind, id}, ids.size()).first->second;
  }

  const Definitions& defs_;
  std::vector<Output> outputs_;
  std::vector<bool> written_here_;  // by location; empty: all
  std::vector<std::map<std::pair<int, std::uint64_t>, std::uint64_t>> ranks_;
  // I/O operations begun and not completed: (rank, matching id) -> nonblocking.
  std::map<std::pair<std::uint32_t, std::uint64_t>, bool> nonblocking_io_;
  std::vector<std::set<std::uint32_t>> used_types_;
  std::set<std::string> written_;
  std::string* type_in_for_ = nullptr;  // the <For> an event just added, which its type joins
  std::uint64_t time_adjustment_ = 0;
  std::string flush_error_;
};

// ---- the project description ------------------------------------------------------------

// A datatype as the project description merger wrote it (MPI_COMBINER_ stripped from the
// element's name; the integers, addresses and inner types of MPI_Type_get_contents as named
// attributes and child elements).
std::string datatype_xml(const archive::DatatypeDef& d) {
  const auto& n = d.integers;
  const auto& a = d.addresses;
  auto type = [&](std::size_t i) { return i < d.types.size() ? std::to_string(d.types[i]) : "-1"; };
  auto at = [](const auto& v, std::size_t i) { return i < v.size() ? std::to_string(v[i]) : "0"; };
  std::string head =
      fmt::format("  <{} id=\"{}\" name=\"{}\"", d.combiner, d.id, tools::markup_escaped(d.name));
  std::string body;
  const std::string& c = d.combiner;
  const std::size_t count =
      n.empty() ? 0 : static_cast<std::size_t>(std::max<std::int64_t>(n[0], 0));
  if (c == "NAMED") {
  } else if (c == "DUP") {
    head += fmt::format(" oldType=\"{}\"", type(0));
  } else if (c == "CONTIGUOUS") {
    head += fmt::format(" count=\"{}\" oldType=\"{}\"", at(n, 0), type(0));
  } else if (c == "VECTOR") {
    head += fmt::format(" count=\"{}\" blocklength=\"{}\" stride=\"{}\" oldType=\"{}\"", at(n, 0),
                        at(n, 1), at(n, 2), type(0));
  } else if (c == "HVECTOR") {
    head += fmt::format(" count=\"{}\" blocklength=\"{}\" stride=\"{}\" oldType=\"{}\"", at(n, 0),
                        at(n, 1), at(a, 0), type(0));
  } else if (c == "RESIZED") {
    head +=
        fmt::format(" lowerBound=\"{}\" extent=\"{}\" oldType=\"{}\"", at(a, 0), at(a, 1), type(0));
  } else if (c == "INDEXED" || c == "HINDEXED") {
    head += fmt::format(" count=\"{}\" oldType=\"{}\"", count, type(0));
    for (std::size_t i = 0; i < count; ++i)
      body += fmt::format("   <Block len=\"{}\" index=\"{}\" />\n", at(n, 1 + i),
                          c == "INDEXED" ? at(n, 1 + count + i) : at(a, i));
  } else if (c == "INDEXED_BLOCK" || c == "HINDEXED_BLOCK") {
    head +=
        fmt::format(" count=\"{}\" oldType=\"{}\" blockLength=\"{}\"", count, type(0), at(n, 1));
    for (std::size_t i = 0; i < count; ++i)
      body += fmt::format("   <Block displacement=\"{}\" />\n",
                          c == "INDEXED_BLOCK" ? at(n, 2 + i) : at(a, i));
  } else if (c == "STRUCT") {
    head += fmt::format(" count=\"{}\"", count);
    for (std::size_t i = 0; i < count; ++i)
      body += fmt::format("   <Type id=\"{}\" displacement=\"{}\" blocklen=\"{}\"/>\n", type(i),
                          at(a, i), at(n, 1 + i));
  } else if (c == "SUBARRAY") {
    head += fmt::format(" ndims=\"{}\" order=\"{}\" oldType=\"{}\"", count,
                        n.empty() ? "0" : std::to_string(n.back()), type(0));
    for (std::size_t i = 0; i < count; ++i)
      body += fmt::format("   <Dimension size=\"{}\" subsize=\"{}\" start=\"{}\" />\n",
                          at(n, 1 + i), at(n, 1 + count + i), at(n, 1 + 2 * count + i));
  } else if (c == "DARRAY") {
    const std::size_t dims =
        n.size() > 2 ? static_cast<std::size_t>(std::max<std::int64_t>(n[2], 0)) : 0;
    head +=
        fmt::format(" size=\"{}\" order=\"{}\" rank=\"{}\" dims=\"{}\" oldType=\"{}\"", at(n, 0),
                    n.empty() ? "0" : std::to_string(n.back()), at(n, 1), dims, type(0));
    for (std::size_t i = 0; i < dims; ++i)
      body += fmt::format("   <Dimension gsize=\"{}\" distrib=\"{}\" darg=\"{}\" psize=\"{}\" />\n",
                          at(n, 3 + i), at(n, 3 + dims + i), at(n, 3 + 2 * dims + i),
                          at(n, 3 + 3 * dims + i));
  } else {
    for (std::int64_t v : n) body += fmt::format("    <Integer>{}</Integer>\n", v);
    for (std::int64_t v : a) body += fmt::format("    <Address>{}</Address>\n", v);
    for (std::uint64_t v : d.types) body += fmt::format("    <Type>{}</Type>\n", v);
  }
  if (body.empty()) return head + " />\n";
  return head + ">\n" + body + fmt::format("  </{}>\n", d.combiner);
}

std::string project(const Definitions& defs, const std::string& program, const std::string& anchor,
                    const std::vector<std::set<std::uint32_t>>& used_types) {
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x += fmt::format("<Application name=\"{}\" processCount=\"{}\">\n",
                   tools::markup_escaped(program), defs.ranks.size());
  x += fmt::format("<Description>perusetrace export of {}</Description>\n",
                   tools::markup_escaped(anchor));
  // Files: one per name, as the archive's IoFiles, with their size at the run's first opening;
  // PIOsim simulates them with a distribution, which the merger gave the default of.
  x += " <FileList>\n";
  for (std::size_t i = 0; i < defs.files.size(); ++i) {
    x += fmt::format("  <File name=\"{}\" id=\"{}\">\n", tools::markup_escaped(defs.files[i].name),
                     i);
    if (defs.files[i].initial_size != archive::kUnknownSize)
      x += fmt::format("   <InitialSize>{}</InitialSize>\n", defs.files[i].initial_size);
    x += "   <Distribution implementation=\"de.hd.pvs.piosim.model.inputOutput.distribution."
         "SimpleStripe\">\n    <ChunkSize>64K</ChunkSize>\n   </Distribution>\n  </File>\n";
  }
  x += " </FileList>\n\n";
  // Topology: host, rank, thread, each thread one .trc file.
  x += " <Topology>\n  <Level type=\"Hostname\">\n   <Level type=\"Rank\">\n"
       "    <Level type=\"Thread\">\n    </Level>\n   </Level>\n  </Level>\n\n";
  std::map<std::string, std::map<std::uint32_t, std::vector<std::uint32_t>>> hosts;
  for (const archive::LocationDef& l : defs.locations)
    hosts[HdtraceWriter::host_of(defs, l.rank)][l.rank].push_back(l.thread);
  for (const auto& [host, ranks] : hosts) {
    x += fmt::format("  <Node name=\"{}\">\n", tools::markup_escaped(host));
    for (const auto& [rank, threads] : ranks) {
      x += fmt::format("   <Node name=\"{}\">\n", rank);
      for (std::uint32_t t : threads) x += fmt::format("    <Node name=\"{}\" />\n", t);
      x += "   </Node>\n";
    }
    x += "  </Node>\n";
  }
  x += " </Topology>\n\n";
  // Communicators: the archive's unified ids serve as every rank's cid.
  x += " <CommunicatorList>\n";
  for (std::size_t c = 0; c < defs.comms.size(); ++c) {
    const archive::CommDef& comm = defs.comms[c];
    // HDTrace called MPI_COMM_WORLD "WORLD" (PIOsim skips it by that name).
    const std::string name = comm.name == "MPI_COMM_WORLD" ? "WORLD" : comm.name;
    x += fmt::format("  <Communicator name=\"{}\" id=\"{}\">\n", tools::markup_escaped(name), c);
    if (comm.self) {
      for (std::size_t r = 0; r < defs.ranks.size(); ++r)
        x += fmt::format("   <Rank global=\"{}\" local=\"0\" cid=\"{}\" />\n", r, c);
    } else {
      for (std::size_t local = 0; local < comm.world_ranks.size(); ++local)
        x += fmt::format("   <Rank global=\"{}\" local=\"{}\" cid=\"{}\" />\n",
                         comm.world_ranks[local], local, c);
    }
    x += "  </Communicator>\n";
  }
  x += " </CommunicatorList>\n\n";
  // Datatypes per rank and thread, as HDTrace had them: those its calls named, with the
  // inner types they are built of, inner ones first.
  x += " <Datatypes>\n";
  for (std::uint32_t loc = 0; loc < defs.locations.size(); ++loc) {
    std::set<std::uint32_t> all;
    std::vector<std::uint32_t> todo(used_types[loc].begin(), used_types[loc].end());
    while (!todo.empty()) {
      const std::uint32_t t = todo.back();
      todo.pop_back();
      if (t >= defs.datatypes.size() || !all.insert(t).second) continue;
      for (std::uint64_t inner : defs.datatypes[t].types)
        todo.push_back(static_cast<std::uint32_t>(inner));
    }
    const archive::LocationDef& l = defs.locations[loc];
    x += fmt::format("  <Rank name=\"{}\" thread=\"{}\">\n", l.rank, l.thread);
    for (std::uint32_t t : all) x += datatype_xml(defs.datatypes[t]);
    x += "  </Rank>\n";
  }
  x += " </Datatypes>\n";
  x += "</Application>\n";
  return x;
}

}  // namespace

namespace {

// The datatypes each location used, as text to travel between analysis ranks ("LOC:T,T;..."
// for the locations that used any), and back.
std::string types_text(const std::vector<std::set<std::uint32_t>>& used) {
  std::string out = std::to_string(used.size());
  for (std::size_t loc = 0; loc < used.size(); ++loc) {
    if (used[loc].empty()) continue;
    out += fmt::format(";{}", loc);
    for (const std::uint32_t t : used[loc]) out += fmt::format(":{}", t);
  }
  return out;
}

std::vector<std::set<std::uint32_t>> parse_types(const std::string& text) {
  std::vector<std::set<std::uint32_t>> used;
  std::size_t at = 0;
  used.resize(std::stoul(text, &at));
  while (at < text.size()) {
    ++at;  // ';'
    std::size_t n = 0;
    const std::size_t loc = std::stoul(text.substr(at), &n);
    at += n;
    while (at < text.size() && text[at] == ':') {
      ++at;
      used.at(loc).insert(static_cast<std::uint32_t>(std::stoul(text.substr(at), &n)));
      at += n;
    }
  }
  return used;
}

}  // namespace

int export_hdtrace(const ExportRequest& request) {
  const std::uint64_t read_before = tools::bytes_read_so_far();
  archive::ArchiveReader reader(request.archive);
  const Definitions& defs = reader.definitions();
  const std::string program = program_name(request, reader.anchor());
  if (program.find_first_of("/_") != std::string::npos || program[0] == '.') {
    fmt::print(stderr,
               "perusetrace export: the program name '{}' cannot be part of HDTrace's file "
               "names (PROGRAM_HOST_RANK_THREAD.trc): give --program NAME without '/' and '_', "
               "not starting with '.'\n",
               program);
    return 2;
  }
  const std::string output =
      request.output.empty() ? default_output(reader.anchor(), ".hdtrace") : request.output;
  std::string error;
  if (tools::analysis_group().rank() == 0) make_directories(output, error);
  // In a parallel export (--np) each analysis rank writes its share's files and rank 0 the
  // .proj, with the datatypes every rank's threads used: nothing else crosses ranks.
  tools::AnalysisGroup& group = tools::analysis_group();
  error = group.agree(error);  // rank 0 made the directory
  if (!error.empty()) throw archive::ArchiveError(error);
  HdtraceWriter writer(defs, output, program);
  std::vector<std::set<std::uint32_t>> used;
  tools::ShareStats share;
  error = tools::failure_of([&] {
    if (group.parallel()) writer.share(archive::location_share(defs, group.rank(), group.size()));
    share =
        tools::read_share(reader, writer, group, request.quiet || group.rank() != 0, read_before);
    std::string written;
    used = writer.finish(written);
    if (!written.empty()) throw archive::ArchiveError(written);
  });
  error = group.agree(error);
  std::string types = types_text(used);
  group.reduce(types, [](std::string& into, const std::string& from) {
    std::vector<std::set<std::uint32_t>> sum = parse_types(into);
    const std::vector<std::set<std::uint32_t>> more = parse_types(from);
    if (sum.size() < more.size()) sum.resize(more.size());
    for (std::size_t i = 0; i < more.size(); ++i) sum[i].insert(more[i].begin(), more[i].end());
    into = types_text(sum);
  });
  const std::string all_stats = group.gather_stats(tools::stats_json(share, group));
  const std::string proj = output + "/" + program + ".proj";
  if (error.empty() && group.rank() == 0) {
    std::FILE* f = std::fopen(proj.c_str(), "w");
    const std::string text = project(defs, program, reader.anchor(), parse_types(types));
    if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
        std::fclose(f) != 0)
      error = fmt::format("cannot write {}: {}", proj, std::strerror(errno));
  }
  if (group.parallel()) {
    // A parallel export that failed leaves none of its files: every rank removes its own.
    error = group.agree(error);
    if (!error.empty()) {
      for (const std::string& path : writer.paths()) ::unlink(path.c_str());
      if (group.rank() == 0) ::unlink(proj.c_str());
    }
  }
  if (!error.empty()) {
    if (group.rank() == 0) fmt::print(stderr, "perusetrace export: {}\n", error);
    return 1;
  }
  if (group.rank() != 0) return 0;
  if (!request.analysis_stats.empty() &&
      !tools::write_output_file("export", request.analysis_stats,
                                tools::stats_file(all_stats, group.size())))
    return 1;
  if (!request.quiet)
    fmt::print("perusetrace export: {} and {} .trc files in {}\n", proj, defs.locations.size(),
               output);
  return 0;
}

}  // namespace perusetrace::exporter
