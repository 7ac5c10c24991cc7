#include "tools/report/text_output.hpp"

#include "events/selection.hpp"

#include <fmt/core.h>

#include <string>
#include <vector>

#include "reader/other_jobs.hpp"
#include "tools/report/context_text.hpp"
#include "tools/report/io_text.hpp"
#include "tools/report/mpit_text.hpp"
#include "tools/report/rma_text.hpp"
#include "tools/report/inside_mpi_text.hpp"
#include "tools/report/wait_state_text.hpp"

namespace perusetrace::report {

namespace {

double ms(double ns) {
  return ns / 1e6;
}

// A Peruse peer: a world rank, -1 any source, below that a rank of another job (CommDef::job).
std::string rank_name(std::int32_t r) {
  if (r < -1) return fmt::format("{} of another job", -2 - static_cast<std::int64_t>(r));
  return r < 0 ? std::string("any") : std::to_string(r);
}

// The other jobs the trace exchanged messages with, and where their own traces are.
void other_jobs(std::FILE* out, const Report& report) {
  if (report.jobs.empty()) return;
  fmt::print(out,
             "\nOther MPI jobs (each traced into an archive of its own; this one holds its side "
             "of their messages)\n");
  for (const JobStat& j : report.jobs) {
    std::string where = "its archive is not known (it was not traced with this one)";
    const std::string dir = archive::trace_directory_of(j.archive);
    if (!j.archive.empty() && j.archive_found)
      where = "archive " + j.archive;
    else if (!j.archive.empty() && archive::job_archive_exists(dir + "/journal"))
      where = "archive " + j.archive + " not made yet: that job ended without MPI_Finalize; " +
              "run `perusetrace recover " + dir + "`";
    else if (!j.archive.empty())
      where = "archive " + j.archive + " not found (was that job traced, and did it finish?)";
    fmt::print(out, "  {}: {}, {} of its processes in communicators here; {}\n", j.name,
               archive::job_relation_text(j.relation), j.processes, where);
    fmt::print(out, "    messages to it {} ({} bytes), from it {} ({} bytes)\n", j.sent,
               j.sent_bytes, j.received, j.received_bytes);
  }
}

std::string rate_text(double bytes_per_s) {
  if (bytes_per_s >= 1e9) return fmt::format("{:.2f} GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return fmt::format("{:.2f} MB/s", bytes_per_s / 1e6);
  return fmt::format("{:.2f} kB/s", bytes_per_s / 1e3);
}

// Prints the hint and returns true when `analysis` lacks events.
bool missing(std::FILE* out, const Report& report, const char* analysis) {
  const Missing* m = report.missing_for(analysis);
  if (m == nullptr) return false;
  std::string events;
  for (const auto& e : m->events) events += (events.empty() ? "" : ", ") + e;
  fmt::print(out, "  not available: the trace lacks the Peruse events {}.\n  Trace again with {}\n",
             events, m->setting);
  return true;
}

// A Peruse measure of messages or requests: `what` they are, and what their time is.
void pattern(std::FILE* out, const Report& report, const char* title, const char* analysis,
             const Pattern& p, const char* what, const char* time) {
  fmt::print(out, "\n{}\n", title);
  if (missing(out, report, analysis)) return;
  if (p.count == 0) {
    fmt::print(out, "  none found\n");
    return;
  }
  fmt::print(out, "  {} {}, {:.3f} ms {} in total\n", p.count, what,
             ms(static_cast<double>(p.total)), time);
  for (const auto& [lost, c] : p.worst.items())
    fmt::print(out,
               "  {:>10.3f} ms on rank {} (sender {} -> receiver {}, tag {}) from t = {:.3f} ms\n",
               ms(lost), c.rank, rank_name(c.sender), rank_name(c.receiver), c.tag,
               ms(static_cast<double>(c.time)));
}

// Messages that came before their receive: time in the unexpected queue is the message's, not
// time a process lost (the receiver had not asked for it yet), so it is never summed as lost; what
// it costs is the memory it holds there and a second copy.
void unexpected_queue(std::FILE* out, const Report& report) {
  fmt::print(out, "\nUnexpected messages (arrived before their receive was posted)\n");
  if (missing(out, report, "unexpected_queue")) return;
  const Pattern& p = report.unexpected_queue;
  if (p.count == 0) {
    fmt::print(out, "  none\n");
    return;
  }
  const std::string bytes =
      p.bytes > 0 ? fmt::format("{} bytes", p.bytes) : std::string("their bytes (sizes unknown)");
  fmt::print(out,
             "  {} messages, {} held and copied twice (into the queue, then to the receive's "
             "buffer); time in the queue per message: min {} median {} max {} (the message's "
             "wait, no process's)\n",
             p.count, bytes, seconds_text(p.durations.min()), seconds_text(p.durations.median()),
             seconds_text(p.durations.max()));
  for (const auto& [queued, c] : p.worst.items())
    fmt::print(
        out, "  {:>10.3f} ms in rank {}'s queue (sender {}, tag {}, {} bytes) from t = {:.3f} ms\n",
        ms(queued), c.rank, rank_name(c.sender), c.tag, c.bytes, ms(static_cast<double>(c.time)));
}

// "0-3, 8, 10-11": hosts usually hold runs of consecutive ranks.
std::string rank_ranges(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

void placement(std::FILE* out, const Report& report) {
  const Placement& p = report.placement;
  fmt::print(out,
             "\nTraffic by placement (messages from the MPI records; bandwidth and late "
             "sender from Peruse)\n");
  // A job on hundreds of hosts would bury the table under the list.
  constexpr std::size_t kListed = 16;
  fmt::print(out, "  {} host{}:", p.hosts.size(), p.hosts.size() == 1 ? "" : "s");
  for (std::size_t h = 0; h < p.hosts.size() && h < kListed; ++h)
    fmt::print(out, "{} {} ({} rank{}: {})", h ? "," : "", p.hosts[h].name, p.hosts[h].ranks.size(),
               p.hosts[h].ranks.size() == 1 ? "" : "s", rank_ranges(p.hosts[h].ranks));
  if (p.hosts.size() > kListed) fmt::print(out, ", and {} more", p.hosts.size() - kListed);
  fmt::print(out, "\n");
  const bool no_posted_queue = report.missing_for("posted_queue") != nullptr;
  fmt::print(out, "  {:<12}{:>10}{:>14}{:>18}{:>16}\n", "", "messages", "bytes", "median bandwidth",
             "posted queue");
  auto row = [&](const char* label, const PlacementStat& s) {
    fmt::print(out, "  {:<12}{:>10}{:>14}{:>18}{:>16}\n", label, s.messages, s.bytes,
               s.bandwidth.count() > 0 ? rate_text(s.bandwidth.median()) : "n/a",
               no_posted_queue ? "n/a" : seconds_text(static_cast<double>(s.posted_queue_ns)));
  };
  row("intra-host", p.intra);
  if (p.hosts.size() == 1)
    fmt::print(out, "  all ranks on one host: no inter-host traffic\n");
  else
    row("inter-host", p.inter);
}

// The settings line, with the Peruse selection as a user would write it: "all", "default",
// or the default and what differs from it, rather than up to 17 names.
std::string settings_text(const std::string& settings) {
  if (settings.empty()) return "settings not recorded";
  const std::string key = "MPITRACE_PERUSE_EVENTS=";
  const auto at = settings.find(key);
  if (at == std::string::npos) return settings;
  const auto from = at + key.size();
  const auto end = std::min(settings.find(' ', from), settings.size());
  const EventSelection chosen = parse_event_list(settings.substr(from, end - from));
  if (!chosen.ok()) return settings;
  std::string short_form;
  if (chosen.events.all()) {
    short_form = "all";
  } else if (chosen.events == default_events()) {
    short_form = "default";
  } else if (chosen.events.none()) {
    short_form = "none";
  } else {
    const EventSet more = chosen.events & ~default_events();
    const EventSet fewer = default_events() & ~chosen.events;
    short_form = "default";
    if (more.any()) short_form += " + " + format_event_list(more);
    if (fewer.any()) short_form += " - " + format_event_list(fewer);
    if (short_form.size() > end - from) short_form = settings.substr(from, end - from);
  }
  return settings.substr(0, from) + short_form + settings.substr(end);
}

// Bytes through each datatype, with whether the MPI had to pack it.
void write_datatype_text(std::FILE* out, const Report& report) {
  if (!report.has_datatypes) return;
  fmt::print(out,
             "\nDatatypes: bytes moved through each buffer type (messages sent and received, "
             "collectives, file I/O); a non-contiguous one is packed and unpacked by the MPI\n");
  if (report.datatypes.empty()) {
    fmt::print(out, "  no message, collective or file operation named a datatype\n");
    return;
  }
  fmt::print(out, "  {:<40}{:>7}{:>8}{:>8}{:>10}{:>7}{:>7}{:>14}\n", "datatype", "size", "extent",
             "packed", "messages", "coll", "file", "bytes");
  for (const DatatypeStat& d : report.datatypes) {
    std::string name = d.name;
    if (name.size() > 38) name = name.substr(0, 35) + "...";
    fmt::print(out, "  {:<40}{:>7}{:>8}{:>8}{:>10}{:>7}{:>7}{:>14}\n", name, d.size, d.extent,
               d.contiguous ? "no" : "yes", d.sends + d.receives, d.collectives, d.file_operations,
               d.bytes());
  }
}

}  // namespace

void write_text(std::FILE* out, const Report& report) {
  fmt::print(out, "perusetrace report: {}\n", report.archive);
  fmt::print(out, "  {} ranks, {} events, {:.3f} s traced; {}\n", report.ranks.size(),
             report.events, static_cast<double>(report.trace_ns) / 1e9,
             settings_text(report.settings));
  if (!report.recording_cuts.empty()) {
    std::string ranks;
    for (const auto& [rank, at] : report.recording_cuts)
      ranks += fmt::format("{}rank {} at {:.3f} s", ranks.empty() ? "" : ", ", rank,
                           static_cast<double>(at) / 1e9);
    fmt::print(out,
               "  recording stopped early, its journal full (MPITRACE_MAX_SIZE): {}. The run went "
               "on ({:.3f} s in the archive); this report covers it up to {:.3f} s, where a "
               "rank's side of the messages and collectives ends. Trace with a larger "
               "MPITRACE_MAX_SIZE (or off) for all of it\n",
               ranks, static_cast<double>(report.archive_ns) / 1e9,
               static_cast<double>(report.analysed_until_ns) / 1e9);
  }
  const ClockCondition& clock = report.clock;
  if (clock.backwards == 0) {
    fmt::print(out, "  clock condition: all {} matched messages received after they were sent\n",
               clock.messages);
  } else if (clock.repaired > 0) {
    fmt::print(out,
               "  clock condition: {} of {} messages received before they were sent, by up to "
               "{:.3f} us (rank {} -> {}): the hosts' clocks disagree by more than measured. For "
               "this report {} receives, each with its thread's later events, were moved to just "
               "after their send (a controlled logical clock; the largest move {:.3f} us)\n",
               clock.backwards, clock.messages, static_cast<double>(clock.worst_ns) / 1e3,
               clock.worst_sender, clock.worst_receiver, clock.repaired,
               static_cast<double>(clock.max_move_ns) / 1e3);
  } else {
    fmt::print(
        out,
        "  clock condition BROKEN: {} of {} messages received before they were sent, by up "
        "to {:.3f} us (rank {} -> {}): the hosts' clocks disagree by more than measured "
        "(the archive's PERUSETRACE::CLOCK_DOMAINS); times across hosts are off by as much\n",
        clock.backwards, clock.messages, static_cast<double>(clock.worst_ns) / 1e3,
        clock.worst_sender, clock.worst_receiver);
  }
  const std::size_t n = report.ranks.size();
  write_wait_summary(out, report);
  write_what_to_try(out, report);

  fmt::print(out, "\nRanks: time in MPI and messages (MPI calls)\n");
  fmt::print(out, "  {:<6}{:>12}{:>9}{:>14}{:>9}{:>14}\n", "rank", "in MPI ms", "sent",
             "sent bytes", "recvd", "recvd bytes");
  for (std::size_t r = 0; r < n; ++r) {
    const RankStats& rs = report.ranks[r];
    fmt::print(out, "  {:<6}{:>12.3f}{:>9}{:>14}{:>9}{:>14}\n", r,
               ms(static_cast<double>(rs.mpi_ns)), rs.sent, rs.sent_bytes, rs.received,
               rs.received_bytes);
    for (const auto& [name, f] : rs.functions)
      fmt::print(out, "        {:<24}{:>8} calls {:>12.3f} ms\n", name, f.calls,
                 ms(static_cast<double>(f.ns)));
  }
  fmt::print(out, "\nMessage matrix (messages / bytes, sender row -> receiver column)\n  {:<6}",
             "");
  for (std::size_t c = 0; c < n; ++c) fmt::print(out, "{:>20}", c);
  fmt::print(out, "\n");
  for (std::size_t r = 0; r < n; ++r) {
    fmt::print(out, "  {:<6}", r);
    for (std::size_t c = 0; c < n; ++c)
      fmt::print(
          out, "{:>20}",
          fmt::format("{} / {}", report.matrix_count[r * n + c], report.matrix_bytes[r * n + c]));
    fmt::print(out, "\n");
  }
  other_jobs(out, report);

  fmt::print(out, "\nMessages (Peruse, one per request)\n");
  if (!missing(out, report, "messages")) {
    static const char* kOps[] = {"send", "receive"};
    static const char* kProtocols[] = {"eager (no XFER_CONTINUE)",
                                       "rendezvous (XFER_CONTINUE fragments)"};
    for (int o = 0; o < 2; ++o)
      for (int p = 0; p < 2; ++p) {
        const MessageGroup& g = report.messages.groups[o][p];
        if (g.count == 0) continue;
        fmt::print(out, "  {} {}: {} requests, {} bytes\n", kOps[o], kProtocols[p], g.count,
                   g.bytes);
        fmt::print(out, "    logical  (call to completion)  min {} median {} max {}\n",
                   seconds_text(g.logical_ns.min()), seconds_text(g.logical_ns.median()),
                   seconds_text(g.logical_ns.max()));
        fmt::print(out, "    physical (XFER_BEGIN..END)     min {} median {} max {}\n",
                   seconds_text(g.physical_ns.min()), seconds_text(g.physical_ns.median()),
                   seconds_text(g.physical_ns.max()));
        if (g.bandwidth.count() > 0)
          fmt::print(out, "    bandwidth                      min {} median {} max {}\n",
                     rate_text(g.bandwidth.min()), rate_text(g.bandwidth.median()),
                     rate_text(g.bandwidth.max()));
        if (g.fragments.count() > 0)
          fmt::print(out,
                     "    fragments per message          min {:.0f} median {:.0f} max {:.0f}\n",
                     g.fragments.min(), g.fragments.median(), g.fragments.max());
      }
    const Messages& m = report.messages;
    fmt::print(out, "  receives by message size:\n    {:<18}{:>9} {:>14} {:>18} {:>18}\n", "",
               "messages", "bytes", "bandwidth", "median bandwidth");
    for (std::size_t c = 0; c < m.size_classes.size(); ++c) {
      const SizeClassStat& s = m.size_classes[c];
      if (s.count == 0) continue;
      const bool measured = s.bandwidth.count() > 0;
      fmt::print(out, "    {:<18}{:>9} {:>14} {:>18} {:>18}\n", size_class_label(c), s.count,
                 s.bytes, measured ? rate_text(s.transfer_bandwidth()) : "n/a",
                 measured ? rate_text(s.bandwidth.median()) : "n/a");
    }
    if (m.fragments > 0) {
      fmt::print(out, "  fragments: {}, interval min {} median {} max {}, {:.0f} fragments/s\n",
                 m.fragments, seconds_text(m.fragment_interval_ns.min()),
                 seconds_text(m.fragment_interval_ns.median()),
                 seconds_text(m.fragment_interval_ns.max()),
                 m.fragmented_ns
                     ? static_cast<double>(m.fragments) * 1e9 / static_cast<double>(m.fragmented_ns)
                     : 0.0);
    } else {
      fmt::print(out, "  no rendezvous messages\n");
    }
    fmt::print(out, "  slowest (logical duration):\n");
    for (const auto& [key, c] : m.slowest.items())
      fmt::print(out,
                 "    {:>10.3f} ms  rank {} {} peer {} tag {} {} bytes, physical {:.3f} ms, "
                 "{} fragments, t = {:.3f} ms\n",
                 ms(key), c.rank, c.operation ? "receive from" : "send to", rank_name(c.peer),
                 c.tag, c.bytes, ms(static_cast<double>(c.physical)), c.fragments,
                 ms(static_cast<double>(c.time)));
  }

  placement(out, report);
  write_wait_states(out, report);
  write_inside_mpi(out, report);

  fmt::print(out,
             "\nPeruse's view of messages and requests (measures of messages, not time lost: "
             "that is under Wait states)\n");
  pattern(out, report,
          "Receives in the posted queue before their message arrived (REQ_INSERT_IN_POSTED_Q to "
          "REQ_REMOVE_FROM_POSTED_Q)",
          "posted_queue", report.posted_queue, "receives", "in the queue");
  pattern(out, report,
          "Collectives' internal receives in the posted queue (posted inside a collective call, "
          "or with Open MPI's internal tags)",
          "posted_queue", report.posted_queue_in_collectives, "receives", "in the queue");
  unexpected_queue(out, report);
  pattern(out, report,
          "Requests complete before the Wait/Test that collected them (REQ_COMPLETE before the "
          "call; no process waited)",
          "complete_before_wait", report.complete_before_wait, "requests",
          "complete and uncollected");

  fmt::print(out, "\nQueues\n");
  const bool no_search = missing(out, report, "queue_search");
  const bool no_depth = missing(out, report, "queue_depth");
  const double span = static_cast<double>(report.trace_ns ? report.trace_ns : 1);
  for (std::size_t r = 0; r < n; ++r) {
    const RankStats& rs = report.ranks[r];
    for (const auto& [label, q] :
         {std::pair<const char*, const QueueStat*>{"posted", &rs.posted},
          std::pair<const char*, const QueueStat*>{"unexpected", &rs.unexpected}}) {
      std::string line = fmt::format("  rank {} {:<11}", r, label);
      if (!no_depth)
        line += fmt::format(" depth max {} mean {:.3f}", q->max_depth,
                            static_cast<double>(q->depth_area) / span);
      if (!no_search)
        line += fmt::format("  searches {} taking {} (longest {})", q->searches,
                            seconds_text(static_cast<double>(q->search_ns)),
                            seconds_text(static_cast<double>(q->search_max_ns)));
      if (!no_depth || !no_search) fmt::print(out, "{}\n", line);
    }
  }

  fmt::print(out, "\nCollectives: internal point-to-point traffic (negative tags)\n");
  if (!missing(out, report, "collectives")) {
    if (report.collectives.empty()) fmt::print(out, "  no collective calls\n");
    for (const auto& [name, c] : report.collectives) {
      // Open MPI sends short messages inline, without a request, so Peruse sees no send of them:
      // receives without a single send mean the sends went unseen, not that there were none.
      const std::string sends =
          c.sends == 0 && c.receives > 0
              ? std::string(
                    "  sends not seen (short sends go out inline, without a Peruse request)")
              : fmt::format("{:>7} sends ({} bytes)", c.sends, c.send_bytes);
      fmt::print(out, "  {:<28}{:>7} calls {} {:>7} receives ({} bytes)\n", name, c.calls, sends,
                 c.receives, c.receive_bytes);
    }
  }

  write_rma_text(out, report.rma);
  write_io_text(out, report.io);
  write_datatype_text(out, report);
  write_mpit_text(out, report.mpit);
  write_context_text(out, report);
}

std::string seconds_text(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

}  // namespace perusetrace::report
