// .pcf and .row layout as Paraver reads them (sections DEFAULT_OPTIONS, STATES, STATES_COLOR,
// EVENT_TYPE/VALUES; "LEVEL <name> SIZE <n>" followed by one name per line).
#include "tools/prv/pcf_row.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "tools/prv/annotation_types.hpp"
#include "tools/prv/extrae_mpi.hpp"
#include "tools/prv/metric_types.hpp"
#include "tools/prv/prv_codes.hpp"

namespace perusetrace::prv {

namespace {

struct StateInfo {
  std::uint32_t value;
  const char* label;
  const char* colour;
};

constexpr StateInfo kStates[] = {
    {kStateIdle, "Idle", "{117,195,255}"},
    {kStateRunning, "Running", "{0,0,255}"},
    {kStateNotCreated, "Not created", "{255,255,255}"},
    {kStateWaitMessage, "Waiting a message", "{255,0,0}"},
    {kStateBlockingSend, "Blocking Send", "{255,0,174}"},
    {kStateSynchronization, "Synchronization", "{179,0,0}"},
    {kStateTestProbe, "Test/Probe", "{0,255,0}"},
    {kStateWait, "Wait/WaitAll", "{235,0,0}"},
    {kStateImmediateSend, "Immediate Send", "{255,144,26}"},
    {kStateImmediateRecv, "Immediate Receive", "{2,255,177}"},
    {kStateIo, "I/O", "{192,224,0}"},
    {kStateCollective, "Group Communication", "{255,145,255}"},
    {kStateOtherMpi, "Other MPI", "{100,100,177}"},
    {kStateSendRecv, "Send Receive", "{171,0,255}"},
    {kStateTracer, "Tracer flushing its buffer", "{128,128,128}"},
};

void write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() ||
      std::fclose(f) != 0) {
    throw ConvertError(
        fmt::format("writing {} failed: {}. Check that the directory exists, is writable and "
                    "has free space, or write elsewhere with -o PREFIX.",
                    path, std::strerror(errno)));
  }
}

using Values = std::vector<std::pair<std::uint64_t, std::string>>;

// One EVENT_TYPE section, with the names of its values where it has them. `flag` is the
// section's first number, which Extrae sets to 9 for its MPI types.
void event_type(std::string& out, std::uint64_t type, const std::string& label,
                const Values& values = {}, int flag = 0) {
  out += fmt::format("EVENT_TYPE\n{}    {}    {}\n", flag, type, label);
  if (!values.empty()) out += "VALUES\n";
  for (const auto& [value, name] : values) out += fmt::format("{}   {}\n", value, name);
  out += "\n\n";
}

}  // namespace

void write_pcf(const std::string& path, const Definitions& defs) {
  std::string o =
      "DEFAULT_OPTIONS\n\n"
      "LEVEL               THREAD\n"
      "UNITS               NANOSEC\n"
      "LOOK_BACK           100\n"
      "SPEED               1\n"
      "FLAG_ICONS          ENABLED\n"
      "NUM_OF_STATE_COLORS 1000\n"
      "YMAX_SCALE          37\n\n\n"
      "DEFAULT_SEMANTIC\n\n"
      "THREAD_FUNC          State As Is\n\n\n"
      "STATES\n";
  for (const StateInfo& s : kStates) o += fmt::format("{}    {}\n", s.value, s.label);
  o += "\n\nSTATES_COLOR\n";
  for (const StateInfo& s : kStates) o += fmt::format("{}    {}\n", s.value, s.colour);
  o += "\n\n";

  // perusetrace's own type range, clear of Extrae's MPI types 50000001-50000005.
  Values calls{{0, "Outside MPI"}};
  for (std::size_t r = 0; r < defs.regions.size(); ++r)
    if (defs.regions[r].kind == RegionKind::MpiFunction)
      calls.emplace_back(r + 1, defs.regions[r].name);
  event_type(o, kTypeMpiCall,
             fmt::format("MPI call in progress (perusetrace types {}-{})", kTypeBase, kTypeLast),
             calls);
  // The same calls in Extrae's types, named as Extrae's .pcf names them: each group that has a
  // function in the archive, its functions' values, and 0 "Outside MPI".
  std::map<std::uint64_t, Values> extrae;
  for (const RegionDef& r : defs.regions)
    if (const auto call = extrae_mpi_call(r)) extrae[call->group].emplace_back(call->value, r.name);
  for (auto& [group, values] : extrae) {
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    values.emplace_back(0, "Outside MPI");
    event_type(o, group, extrae_group_label(static_cast<ExtraeMpiGroup>(group)), values, 9);
  }
  Values events;
  for (std::size_t i = 0; i < defs.peruse_events.size(); ++i)
    events.emplace_back(i + 1, defs.peruse_events[i]);
  event_type(o, kTypePeruseEvent, "Peruse event", events);
  for (std::size_t i = 0; i < defs.peruse_events.size(); ++i)
    event_type(o, kTypePeruseEachFirst + i, "Peruse " + defs.peruse_events[i], {{1, "occurred"}});
  event_type(o, kTypePeruseRequest, "Peruse request id");
  Values peers{{0, "MPI_ANY_SOURCE"}};
  for (std::size_t r = 0; r < defs.ranks.size(); ++r)
    peers.emplace_back(r + 1, fmt::format("rank {}", r));
  std::set<std::uint32_t> elsewhere;  // ranks of other jobs (MPI_Comm_spawn)
  for (const auto& job : defs.jobs) elsewhere.insert(job.ranks.begin(), job.ranks.end());
  for (const std::uint32_t r : elsewhere)
    peers.emplace_back(peer_value(defs.ranks.size(), -2 - static_cast<std::int32_t>(r)),
                       fmt::format("rank {} of another MPI job", r));
  event_type(o, kTypePerusePeer, "Peruse peer (world rank + 1)", peers);
  event_type(o, kTypePeruseTag, "Peruse tag");
  event_type(o, kTypePeruseInternalTag, "Peruse tag of collective traffic (negated)");
  event_type(o, kTypePeruseBytes, "Peruse request bytes");
  event_type(o, kTypePeruseOperation, "Peruse operation", {{1, "send"}, {2, "receive"}});
  Values comms;
  for (std::size_t c = 0; c < defs.comms.size(); ++c)
    comms.emplace_back(c + 1, defs.comms[c].name.empty() ? "communicator" : defs.comms[c].name);
  event_type(o, kTypePeruseComm, "Peruse communicator", comms);
  event_type(o, kTypePostedQueue, "Posted receive queue depth (Peruse)");
  event_type(o, kTypeUnexpectedQueue, "Unexpected message queue depth (Peruse)");
  event_type(o, kTypeBytesInFlight, "Bytes in flight (Peruse)");
  event_type(o, kTypeFragmentBytes, "Fragment bytes (Peruse REQ_XFER_CONTINUE)");
  event_type(o, kTypePollCalls, "Calls folded into the MPI call ending here (polls)");
  event_type(o, kTypePollInsideNs, "Time inside MPI of the folded calls (ns)");
  if (!defs.windows.empty()) {
    event_type(o, kTypeRmaOperation, "RMA operation issued",
               {{1, "put"}, {2, "get"}, {3, "atomic (accumulate, fetch, compare-and-swap)"}});
    Values windows;
    for (std::size_t w = 0; w < defs.windows.size(); ++w)
      windows.emplace_back(w + 1, defs.windows[w].name.empty() ? "window" : defs.windows[w].name);
    event_type(o, kTypeRmaWindow, "RMA window", windows);
    Values targets;
    for (std::size_t r = 0; r < defs.ranks.size(); ++r)
      targets.emplace_back(r + 1, fmt::format("rank {}", r));
    event_type(o, kTypeRmaTarget, "RMA target (world rank + 1)", targets);
    event_type(o, kTypeRmaBytes, "RMA bytes to and from the target");
  }
  const std::vector<std::uint64_t> types = metric_types(defs);
  for (std::size_t m = 0; m < types.size(); ++m) {
    if (types[m] >= kTypeAnnotationSetFirst)
      event_type(o, types[m], annotation_set_label(defs.metrics[m]));
    else if (types[m] >= kTypeMpitFirst)
      event_type(o, types[m], mpit_label(defs.metrics[m]));
  }
  for (const AnnotationTypes::Attribute& a : annotation_types(defs).attributes) {
    Values values{{0, "(none)"}};
    for (std::size_t v = 0; v < a.values.size(); ++v) values.emplace_back(v + 1, a.values[v]);
    event_type(o, a.type, "annotation " + a.name, values);
  }
  write_file(path, o);
}

void write_row(const std::string& path, const Definitions& defs, const Layout& layout) {
  std::string o = fmt::format("LEVEL CPU SIZE {}\n", layout.cpu_names.size());
  for (const std::string& c : layout.cpu_names) o += c + "\n";
  o += fmt::format("\nLEVEL NODE SIZE {}\n", defs.nodes.size());
  for (const NodeDef& n : defs.nodes) o += n.name + "\n";
  o += fmt::format("\nLEVEL THREAD SIZE {}\n", defs.locations.size());
  for (const LocationDef& l : defs.locations)
    o += fmt::format("THREAD 1.{}.{}\n", l.rank + 1, l.thread + 1);
  write_file(path, o);
}

}  // namespace perusetrace::prv
