#include "tools/profile/html_output.hpp"

#include <fmt/core.h>

#include "tools/common/markup_text.hpp"
#include "tools/profile/json_output.hpp"

namespace perusetrace::profile {

namespace {

// By category (profile_data.hpp): green outside MPI, blues for work, oranges and reds for
// stalls, so that where the program waits stands out.
constexpr const char* kColours[kCategories] = {"#8cc084", "#9ecae1", "#6baed6", "#3182bd",
                                               "#08519c", "#c6dbef", "#fdae6b", "#e6550d",
                                               "#fd8d3c", "#a63603", "#d94801", "#bbbbbb"};

std::string array(const Counts& c) {
  std::string out = "[";
  for (int k = 0; k < kCategories; ++k) out += fmt::format("{}{}", k ? "," : "", c.n[k]);
  return out + "]";
}

// The tree flat, parents first: {n: name, p: parent, m: MPI function, t: samples per category,
// r: {rank: samples per category}}.
std::string data(const Profile& p) {
  std::string out =
      fmt::format(R"({{"period_ns":{},"ranks":{},"categories":[)", p.period_ns, p.ranks.size());
  for (int k = 0; k < kCategories; ++k)
    out += fmt::format("{}{}", k ? "," : "", json_string(kCategoryWords[k]));
  out += "],\"colours\":[";
  for (int k = 0; k < kCategories; ++k) out += fmt::format("{}\"{}\"", k ? "," : "", kColours[k]);
  out += "],\"nodes\":[";
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    std::string ranks = "{";
    for (const auto& [rank, c] : n.ranks)
      ranks += fmt::format("{}\"{}\":{}", ranks.size() > 1 ? "," : "", rank, array(c));
    out += fmt::format(R"({}{{"n":{},"p":{},"m":{},"t":{},"r":{}}})", i ? ",\n" : "",
                       json_string(n.name),
                       n.parent == kNoNode ? -1 : static_cast<std::int64_t>(n.parent),
                       n.mpi ? 1 : 0, array(n.total), ranks + "}");
  }
  return out + "]}";
}

constexpr const char* kStyle = R"css(
body { font: 13px sans-serif; margin: 1em; }
#view { width: 100%; border: 1px solid #ccc; }
#view text { font: 11px monospace; pointer-events: none; }
#view g { cursor: pointer; }
#view rect { stroke: #fff; stroke-width: 0.5; }
#legend span { display: inline-block; margin-right: 1em; }
#legend i { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; }
#details { margin-top: 0.5em; min-height: 3em; }
table { border-collapse: collapse; } td { padding: 0 0.8em 0 0; }
)css";

// Lays out the frames under the zoomed one over the full width, the zoomed frame's ancestors
// above it at full width too; a frame narrower than half a pixel is left out with its subtree.
constexpr const char* kScript = R"js(
const D = JSON.parse(document.getElementById('profile-data').textContent);
const N = D.nodes, W = 1200, H = 18, SVG = 'http://www.w3.org/2000/svg';
N.forEach((n, i) => { n.c = []; if (n.p >= 0) N[n.p].c.push(i); });
let zoom = 0, rank = 'all';
const svg = document.getElementById('view');
function counts(i) { return rank === 'all' ? N[i].t : (N[i].r[rank] || null); }
function value(i) { const c = counts(i); return c ? c.reduce((a, b) => a + b, 0) : 0; }
function seconds(n) { return (n * D.period_ns / 1e9).toFixed(3) + ' s'; }
function dominant(c) {
  let best = 0;
  c.forEach((v, k) => { if (v > c[best]) best = k; });
  return best;
}
function breakdown(i) {
  const c = counts(i) || [], all = value(i);
  let rows = '';
  c.forEach((v, k) => {
    if (v > 0) rows += D.categories[k] + ' ' + seconds(v) + ' (' +
      (100 * v / all).toFixed(1) + '%)\n';
  });
  return rows;
}
function path(i) {
  const p = [];
  for (; i >= 0; i = N[i].p) p.unshift(N[i].n);
  return p.join(' > ');
}
function show(i) {
  const d = document.getElementById('details');
  d.textContent = '';
  const head = document.createElement('div');
  head.textContent = path(i) + ': ' + seconds(value(i)) + (rank === 'all' ? ', all ranks'
    : ', rank ' + rank);
  const body = document.createElement('pre');
  body.textContent = breakdown(i);
  d.appendChild(head);
  d.appendChild(body);
}
function frame(i, x, w, depth) {
  const g = document.createElementNS(SVG, 'g');
  g.setAttribute('id', 'frame-' + i);
  const r = document.createElementNS(SVG, 'rect');
  r.setAttribute('x', x); r.setAttribute('y', depth * H);
  r.setAttribute('width', Math.max(w, 0.5)); r.setAttribute('height', H - 1);
  r.setAttribute('fill', D.colours[dominant(counts(i))]);
  const t = document.createElementNS(SVG, 'title');
  t.textContent = N[i].n + ': ' + seconds(value(i)) + '\n' + breakdown(i);
  g.appendChild(r); g.appendChild(t);
  const chars = Math.floor((w - 6) / 7);
  if (chars >= 3) {
    const label = document.createElementNS(SVG, 'text');
    label.setAttribute('x', x + 3); label.setAttribute('y', depth * H + 13);
    label.textContent = N[i].n.length > chars ? N[i].n.slice(0, chars - 2) + '..' : N[i].n;
    g.appendChild(label);
  }
  g.addEventListener('click', () => { zoom = i; render(); show(i); });
  g.addEventListener('mouseover', () => show(i));
  svg.appendChild(g);
}
function render() {
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  if (value(zoom) === 0) zoom = 0;
  const above = [];
  for (let i = zoom; i >= 0; i = N[i].p) above.unshift(i);
  above.forEach((i, d) => frame(i, 0, W, d));
  let deepest = above.length;
  const todo = [[zoom, 0, W, above.length - 1]];
  while (todo.length) {
    const [i, x, w, d] = todo.pop();
    const v = value(i);
    let cx = x;
    N[i].c.forEach(c => {
      const cw = v ? w * value(c) / v : 0;
      if (cw >= 0.5) {
        frame(c, cx, cw, d + 1);
        deepest = Math.max(deepest, d + 2);
        todo.push([c, cx, cw, d + 1]);
      }
      cx += cw;
    });
  }
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + deepest * H);
  svg.setAttribute('height', deepest * H);
}
const select = document.getElementById('rank');
for (let r = 0; r < D.ranks; ++r) {
  const o = document.createElement('option');
  o.value = String(r); o.textContent = 'rank ' + r;
  select.appendChild(o);
}
select.addEventListener('change', () => { rank = select.value; render(); show(zoom); });
document.getElementById('reset').addEventListener('click', () => { zoom = 0; render(); show(0); });
const legend = document.getElementById('legend');
D.categories.forEach((name, k) => {
  if (N[0].t[k] === 0) return;
  const s = document.createElement('span');
  const swatch = document.createElement('i');
  swatch.style.background = D.colours[k];
  s.appendChild(swatch);
  s.appendChild(document.createTextNode(name));
  legend.appendChild(s);
});
render();
show(0);
)js";

}  // namespace

std::string to_html(const Profile& p) {
  std::uint32_t threads = 0;
  for (const RankStat& r : p.ranks) threads += r.threads;
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>perusetrace profile: {}</title>\n<style>{}</style>\n</head>\n",
                      tools::markup_escaped(p.archive), kStyle);
  html += "<body>\n<h1>perusetrace profile</h1>\n";
  html += fmt::format(
      "<p>{}: {} samples, one every {:.3f} ms per thread, {} ranks ({} threads), {:.3f} s of "
      "thread time. Width is time; a frame's colour is the state most of its time was in. "
      "Click a frame to zoom in, the top frame or <button id=\"reset\">reset</button> to zoom "
      "out. Show <select id=\"rank\"><option value=\"all\">all ranks</option></select></p>\n",
      tools::markup_escaped(p.archive), p.samples, static_cast<double>(p.period_ns) * 1e-6,
      p.ranks.size(), threads, p.seconds(p.samples));
  html += "<div id=\"legend\"></div>\n";
  html +=
      "<svg id=\"view\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200 18\" "
      "preserveAspectRatio=\"xMinYMin meet\" "
      "height=\"18\"></svg>\n";
  html += "<div id=\"details\"></div>\n";
  html += "<noscript><p>The view needs JavaScript.</p></noscript>\n";
  html += "<script type=\"application/json\" id=\"profile-data\">" + data(p) + "</script>\n";
  html += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return html;
}

}  // namespace perusetrace::profile
