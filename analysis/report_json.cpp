#include "analysis/report_json.hpp"

#include <fmt/core.h>

#include <cmath>
#include <vector>

#include "analysis/inside_mpi_json.hpp"
#include "analysis/json_text.hpp"
#include "analysis/mpit_analysis.hpp"
#include "analysis/wait_state_json.hpp"
#include "events/value_names.hpp"

namespace perusetrace::report {

namespace {

std::string quote(const std::string& s) {
  return archive::json_string(s);
}

std::string number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("0");
}

std::string distribution(const Distribution& d) {
  return fmt::format(R"({{"count":{},"min":{},"median":{},"max":{},"mean":{}}})", d.count(),
                     number(d.min()), number(d.median()), number(d.max()), number(d.mean()));
}

using archive::json_array;

std::string available(const Report& r, const char* analysis) {
  return r.missing_for(analysis) ? "false" : "true";
}

std::string pattern(const Report& r, const char* analysis, const Pattern& p) {
  std::string worst = json_array(p.worst.items(), [](const auto& e) {
    const PatternCase& c = e.second;
    return fmt::format(
        R"({{"duration_ns":{},"time_ns":{},"rank":{},"sender":{},"receiver":{},"tag":{}}})", c.lost,
        c.time, c.rank, c.sender, c.receiver, c.tag);
  });
  std::string pairs = json_array(p.pairs, [](const auto& e) {
    return fmt::format(R"({{"sender":{},"receiver":{},"count":{},"duration_ns":{}}})",
                       e.first.first, e.first.second, e.second.count, e.second.lost);
  });
  return fmt::format(R"({{"available":{},"count":{},"total_ns":{},"worst":{},"pairs":{}}})",
                     available(r, analysis), p.count, p.total, worst, pairs);
}

// Message time, not lost time (text_output.cpp says why).
std::string unexpected_queue(const Report& r) {
  const Pattern& p = r.unexpected_queue;
  std::string longest = json_array(p.worst.items(), [](const auto& e) {
    const PatternCase& c = e.second;
    return fmt::format(
        R"({{"queue_ns":{},"time_ns":{},"rank":{},"sender":{},"tag":{},"bytes":{}}})", c.lost,
        c.time, c.rank, c.sender, c.tag, c.bytes);
  });
  return fmt::format(R"({{"available":{},"messages":{},"bytes":{},"queue_ns":{},"longest":{}}})",
                     available(r, "unexpected_queue"), p.count, p.bytes, distribution(p.durations),
                     longest);
}

std::string queue(const QueueStat& q, double span) {
  return fmt::format(
      R"({{"searches":{},"search_ns":{},"search_max_ns":{},"max_depth":{},"mean_depth":{},"depth_over_time":{}}})",
      q.searches, q.search_ns, q.search_max_ns, q.max_depth,
      number(static_cast<double>(q.depth_area) / span),
      json_array(q.max_in_bin, [](std::int64_t v) { return std::to_string(v); }));
}

std::string placement_stat(const PlacementStat& s) {
  return fmt::format(R"({{"messages":{},"bytes":{},"bandwidth_bytes_per_s":{},)"
                     R"("posted_queue_count":{},"posted_queue_ns":{}}})",
                     s.messages, s.bytes, distribution(s.bandwidth), s.posted_queue_count,
                     s.posted_queue_ns);
}

std::string host_ranks(const HostRanks& h) {
  return fmt::format(R"({{"host":{},"ranks":{}}})", quote(h.name),
                     json_array(h.ranks, [](std::uint32_t k) { return std::to_string(k); }));
}

const char* kind_name(PvarKind k) {
  return name_in(k, {{PvarKind::Delta, "delta"}, {PvarKind::Watermark, "watermark"}}, "value");
}

// One MPI_T value: only the ranks that wrote it (a per-peer variable has ranks x ranks members).
std::string pvar(const PvarStat& s) {
  std::vector<std::size_t> ranks;
  for (std::size_t k = 0; k < s.ranks.size(); ++k)
    if (s.ranks[k].values > 0) ranks.push_back(k);
  std::string per_rank = json_array(ranks, [&](std::size_t k) {
    const PvarRank& v = s.ranks[k];
    return fmt::format(R"({{"rank":{},"values":{},"total":{},"min":{},"max":{},"last":{},)"
                       R"("moves":{},"change":{}}})",
                       k, v.values, number(v.total), number(v.min), number(v.max), number(v.last),
                       number(v.moves), number(v.change));
  });
  double all = 0;
  for (const auto& [name, p] : s.places) all += p.change;
  std::string places = json_array(places_by_change(s), [&](const auto& e) {
    const PvarPlace& p = e.second;
    return fmt::format(R"({{"name":{},"values":{},"change":{},"share":{},"highest":{}}})",
                       quote(e.first), p.values, number(p.change),
                       number(all != 0 ? p.change / all : 0.0), number(p.highest));
  });
  std::string over_time =
      s.kind != PvarKind::Delta ? "[]" : json_array(s.bins, [](double v) { return number(v); });
  return fmt::format(
      R"({{"name":{},"description":{},"unit":{},"kind":"{}","type":"{}","values":{},)"
      R"("varied":{},"total":{},"highest":{},"ranks":{},"places":{},"changes_over_time":{}}})",
      quote(s.name), quote(s.description), quote(s.unit), kind_name(s.kind),
      s.real ? "double" : "integer", s.values, s.varied() ? "true" : "false", number(s.total()),
      number(s.highest()), per_rank, places, over_time);
}

std::string rma_traffic(const RmaTraffic& t) {
  return fmt::format(
      R"("operations":{},"puts":{},"gets":{},"atomics":{},"bytes_sent":{},"bytes_received":{})",
      t.operations(), t.puts, t.gets, t.atomics, t.bytes_sent, t.bytes_received);
}

std::string rma(const Rma& m) {
  const std::string windows = json_array(m.windows, [](const RmaWindowStat& w) {
    return fmt::format(R"({{"name":{},"comm":{},{}}})", quote(w.name), quote(w.comm),
                       rma_traffic(w.traffic));
  });
  const std::string pairs = json_array(m.pairs, [](const auto& e) {
    return fmt::format(R"({{"origin":{},"target":{},{}}})", e.first.first, e.first.second,
                       rma_traffic(e.second));
  });
  std::vector<std::size_t> ranks(m.sync.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = r;
  const std::string sync = json_array(ranks, [&](std::size_t r) {
    std::string kinds;
    for (unsigned k = 0; k < kRmaSyncKinds; ++k)
      kinds += fmt::format(R"({}"{}":{{"calls":{},"seconds":{}}})", k ? "," : "", kRmaSyncNames[k],
                           m.sync[r].calls[k], number(static_cast<double>(m.sync[r].ns[k]) / 1e9));
    return fmt::format(R"({{"rank":{},{}}})", r, kinds);
  });
  return fmt::format(R"({{"windows":{},"pairs":{},"sync":{},"never_completed":{}}})", windows,
                     pairs, sync, m.never_completed);
}

std::string io_traffic(const IoTraffic& t) {
  return fmt::format(R"({{"operations":{},"bytes":{},"ns":{}}})", t.operations, t.bytes, t.ns);
}

std::string io(const Io& m) {
  const std::string files = json_array(m.files, [](const IoFileStat& f) {
    std::vector<std::size_t> used;
    for (std::size_t r = 0; r < f.ranks.size(); ++r)
      if (f.ranks[r].used) used.push_back(r);
    const std::string ranks = json_array(used, [&](std::size_t r) {
      const IoRankStat& s = f.ranks[r];
      std::string kinds;
      for (unsigned k = 0; k < kIoKinds; ++k)
        kinds += fmt::format(R"({}"{}":{})", k ? "," : "", kIoKindNames[k], io_traffic(s.kinds[k]));
      return fmt::format(
          R"({{"rank":{},"opens":{},"closes":{},"reads":{},"writes":{},"kinds":{{{}}},)"
          R"("flushes":{},"seeks":{},"resizes":{},"deletes":{},"calls":{},"call_ns":{},)"
          R"("unfinished":{}}})",
          r, s.opens, s.closes, io_traffic(s.reads), io_traffic(s.writes), kinds,
          io_traffic(s.flushes), s.seeks, s.resizes, s.deletes, s.calls, s.call_ns, s.unfinished);
    });
    const long long size =
        f.initial_size == kIoUnknownSize ? -1 : static_cast<long long>(f.initial_size);
    return fmt::format(R"({{"name":{},"initial_size":{},"ranks":{}}})", quote(f.name), size, ranks);
  });
  std::vector<std::size_t> ranks(m.ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = r;
  const std::string calls = json_array(ranks, [&](std::size_t r) {
    return fmt::format(R"({{"rank":{},"calls":{},"ns":{}}})", r, m.ranks[r].calls, m.ranks[r].ns);
  });
  return fmt::format(R"({{"files":{},"ranks":{}}})", files, calls);
}

std::string mpit(const Mpit& m) {
  std::vector<const PvarStat*> written;
  for (const PvarStat& s : m.pvars)
    if (s.values > 0) written.push_back(&s);
  return fmt::format(
      R"({{"pvar_values":{},"pvars":{},"cvars":{},"cvars_differ":{},"cvars_set":{}}})",
      m.pvars.size(), json_array(written, [](const PvarStat* s) { return pvar(*s); }), m.cvars,
      json_array(m.differ,
                 [](const CvarItem& c) {
                   return fmt::format(R"({{"rank":{},"name":{},"value":{},"rank0_value":{}}})",
                                      c.rank, quote(c.name), quote(c.value), quote(c.rank0_value));
                 }),
      json_array(m.set, [](const CvarItem& c) {
        return fmt::format(R"({{"name":{},"value":{},"set":{},"note":{}}})", quote(c.name),
                           quote(c.value), c.set ? "true" : "false", quote(c.note));
      }));
}

std::string by_context(const ByContext& by) {
  auto strings = [](const std::vector<std::string>& list) {
    return json_array(list, [](const std::string& s) { return quote(s); });
  };
  return fmt::format(
      R"({{"attributes":{},"found":{},"contexts":{}}})", strings(by.attributes), strings(by.found),
      json_array(by.contexts, [&](const ContextStat& c) {
        return fmt::format(
            R"({{"values":{},"mpi_ns":{},"sent":{},"sent_bytes":{},"received":{},)"
            R"("received_bytes":{},"posted_queue_count":{},"posted_queue_ns":{},)"
            R"("sampled_ns":{{"not_in_mpi":{},"mpi_work":{},"mpi_stall":{}}},"functions":{}}})",
            strings(c.values), c.mpi_ns, c.sent, c.sent_bytes, c.received, c.received_bytes,
            c.posted_queue_count, c.posted_queue_ns, c.sampled_ns[0], c.sampled_ns[1],
            c.sampled_ns[2], json_array(c.functions, [](const auto& f) {
              return fmt::format(R"({{"name":{},"calls":{},"ns":{}}})", quote(f.first),
                                 f.second.calls, f.second.ns);
            }));
      }));
}

}  // namespace

std::string to_json(const Report& r) {
  const std::size_t n = r.ranks.size();
  std::string j = "{";
  j += fmt::format(R"("schema_version":1,"archive":{},"creator":{},"settings":{},"events":{},)",
                   quote(r.archive), quote(r.creator), quote(r.settings), r.events);
  j += fmt::format(R"("trace_ns":{},"bin_ns":{},"analysis_ranks":{},)", r.trace_ns, r.bin_ns,
                   r.analysis_ranks);
  j += R"("recording_cuts":[)";
  for (auto it = r.recording_cuts.begin(); it != r.recording_cuts.end(); ++it)
    j += fmt::format(R"({}{{"rank":{},"at_ns":{}}})", it == r.recording_cuts.begin() ? "" : ",",
                     it->first, it->second);
  j += fmt::format(R"(],"analysed_until_ns":{},)", r.analysed_until_ns);
  j += fmt::format(
      R"("clock_condition":{{"messages":{},"backwards":{},"worst_ns":{},"worst_sender":{},)"
      R"("worst_receiver":{},"repaired":{},"max_move_ns":{}}},)",
      r.clock.messages, r.clock.backwards, r.clock.worst_ns, r.clock.worst_sender,
      r.clock.worst_receiver, r.clock.repaired, r.clock.max_move_ns);
  j += fmt::format(R"("peruse":{{"selected":{},"observed":{{{}}}}},)",
                   json_array(r.selected, quote), [&] {
                     std::string o;
                     for (const auto& [name, count] : r.observed)
                       o += (o.empty() ? "" : ",") + quote(name) + ":" + std::to_string(count);
                     return o;
                   }());
  j += R"("missing":)" +
       json_array(r.missing,
                  [](const Missing& m) {
                    return fmt::format(R"({{"analysis":{},"events":{},"setting":{}}})",
                                       quote(m.analysis), json_array(m.events, quote),
                                       quote(m.setting));
                  }) +
       ",";

  std::vector<std::size_t> ranks(n);
  for (std::size_t i = 0; i < n; ++i) ranks[i] = i;
  j +=
      R"("ranks":)" +
      json_array(
          ranks,
          [&](std::size_t i) {
            const RankStats& s = r.ranks[i];
            return fmt::format(
                R"({{"rank":{},"name":{},"mpi_ns":{},"functions":{},"sent":{},"sent_bytes":{},"received":{},"received_bytes":{},"posted_queue_ns":{},"posted_queue_in_collectives_ns":{},"unexpected_queue_ns":{},"complete_before_wait_ns":{}}})",
                i, quote(s.name), s.mpi_ns,
                json_array(s.functions,
                           [](const auto& f) {
                             return fmt::format(R"({{"name":{},"calls":{},"ns":{}}})",
                                                quote(f.first), f.second.calls, f.second.ns);
                           }),
                s.sent, s.sent_bytes, s.received, s.received_bytes, s.posted_queue_ns,
                s.posted_queue_in_collectives_ns, s.unexpected_queue_ns, s.complete_before_wait_ns);
          }) +
      ",";
  auto matrix = [&](const std::vector<std::uint64_t>& m) {
    return json_array(ranks, [&](std::size_t row) {
      return json_array(ranks, [&](std::size_t col) { return std::to_string(m[row * n + col]); });
    });
  };
  j += fmt::format(R"("matrix":{{"messages":{},"bytes":{}}},)", matrix(r.matrix_count),
                   matrix(r.matrix_bytes));
  j +=
      R"("jobs":)" +
      json_array(
          r.jobs,
          [](const JobStat& job) {
            return fmt::format(
                R"({{"name":{},"relation":{},"archive":{},"archive_found":{},"processes":{},"sent":{},"sent_bytes":{},"received":{},"received_bytes":{}}})",
                quote(job.name), quote(job.relation), quote(job.archive), job.archive_found,
                job.processes, job.sent, job.sent_bytes, job.received, job.received_bytes);
          }) +
      ",";

  const Messages& m = r.messages;
  std::string groups = "[";
  static const char* kOps[] = {"send", "receive"};
  static const char* kProtocols[] = {"eager", "rendezvous"};
  for (int o = 0; o < 2; ++o)
    for (int p = 0; p < 2; ++p) {
      const MessageGroup& g = m.groups[o][p];
      if (groups.size() > 1) groups += ',';
      groups += fmt::format(
          R"({{"operation":"{}","protocol":"{}","count":{},"bytes":{},"logical_ns":{},"physical_ns":{},"bandwidth_bytes_per_s":{},"fragments":{}}})",
          kOps[o], kProtocols[p], g.count, g.bytes, distribution(g.logical_ns),
          distribution(g.physical_ns), distribution(g.bandwidth), distribution(g.fragments));
    }
  groups += "]";
  std::vector<std::size_t> bins(kTimeBins);
  for (std::size_t i = 0; i < bins.size(); ++i) bins[i] = i;
  const std::string over_time = json_array(bins, [&](std::size_t b) {
    return number(m.bin_ns[b] > 0 ? m.bin_bytes[b] * 1e9 / m.bin_ns[b] : 0.0);
  });
  std::string histogram = "[";
  for (int b = 0; b < Distribution::kBins; ++b) {
    if (m.fragment_interval_ns.bin(b) == 0) continue;
    if (histogram.size() > 1) histogram += ',';
    histogram +=
        fmt::format(R"({{"from_ns":{},"to_ns":{},"count":{}}})", number(Distribution::lower(b)),
                    number(Distribution::lower(b + 1)), m.fragment_interval_ns.bin(b));
  }
  histogram += "]";
  std::vector<std::size_t> classes(m.size_classes.size());
  for (std::size_t c = 0; c < classes.size(); ++c) classes[c] = c;
  const std::string size_classes = json_array(classes, [&](std::size_t c) {
    const SizeClassStat& s = m.size_classes[c];
    const std::string to = c + 1 < kSizeClassFrom.size()
                               ? fmt::format(R"("to_bytes":{},)", kSizeClassFrom[c + 1])
                               : "";
    return fmt::format(
        R"({{"from_bytes":{},{}"label":{},"messages":{},"bytes":{},"bandwidth_bytes_per_s":{},)"
        R"("transfer_bytes":{},"transfer_ns":{}}})",
        kSizeClassFrom[c], to, quote(size_class_label(c)), s.count, s.bytes,
        distribution(s.bandwidth), s.transfer_bytes, s.transfer_ns);
  });
  j += fmt::format(
      R"("messages":{{"available":{},"groups":{},"size_classes":{},"fragments":{{"count":{},"interval_ns":{},"interval_histogram":{},"per_second":{}}},"slowest":{},"bandwidth_over_time_bytes_per_s":{}}},)",
      available(r, "messages"), groups, size_classes, m.fragments,
      distribution(m.fragment_interval_ns), histogram,
      number(m.fragmented_ns
                 ? static_cast<double>(m.fragments) * 1e9 / static_cast<double>(m.fragmented_ns)
                 : 0.0),
      json_array(
          m.slowest.items(),
          [](const auto& e) {
            const MessageCase& c = e.second;
            return fmt::format(
                R"({{"rank":{},"peer":{},"tag":{},"operation":"{}","bytes":{},"time_ns":{},"logical_ns":{},"physical_ns":{},"fragments":{}}})",
                c.rank, c.peer, c.tag, c.operation ? "receive" : "send", c.bytes, c.time, c.logical,
                c.physical, c.fragments);
          }),
      over_time);

  j += fmt::format(R"("unexpected_queue":{},)", unexpected_queue(r));
  j += fmt::format(
      R"("queue_measures":{{"posted_queue":{},"posted_queue_in_collectives":{},"complete_before_wait":{}}},)",
      pattern(r, "posted_queue", r.posted_queue),
      pattern(r, "posted_queue", r.posted_queue_in_collectives),
      pattern(r, "complete_before_wait", r.complete_before_wait));
  const double span = static_cast<double>(r.trace_ns ? r.trace_ns : 1);
  j += fmt::format(R"("queues":{{"search_available":{},"depth_available":{},"ranks":{}}},)",
                   available(r, "queue_search"), available(r, "queue_depth"),
                   json_array(ranks, [&](std::size_t i) {
                     return fmt::format(R"({{"rank":{},"posted":{},"unexpected":{}}})", i,
                                        queue(r.ranks[i].posted, span),
                                        queue(r.ranks[i].unexpected, span));
                   }));
  j += fmt::format(
      R"("collectives":{{"available":{},"functions":{}}},)", available(r, "collectives"),
      json_array(r.collectives, [](const auto& e) {
        const CollectiveStat& c = e.second;
        return fmt::format(
            R"({{"name":{},"calls":{},"sends":{},"sends_seen":{},"send_bytes":{},"receives":{},"receive_bytes":{}}})",
            quote(e.first), c.calls, c.sends, c.sends > 0 || c.receives == 0, c.send_bytes,
            c.receives, c.receive_bytes);
      }));
  const Placement& pl = r.placement;
  j += fmt::format(R"("placement":{{"hosts":{},"host_ranks":{},"intra_host":{},"inter_host":{}}},)",
                   pl.hosts.size(), json_array(pl.hosts, host_ranks), placement_stat(pl.intra),
                   placement_stat(pl.inter));
  j += fmt::format(R"("requests_in_flight_max":{})", r.requests_in_flight_max);
  // Only an archive with datatype definitions has the section.
  if (r.has_datatypes)
    j +=
        R"(,"datatypes":)" + json_array(r.datatypes, [](const DatatypeStat& d) {
          return fmt::format(
              R"({{"id":{},"name":{},"combiner":{},"size":{},"extent":{},"true_extent":{},"contiguous":{},"sends":{},"send_bytes":{},"receives":{},"receive_bytes":{},"collectives":{},"collective_bytes":{},"file_operations":{},"file_bytes":{},"bytes":{}}})",
              d.id, quote(d.name), quote(d.combiner), d.size, d.extent, d.true_extent, d.contiguous,
              d.sends, d.send_bytes, d.receives, d.receive_bytes, d.collectives, d.collective_bytes,
              d.file_operations, d.file_bytes, d.bytes());
        });
  if (r.wait_states.present) j += R"(,"wait_states":)" + wait_states_json(r);
  j += R"(,"inside_mpi":)" + inside_mpi_json(r.inside);
  j += R"(,"what_to_try":)" + what_to_try_json(r);
  // Only an archive with MPI_T in it has the section: other reports stay as they were.
  if (r.mpit.present) j += R"(,"mpit":)" + mpit(r.mpit);
  // Only an archive with RMA windows has the section.
  if (r.rma.present) j += R"(,"rma":)" + rma(r.rma);
  // Only an archive with MPI-IO files has the section.
  if (r.io.present) j += R"(,"io":)" + io(r.io);
  // Only an archive with annotations, or a report asked --by, has the section.
  if (!r.by_context.attributes.empty() || !r.by_context.found.empty())
    j += R"(,"by_context":)" + by_context(r.by_context);
  if (!r.by_attribute.empty())
    j += R"(,"by_attribute":)" +
         json_array(r.by_attribute, [](const ByContext& b) { return by_context(b); });
  return j + "}\n";
}

}  // namespace perusetrace::report
