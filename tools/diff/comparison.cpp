#include "tools/diff/comparison.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace perusetrace::diff {

namespace {

bool is_significant(const Row& r, const Significance& s) {
  const auto change = r.change();
  if (!change || *change == 0) return false;
  const double floor = r.unit == Unit::Ns               ? static_cast<double>(s.min_time_ns)
                       : r.unit == Unit::BytesPerSecond ? 0.0
                                                        : 1.0;
  if (std::fabs(*change) < floor) return false;
  const auto relative = r.relative();
  return !relative || std::fabs(*relative) >= s.relative;
}

Row row(std::string key, std::string name, Unit unit, std::optional<double> a,
        std::optional<double> b) {
  Row r;
  r.key = std::move(key);
  r.name = std::move(name);
  r.unit = unit;
  r.a = a;
  r.b = b;
  return r;
}

std::optional<double> when(bool measured, double value) {
  return measured ? std::optional<double>(value) : std::nullopt;
}

double per(double total, std::uint64_t n) {
  return n ? total / static_cast<double>(n) : 0.0;
}

Section time_in_mpi(const ReportSummary& a, const ReportSummary& b) {
  Section s{"time_in_mpi", "Time in MPI (total over the ranks; mean per rank)", {}};
  auto with_ranks = [&](Row r, double ta, double tb) {
    r.a_per_rank = per(ta, a.ranks);
    r.b_per_rank = per(tb, b.ranks);
    return r;
  };
  const auto ma = static_cast<double>(a.mpi_ns), mb = static_cast<double>(b.mpi_ns);
  s.rows.push_back(
      with_ranks(row("mpi.outermost_ns", "all MPI calls (outermost)", Unit::Ns, ma, mb), ma, mb));
  std::set<std::string> names;
  for (const auto& [name, t] : a.functions) names.insert(name);
  for (const auto& [name, t] : b.functions) names.insert(name);
  std::vector<Row> functions;
  for (const std::string& name : names) {
    const auto fa = a.functions.find(name), fb = b.functions.find(name);
    const FunctionTime ta = fa == a.functions.end() ? FunctionTime{} : fa->second;
    const FunctionTime tb = fb == b.functions.end() ? FunctionTime{} : fb->second;
    Row r = with_ranks(row("mpi.function." + name, name, Unit::Ns, static_cast<double>(ta.ns),
                           static_cast<double>(tb.ns)),
                       static_cast<double>(ta.ns), static_cast<double>(tb.ns));
    r.a_calls = ta.calls;
    r.b_calls = tb.calls;
    functions.push_back(std::move(r));
  }
  // The largest changes first: what a user looks for after changing something.
  std::stable_sort(functions.begin(), functions.end(), [](const Row& x, const Row& y) {
    return std::fabs(*x.change()) > std::fabs(*y.change());
  });
  s.rows.insert(s.rows.end(), functions.begin(), functions.end());
  return s;
}

void pattern_rows(Section& s, const std::string& key, const std::string& name, const char* cases,
                  const PatternTotals& a, const PatternTotals& b) {
  s.rows.push_back(row(key + ".count", name + ": " + cases, Unit::Count,
                       when(a.available, static_cast<double>(a.count)),
                       when(b.available, static_cast<double>(b.count))));
  if (a.count == 0 && b.count == 0) return;  // no times to compare
  s.rows.push_back(row(key + ".total_ns", name + ": time", Unit::Ns, when(a.available, a.total_ns),
                       when(b.available, b.total_ns)));
  s.rows.push_back(row(key + ".per_case_ns",
                       name + ": time per " + (std::string(cases) == "cases" ? "case" : "message"),
                       Unit::Ns, when(a.available, per(a.total_ns, a.count)),
                       when(b.available, per(b.total_ns, b.count))));
}

Section wait_states(const ReportSummary& a, const ReportSummary& b) {
  Section s{"wait_states", "Wait states (time lost inside MPI calls, summed over the cases)", {}};
  const std::vector<std::string>& keys = a.wait_order.empty() ? b.wait_order : a.wait_order;
  const PatternTotals none;
  for (const std::string& key : keys) {
    const auto x = a.waits.find(key), y = b.waits.find(key);
    const PatternTotals& pa = x == a.waits.end() ? none : x->second;
    const PatternTotals& pb = y == b.waits.end() ? none : y->second;
    const auto title = a.wait_titles.count(key) ? a.wait_titles.at(key) : b.wait_titles.at(key);
    std::string name = title;
    if (!name.empty()) name[0] = static_cast<char>(std::tolower(name[0]));
    pattern_rows(s, "wait." + key, name, "cases", pa, pb);
  }
  return s;
}

Section queue_measures(const ReportSummary& a, const ReportSummary& b) {
  Section s{"queue_measures",
            "Peruse's measures of messages and requests (their time, not time lost)",
            {}};
  pattern_rows(s, "measure.posted_queue", "receives in the posted queue", "messages",
               a.posted_queue, b.posted_queue);
  pattern_rows(s, "measure.posted_queue_in_collectives",
               "collectives' receives in the posted queue", "messages",
               a.posted_queue_in_collectives, b.posted_queue_in_collectives);
  pattern_rows(s, "measure.unexpected_queue", "messages in the unexpected queue", "messages",
               a.unexpected_queue, b.unexpected_queue);
  pattern_rows(s, "measure.complete_before_wait", "requests complete before their Wait", "messages",
               a.complete_before_wait, b.complete_before_wait);
  return s;
}

// The costs the report's "what to try" names, before and after the change it advised.
Section inside_mpi(const ReportSummary& a, const ReportSummary& b) {
  Section s{"inside_mpi", "Inside MPI (Peruse: handshakes, copies, queue searches)", {}};
  auto rows = [&](const std::string& key, const std::string& name, const char* what,
                  const InsideTotals& x, const InsideTotals& y) {
    s.rows.push_back(row(key + ".count", name + ": " + what, Unit::Count,
                         when(a.inside_available, static_cast<double>(x.count)),
                         when(b.inside_available, static_cast<double>(y.count))));
    s.rows.push_back(row(key + ".ns", name + ": time", Unit::Ns, when(a.inside_available, x.ns),
                         when(b.inside_available, y.ns)));
  };
  rows("inside.handshakes", "rendezvous handshakes", "messages", a.handshakes, b.handshakes);
  rows("inside.copies", "messages copied twice (unexpected queue)", "messages", a.copies, b.copies);
  rows("inside.deep_searches", "posted-queue searches in a queue of 64+ receives", "searches",
       a.deep_searches, b.deep_searches);
  return s;
}

Section bandwidth(const ReportSummary& a, const ReportSummary& b) {
  Section s{"bandwidth",
            "Bandwidth by message size (receive requests, Peruse: bytes over transfer time)",
            {}};
  const std::size_t n = std::max(a.size_classes.size(), b.size_classes.size());
  for (std::size_t c = 0; c < n; ++c) {
    const SizeClassTotals* x = c < a.size_classes.size() ? &a.size_classes[c] : nullptr;
    const SizeClassTotals* y = c < b.size_classes.size() ? &b.size_classes[c] : nullptr;
    if ((!x || x->messages == 0) && (!y || y->messages == 0)) continue;
    const std::string label = x ? x->label : y->label;
    const std::string key = "size." + std::to_string(c);
    s.rows.push_back(row(key + ".messages", label + ": messages", Unit::Count,
                         when(x && a.messages_available, x ? double(x->messages) : 0),
                         when(y && b.messages_available, y ? double(y->messages) : 0)));
    s.rows.push_back(row(key + ".bandwidth", label + ": bandwidth", Unit::BytesPerSecond,
                         when(x && x->measured > 0, x ? x->bandwidth : 0),
                         when(y && y->measured > 0, y ? y->bandwidth : 0)));
  }
  return s;
}

Section messages(const ReportSummary& a, const ReportSummary& b) {
  Section s{"messages", "Messages", {}};
  s.rows.push_back(row("messages.point_to_point", "point-to-point messages (MPI records)",
                       Unit::Count, double(a.p2p_messages), double(b.p2p_messages)));
  s.rows.push_back(row("messages.point_to_point_bytes", "point-to-point bytes (MPI records)",
                       Unit::Bytes, double(a.p2p_bytes), double(b.p2p_bytes)));
  static const char* kOps[] = {"send", "receive"};
  static const char* kProtocols[] = {"eager", "rendezvous"};
  for (int o = 0; o < 2; ++o)
    for (int p = 0; p < 2; ++p)
      s.rows.push_back(row(std::string("messages.requests.") + kOps[o] + "." + kProtocols[p],
                           std::string(kOps[o]) + " requests, " + kProtocols[p] + " (Peruse)",
                           Unit::Count, when(a.messages_available, double(a.requests[o][p])),
                           when(b.messages_available, double(b.requests[o][p]))));
  return s;
}

}  // namespace

std::size_t Comparison::significant() const {
  std::size_t n = 0;
  for (const Section& s : sections)
    for (const Row& r : s.rows) n += r.significant;
  return n;
}

Comparison compare(const ReportSummary& a, const ReportSummary& b, const Significance& sig) {
  Comparison c;
  c.significance = sig;
  c.sections = {time_in_mpi(a, b), wait_states(a, b), queue_measures(a, b),
                inside_mpi(a, b),  bandwidth(a, b),   messages(a, b)};
  for (Section& s : c.sections)
    for (Row& r : s.rows) r.significant = is_significant(r, sig);
  return c;
}

}  // namespace perusetrace::diff
