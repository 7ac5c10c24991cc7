#include "tools/report/html_output.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "analysis/mpit_analysis.hpp"
#include "tools/common/markup_text.hpp"
#include "tools/report/text_output.hpp"
#include "tools/report/timeline_assets.hpp"
#include "tools/report/timeline_json.hpp"
#include "tools/report/inside_mpi_text.hpp"
#include "tools/report/wait_state_text.hpp"

namespace perusetrace::report {

namespace {

constexpr int kWidth = 640, kHeight = 240, kLeft = 70, kBottom = 30, kTop = 10, kRight = 10;

struct Series {
  std::string label;
  std::vector<double> y;
};

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A line plot of series over the time bins, with axis labels.
std::string line_plot(const std::string& id, const std::string& title, const std::string& unit,
                      double x_span_s, const std::vector<Series>& series) {
  double top = 0;
  for (const auto& s : series)
    for (double v : s.y) top = std::max(top, v);
  if (top <= 0) top = 1;
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  std::string svg = fmt::format(
      R"svg(<h3>{}</h3><svg id="{}" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)svg",
      tools::markup_escaped(title), id, kWidth, kHeight, kWidth, kHeight);
  svg +=
      fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)svg",
                  kLeft, kTop, w, h);
  svg += fmt::format(R"svg(<text x="4" y="{}" font-size="11">{:.3g}</text>)svg", kTop + 10, top);
  svg += fmt::format(R"svg(<text x="4" y="{}" font-size="11">0 {}</text>)svg", kTop + h,
                     tools::markup_escaped(unit));
  svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="11">0 s</text>)svg", kLeft, kHeight - 8);
  svg +=
      fmt::format(R"svg(<text x="{}" y="{}" font-size="11" text-anchor="end">{:.3f} s</text>)svg",
                  kWidth - kRight, kHeight - 8, x_span_s);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    if (s.y.empty()) continue;
    std::string points;
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double x = kLeft + w * (static_cast<double>(i) + 0.5) / static_cast<double>(s.y.size());
      const double y = kTop + h - h * s.y[i] / top;
      points += fmt::format("{:.1f},{:.1f} ", x, y);
    }
    const char* colour = kColours[k % std::size(kColours)];
    svg +=
        fmt::format(R"svg(<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)svg",
                    colour, points);
    svg +=
        fmt::format(R"svg(<text x="{}" y="{}" font-size="11" fill="{}">{}</text>)svg", kLeft + 6,
                    kTop + 14 + 12 * static_cast<int>(k), colour, tools::markup_escaped(s.label));
  }
  return svg + "</svg>\n";
}

std::string interval_histogram(const Distribution& d) {
  int first = Distribution::kBins, last = -1;
  for (int b = 0; b < Distribution::kBins; ++b)
    if (d.bin(b) > 0) {
      first = std::min(first, b);
      last = b;
    }
  std::string svg = fmt::format(
      R"svg(<h3>Intervals between fragments</h3><svg id="plot-fragment-intervals" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)svg",
      kWidth, kHeight, kWidth, kHeight);
  const double w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  svg +=
      fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888"/>)svg",
                  kLeft, kTop, w, h);
  if (last < 0) {
    svg +=
        fmt::format(R"svg(<text x="{}" y="{}" font-size="13">no fragments in this trace</text>)svg",
                    kLeft + 10, kTop + 30);
    return svg + "</svg>\n";
  }
  std::uint64_t top = 1;
  for (int b = first; b <= last; ++b) top = std::max(top, d.bin(b));
  const int bars = last - first + 1;
  const double bw = w / bars;
  for (int b = first; b <= last; ++b) {
    const double bh = h * static_cast<double>(d.bin(b)) / static_cast<double>(top);
    svg += fmt::format(
        R"svg(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#1f77b4"><title>{:.0f}-{:.0f} ns: {}</title></rect>)svg",
        kLeft + bw * (b - first), kTop + h - bh, std::max(1.0, bw - 1), bh, Distribution::lower(b),
        Distribution::lower(b + 1), d.bin(b));
  }
  svg += fmt::format(R"svg(<text x="4" y="{}" font-size="11">{}</text>)svg", kTop + 10, top);
  svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="11">{:.0f} ns</text>)svg", kLeft,
                     kHeight - 8, Distribution::lower(first));
  svg += fmt::format(
      R"svg(<text x="{}" y="{}" font-size="11" text-anchor="end">{:.0f} ns (log scale)</text>)svg",
      kWidth - kRight, kHeight - 8, Distribution::lower(last + 1));
  return svg + "</svg>\n";
}

std::string heat_map(const Report& r) {
  const std::size_t n = r.ranks.size();
  const int cell =
      static_cast<int>(std::clamp<std::size_t>(400 / std::max<std::size_t>(n, 1), 4, 60));
  const int size = cell * static_cast<int>(n) + 40;
  std::string svg = fmt::format(
      R"svg(<h3>Message matrix (bytes, sender row, receiver column)</h3><svg id="plot-matrix" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)svg",
      size, size, size, size);
  std::uint64_t top = 1;
  for (std::uint64_t v : r.matrix_bytes) top = std::max(top, v);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t d = 0; d < n; ++d) {
      const std::uint64_t v = r.matrix_bytes[s * n + d];
      const int shade =
          255 - static_cast<int>(255.0 * static_cast<double>(v) / static_cast<double>(top));
      svg += fmt::format(
          R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="rgb(255,{},{})" stroke="#ccc"><title>{} -> {}: {} messages, {} bytes</title></rect>)svg",
          30 + cell * static_cast<int>(d), 30 + cell * static_cast<int>(s), cell, cell, shade,
          shade, s, d, r.matrix_count[s * n + d], v);
    }
  svg += R"svg(<text x="30" y="20" font-size="11">receiver &#8594;</text>)svg";
  svg +=
      R"svg(<text x="12" y="30" font-size="11" transform="rotate(90 12 30)">sender &#8594;</text>)svg";
  return svg + "</svg>\n";
}

std::string placement_table(const Report& r) {
  const Placement& p = r.placement;
  std::string t = fmt::format(
      "<h3>Traffic by placement</h3><p>{} host{}</p><table id=\"placement\"><tr><th></th>"
      "<th>messages</th><th>bytes</th><th>median bandwidth (B/s)</th><th>receives in the posted "
      "queue (ns)</th>"
      "</tr>\n",
      p.hosts.size(), p.hosts.size() == 1 ? " (no inter-host traffic)" : "s");
  const bool no_posted_queue = r.missing_for("posted_queue") != nullptr;
  auto row = [&](const char* label, const PlacementStat& s) {
    t += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", label,
                     s.messages, s.bytes,
                     s.bandwidth.count() > 0 ? fmt::format("{:.4g}", s.bandwidth.median()) : "n/a",
                     no_posted_queue ? std::string("n/a") : std::to_string(s.posted_queue_ns));
  };
  row("intra-host", p.intra);
  if (p.hosts.size() != 1) row("inter-host", p.inter);
  return t + "</table>\n";
}

// The largest MPI_T counters over time, each as the share of its total change reached by then:
// their totals differ by orders of magnitude, their timing is what a plot can compare.
// One line for one-sided communication (the full report below has its tables).
std::string rma_line(const Rma& rma) {
  if (!rma.present) return "";
  RmaTraffic all;
  for (const RmaWindowStat& w : rma.windows) {
    all.puts += w.traffic.puts, all.gets += w.traffic.gets, all.atomics += w.traffic.atomics;
    all.bytes_sent += w.traffic.bytes_sent, all.bytes_received += w.traffic.bytes_received;
  }
  std::uint64_t sync_ns = 0;
  for (const RmaSyncTime& s : rma.sync)
    for (std::uint64_t ns : s.ns) sync_ns += ns;
  return fmt::format(
      "<p id=\"rma\">One-sided communication: {} windows, {} operations ({} put, {} get, {} "
      "atomic) moving {} bytes to their targets and {} from them; {:.3f} ms in RMA "
      "synchronisation calls over all ranks.</p>\n",
      rma.windows.size(), all.operations(), all.puts, all.gets, all.atomics, all.bytes_sent,
      all.bytes_received, static_cast<double>(sync_ns) / 1e6);
}

// MPI-IO: a row per file and rank that used it.
std::string io_table(const Io& io) {
  if (!io.present) return "";
  std::string t =
      "<h2>MPI-IO</h2>\n<table id=\"io\"><tr><th>file</th><th>rank</th><th>read "
      "(operations/bytes)</th><th>written</th><th>independent</th><th>collective</th>"
      "<th>independent nonblocking</th><th>collective nonblocking</th><th>syncs, seeks, size "
      "changes, deletions, openings</th><th>operation time (ms)</th><th>time in its calls "
      "(ms)</th></tr>\n";
  auto traffic = [](const IoTraffic& x) { return fmt::format("{}/{}", x.operations, x.bytes); };
  for (const IoFileStat& f : io.files)
    for (std::size_t r = 0; r < f.ranks.size(); ++r) {
      const IoRankStat& s = f.ranks[r];
      if (!s.used) continue;
      t += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
          "<td>{}</td><td>{}, {}, {}, {}, {}</td><td>{:.3f}</td><td>{:.3f}</td></tr>\n",
          tools::markup_escaped(f.name), r, traffic(s.reads), traffic(s.writes),
          traffic(s.kinds[kIoIndependent]), traffic(s.kinds[kIoCollective]),
          traffic(s.kinds[kIoIndependentNonblocking]), traffic(s.kinds[kIoCollectiveNonblocking]),
          s.flushes.operations, s.seeks, s.resizes, s.deletes, s.opens,
          static_cast<double>(s.reads.ns + s.writes.ns) / 1e6,
          static_cast<double>(s.call_ns) / 1e6);
    }
  return t + "</table>\n";
}

std::string mpit_plot(const Report& r, double span_s) {
  constexpr std::size_t kShown = 4;
  std::vector<Series> series;
  for (const PvarStat* s : ranked(r.mpit, PvarKind::Delta)) {
    if (series.size() == kShown) break;
    const double total = s->total();
    if (total == 0) continue;
    Series line{s->name, {}};
    double sum = 0;
    for (double v : s->bins) line.y.push_back(100.0 * (sum += v) / total);
    series.push_back(std::move(line));
  }
  if (series.empty()) return "";
  return line_plot("plot-mpit", "MPI_T counters over time (share of each one's total change)", "%",
                   span_s, series);
}

// Per context (--by, or else the archive's first attribute alone): a bar of its time in MPI and,
// under it, one of its late-sender time, on one scale; the contexts with the most MPI time.
std::string context_chart(const Report& r) {
  const ByContext* by = !r.by_context.attributes.empty() ? &r.by_context
                        : !r.by_attribute.empty()        ? &r.by_attribute.front()
                                                         : nullptr;
  if (by == nullptr || by->contexts.empty()) return "";
  constexpr std::size_t kShown = 30;
  constexpr int kLabel = 220, kRow = 22, kBar = 9;
  std::vector<const ContextStat*> rows;
  for (const ContextStat& c : by->contexts) rows.push_back(&c);
  std::stable_sort(rows.begin(), rows.end(), [](const ContextStat* a, const ContextStat* b) {
    return a->mpi_ns > b->mpi_ns;
  });
  if (rows.size() > kShown) rows.resize(kShown);
  std::uint64_t top = 1;
  for (const ContextStat* c : rows) top = std::max({top, c->mpi_ns, c->posted_queue_ns});
  std::string names;
  for (const std::string& a : by->attributes) names += (names.empty() ? "" : ",") + a;
  const int height = kTop + kRow * static_cast<int>(rows.size()) + kBottom;
  std::string svg = fmt::format(
      R"svg(<h3>By context ({}): time in MPI (blue) and late-sender time (red)</h3><svg id="plot-contexts" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}">)svg",
      tools::markup_escaped(names), kWidth, height, kWidth, height);
  const double scale = static_cast<double>(kWidth - kLabel - kRight) / static_cast<double>(top);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ContextStat& c = *rows[i];
    std::string label;
    for (std::size_t a = 0; a < c.values.size(); ++a)
      label += (a ? " " : "") + (c.values[a].empty() ? std::string("(none)") : c.values[a]);
    const int y = kTop + kRow * static_cast<int>(i);
    svg += fmt::format(R"svg(<text x="4" y="{}" font-size="11">{}</text>)svg", y + 12,
                       tools::markup_escaped(label));
    const std::pair<std::uint64_t, const char*> bars[] = {{c.mpi_ns, "#1f77b4"},
                                                          {c.posted_queue_ns, "#d62728"}};
    for (int b = 0; b < 2; ++b)
      svg += fmt::format(
          R"svg(<rect x="{}" y="{}" width="{:.1f}" height="{}" fill="{}"><title>{}: {:.3f} ms</title></rect>)svg",
          kLabel, y + 2 + b * (kBar + 1), static_cast<double>(bars[b].first) * scale, kBar,
          bars[b].second, b == 0 ? "time in MPI" : "receives in the posted queue",
          static_cast<double>(bars[b].first) / 1e6);
  }
  svg +=
      fmt::format(R"svg(<text x="{}" y="{}" font-size="11" text-anchor="end">{:.3f} ms</text>)svg",
                  kWidth - kRight, height - 8, static_cast<double>(top) / 1e6);
  return svg + "</svg>\n";
}

// The timeline's elements; timeline.js fills them from the embedded data.
constexpr const char* kTimelineSection = R"html(<section id="timeline">
<h2>Timeline</h2>
<p id="tl-kept" class="tl-note"></p>
<div id="tl-controls"></div>
<div id="tl-legend"></div>
<div id="tl-status"></div>
<pre id="tl-errors" hidden></pre>
<div id="tl-main"><div id="tl-labels"></div><div id="tl-canvas-box"><canvas id="tl-canvas" tabindex="0"></canvas><div id="tl-selection" hidden></div><div id="tl-tip" hidden></div></div></div>
<p class="tl-note">Drag across the timeline to zoom into that range; Shift+drag (or drag with the middle button) to pan; the wheel zooms at the pointer, Shift+wheel pans; double-click or Home shows the whole trace, Backspace the previous view. Hover for a call's, a Peruse event's or a message's details. Click a table's heading to sort it, a row to show that occurrence.</p>
<div id="tl-tables"></div>
</section>
)html";

}  // namespace

std::string to_html(const Report& r, const timeline::Timeline& timeline) {
  const double span_s = static_cast<double>(r.trace_ns) / 1e9;
  std::vector<Series> bandwidth(1);
  bandwidth[0].label = "transfer bandwidth (bytes/s)";
  for (int b = 0; b < kTimeBins; ++b) {
    const auto i = static_cast<std::size_t>(b);
    bandwidth[0].y.push_back(
        r.messages.bin_ns[i] > 0 ? r.messages.bin_bytes[i] * 1e9 / r.messages.bin_ns[i] : 0.0);
  }
  std::vector<Series> depth;
  for (std::size_t k = 0; k < r.ranks.size() && depth.size() < 16; ++k) {
    for (const auto& [label, q] :
         {std::pair<const char*, const QueueStat*>{"posted", &r.ranks[k].posted},
          std::pair<const char*, const QueueStat*>{"unexpected", &r.ranks[k].unexpected}}) {
      if (q->max_depth == 0) continue;
      Series s{fmt::format("rank {} {} queue", k, label), {}};
      for (std::int64_t v : q->max_in_bin) s.y.push_back(static_cast<double>(v));
      depth.push_back(std::move(s));
    }
  }

  // The text report, as the page's reference section; its summary of what matters most opens
  // the page.
  auto captured = [&](auto&& write) {
    char* buffer = nullptr;
    std::size_t size = 0;
    std::string text;
    if (std::FILE* mem = ::open_memstream(&buffer, &size)) {
      write(mem);
      std::fclose(mem);
      text.assign(buffer, size);
      std::free(buffer);
    }
    return text;
  };
  const std::string text = captured([&](std::FILE* f) { write_text(f, r); });
  const std::string summary = captured([&](std::FILE* f) { write_wait_summary(f, r); });
  const std::string advice = captured([&](std::FILE* f) { write_what_to_try(f, r); });

  std::string page = R"svg(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>perusetrace report</title>
<style>body{font-family:sans-serif;margin:1.5em}pre{background:#f6f6f6;padding:1em;overflow-x:auto;max-width:60em}table#placement{max-width:60em}#summary,#what-to-try{white-space:pre-wrap;max-width:none}
)svg";
  page += timeline::kStyle;
  page += "</style>\n</head><body>\n";
  page += fmt::format("<h1>perusetrace report</h1><p>{}</p>\n", tools::markup_escaped(r.archive));
  if (!summary.empty())
    page += "<pre id=\"summary\">" + tools::markup_escaped(summary.substr(1)) + "</pre>\n";
  if (!advice.empty())
    page += "<pre id=\"what-to-try\">" + tools::markup_escaped(advice.substr(1)) + "</pre>\n";
  page += kTimelineSection;
  page += "<h2>Plots</h2>\n";
  page += line_plot("plot-bandwidth", "Transfer bandwidth over time", "B/s", span_s, bandwidth);
  page += interval_histogram(r.messages.fragment_interval_ns);
  page += line_plot("plot-queue-depth", "Queue depth over time (maximum per time bin)", "entries",
                    span_s, depth);
  page += heat_map(r);
  page += placement_table(r);
  page += mpit_plot(r, span_s);
  page += rma_line(r.rma);
  page += io_table(r.io);
  page += context_chart(r);
  page += "<h2>Full report</h2><pre>" + tools::markup_escaped(text) + "</pre>\n";
  page += "<script type=\"application/json\" id=\"timeline-data\">" +
          timeline::to_json(timeline, r) + "</script>\n<script>\n";
  page += timeline::kScript;
  page += "</script>\n</body></html>\n";
  return page;
}

}  // namespace perusetrace::report
