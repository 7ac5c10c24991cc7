// The report page's interactive timeline: rows per location with their MPI states, Peruse
// events as markers, message lines, counter lanes, and the occurrence tables that jump to
// what they list. It reads the JSON that tools/report/timeline_json.cpp embeds: a summary of
// the whole trace at several resolutions (drawn where the view is wider than a pixel per
// bucket, or where no detail was kept) and the detail of the windows the report kept.
'use strict';
(function () {
  const errorBox = document.getElementById('tl-errors');
  function showError(text) {
    errorBox.hidden = false;
    errorBox.textContent += text + '\n';
  }
  window.addEventListener('error', (e) => showError('error: ' + e.message + ' (' + e.filename +
    ':' + e.lineno + ')'));
  window.addEventListener('unhandledrejection', (e) => showError('error: ' + e.reason));

  const D = JSON.parse(document.getElementById('timeline-data').textContent);
  const SPAN = Math.max(D.span_ns, 1);
  const F = D.buckets;
  const NO_STATE = 15;
  const OUTSIDE = 0;

  // ---- data -------------------------------------------------------------------------------

  function bytesOf(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; ++i) out[i] = s.charCodeAt(i);
    return out;
  }
  const levelOffset = [];
  for (let n = F, off = 0; n >= 1; n = n >> 1) {
    levelOffset.push(off);
    off += n;
  }
  const LEVELS = levelOffset.length;

  // Per row: states (all levels), and Peruse events and counters as pyramids built here (sums
  // and maxima are exact at every level, unlike a dominant state).
  const rows = D.rows.map((r, i) => {
    const states = bytesOf(D.summary.states[i]);
    const ev0 = new Uint16Array(bytesOf(D.summary.events[i]).buffer);
    const events = [Uint32Array.from(ev0)];
    for (let l = 1; l < LEVELS; ++l) {
      const prev = events[l - 1], next = new Uint32Array(prev.length >> 1);
      for (let b = 0; b < next.length; ++b) next[b] = prev[2 * b] + prev[2 * b + 1];
      events.push(next);
    }
    const counters = D.summary.counters[i].map((c) => {
      if (c === null) return null;
      const levels = [new Float32Array(bytesOf(c).buffer)];
      for (let l = 1; l < LEVELS; ++l) {
        const prev = levels[l - 1], next = new Float32Array(prev.length >> 1);
        for (let b = 0; b < next.length; ++b) next[b] = Math.max(prev[2 * b], prev[2 * b + 1]);
        levels.push(next);
      }
      return levels;
    });
    // The row's life: its first and last finest buckets with a state.
    let first = -1, last = -1;
    for (let b = 0; b < F; ++b) {
      if ((states[b] & 15) !== NO_STATE) {
        if (first < 0) first = b;
        last = b;
      }
    }
    return {
      name: r.name, rank: r.rank, thread: r.thread, states, events, counters,
      from: first < 0 ? Infinity : first * SPAN / F, to: last < 0 ? -Infinity : (last + 1) * SPAN / F,
      states0: 0, states1: 0, markers0: 0, markers1: 0, maxDur: 0, steps: [],
    };
  });

  function undelta(a) {
    const out = new Float64Array(a.length);
    let t = 0;
    for (let i = 0; i < a.length; ++i) out[i] = (t += a[i]);
    return out;
  }
  // Items are sorted by row, then time: each row's are one range.
  function ranges(rowOf, key0, key1) {
    let i = 0;
    rows.forEach((r, k) => {
      r[key0] = i;
      while (i < rowOf.length && rowOf[i] === k) ++i;
      r[key1] = i;
    });
  }
  const S = D.states;
  S.t = undelta(S.t);
  ranges(S.row, 'states0', 'states1');
  rows.forEach((r) => {
    for (let i = r.states0; i < r.states1; ++i) r.maxDur = Math.max(r.maxDur, S.dur[i]);
  });
  const M = D.markers;
  M.t = undelta(M.t);
  ranges(M.row, 'markers0', 'markers1');
  const G = D.messages;
  G.send = undelta(G.send);
  const P = D.steps;
  P.t = undelta(P.t);
  for (let i = 0; i < P.row.length; ++i) {
    const r = rows[P.row[i]];
    (r.steps[P.counter[i]] = r.steps[P.counter[i]] || []).push(i);
  }
  const coverage = D.coverage;
  // The highest value of each counter anywhere: lanes share a scale per counter.
  const counterMax = D.counters.map((_, c) => {
    let m = 0;
    rows.forEach((r) => {
      if (r.counters[c]) m = Math.max(m, r.counters[c][LEVELS - 1][0]);
      (r.steps[c] || []).forEach((i) => { m = Math.max(m, P.value[i]); });
    });
    return m;
  });

  // ---- formatting -------------------------------------------------------------------------

  function timeText(ns, digits) {
    const a = Math.abs(ns);
    const d = digits === undefined ? 3 : digits;
    if (a >= 1e9) return (ns / 1e9).toFixed(d) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(d) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(d) + ' \u00b5s';
    return ns.toFixed(0) + ' ns';
  }
  function rankText(r) { return r < 0 ? 'any' : String(r); }
  function eventColour(e) {
    return 'hsl(' + ((e * 157) % 360) + ',70%,' + (e % 2 ? 38 : 48) + '%)';
  }
  const kindColour = D.kinds.map((k) => k.colour);

  // ---- the page's elements ----------------------------------------------------------------

  const canvas = document.getElementById('tl-canvas');
  const box = document.getElementById('tl-canvas-box');
  const labels = document.getElementById('tl-labels');
  const tip = document.getElementById('tl-tip');
  const selection = document.getElementById('tl-selection');
  const statusLine = document.getElementById('tl-status');
  const ctx = canvas.getContext('2d');
  // Counter lanes take room: shown at first for a few rows only.
  const show = { messages: true, physical: false, markers: true,
    counters: D.counters.map(() => D.rows.length <= 8), events: D.events.map(() => true) };

  function checkbox(parent, text, checked, onChange, attrs) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = checked;
    input.addEventListener('change', () => onChange(input.checked));
    label.appendChild(input);
    label.appendChild(document.createTextNode(' ' + text));
    Object.entries(attrs || {}).forEach(([k, v]) => label.setAttribute(k, v));
    parent.appendChild(label);
    return label;
  }
  function button(parent, text, title, onClick) {
    const b = document.createElement('button');
    b.textContent = text;
    b.title = title;
    b.addEventListener('click', onClick);
    parent.appendChild(b);
    return b;
  }

  const controls = document.getElementById('tl-controls');
  button(controls, 'whole trace', 'show the whole trace (Home)', () => setView(0, SPAN, true));
  button(controls, 'back', 'the previous view (Backspace)', () => back());
  button(controls, 'zoom in', 'zoom in around the middle (+)', () => zoomAt(0.5, 0.5));
  button(controls, 'zoom out', 'zoom out around the middle (-)', () => zoomAt(0.5, 2));
  checkbox(controls, 'message lines', show.messages, (v) => { show.messages = v; draw(); },
    { id: 'tl-show-messages' });
  checkbox(controls, 'physical transfers (REQ_XFER_BEGIN \u2192 REQ_XFER_END)', show.physical,
    (v) => { show.physical = v; draw(); }, { id: 'tl-show-physical' });
  checkbox(controls, 'Peruse markers', show.markers, (v) => { show.markers = v; draw(); },
    { id: 'tl-show-markers' });
  D.counters.forEach((name, c) => {
    if (counterMax[c] > 0) {
      checkbox(controls, name, show.counters[c], (v) => { show.counters[c] = v; layout(); draw(); },
        { 'data-counter': name });
    }
  });

  const legend = document.getElementById('tl-legend');
  const legendStates = document.createElement('div');
  D.kinds.forEach((k, i) => {
    const used = rows.some((r) => {
      for (let b = 0; b < F; ++b) if ((r.states[b] & 15) === i) return true;
      return false;
    });
    if (!used && i !== OUTSIDE) return;
    const span = document.createElement('span');
    span.className = 'tl-item';
    span.innerHTML = '<i class="tl-swatch"></i>';
    span.firstChild.style.background = k.colour;
    span.appendChild(document.createTextNode(k.name));
    legendStates.appendChild(span);
  });
  legend.appendChild(legendStates);
  const legendEvents = document.createElement('div');
  const eventCount = D.events.map(() => null);
  D.events.forEach((name, e) => {
    const label = checkbox(legendEvents, '', true, (v) => { show.events[e] = v; draw(); },
      { 'class': 'tl-item', 'data-event': name });
    const sw = document.createElement('i');
    sw.className = 'tl-swatch';
    sw.style.background = eventColour(e);
    label.insertBefore(sw, label.lastChild);
    label.appendChild(document.createTextNode(name + ' '));
    const n = document.createElement('span');
    n.className = 'tl-count';
    label.appendChild(n);
    eventCount[e] = n;
  });
  if (D.events.length) legend.appendChild(legendEvents);

  // ---- layout -----------------------------------------------------------------------------

  const AXIS = 22;
  let barH = 18, laneH = 16, GAP = 4;
  let laid = [];  // per row: {y, lanes: [{counter, y}]}
  let height = 0, width = 0;
  function layout() {
    const n = rows.length;
    barH = Math.max(4, Math.min(18, Math.floor(3000 / Math.max(n, 1))));
    laneH = Math.max(4, Math.min(16, barH));
    GAP = barH >= 10 ? 4 : 1;
    let y = AXIS + 2;
    labels.textContent = '';
    laid = rows.map((r, i) => {
      const entry = { y, lanes: [] };
      const label = document.createElement('div');
      label.className = 'tl-label';
      label.dataset.row = i;
      label.textContent = r.name;
      label.title = r.name;
      label.style.top = y + 'px';
      label.style.lineHeight = barH + 'px';
      label.style.fontSize = Math.min(12, barH) + 'px';
      labels.appendChild(label);
      entry.label = label;
      y += barH;
      D.counters.forEach((name, c) => {
        if (!show.counters[c] || (!r.counters[c] && !r.steps[c])) return;
        const lane = document.createElement('div');
        lane.className = 'tl-label tl-lane';
        lane.dataset.lane = c;
        lane.dataset.row = i;
        lane.textContent = name;
        lane.style.top = (y + 1) + 'px';
        lane.style.lineHeight = laneH + 'px';
        labels.appendChild(lane);
        entry.lanes.push({ counter: c, y: y + 1 });
        y += laneH + 1;
      });
      y += GAP;
      return entry;
    });
    height = y + 2;
    resize();
  }
  function resize() {
    width = Math.max(200, box.clientWidth);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    labels.style.height = height + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  // ---- the view ---------------------------------------------------------------------------

  let v0 = 0, v1 = SPAN;
  const history = [];
  let highlightRank = -1;
  function setView(a, b, remember) {
    if (remember) history.push([v0, v1]);
    const w = Math.max(b - a, 20);
    const mid = (a + b) / 2;
    a = mid - w / 2;
    b = mid + w / 2;
    const slack = SPAN * 0.05;
    if (a < -slack) { b += -slack - a; a = -slack; }
    if (b > SPAN + slack) { a -= b - SPAN - slack; b = SPAN + slack; }
    v0 = Math.max(a, -slack);
    v1 = b;
    draw();
  }
  function back() {
    if (history.length) {
      const [a, b] = history.pop();
      setView(a, b, false);
    }
  }
  function zoomAt(fraction, factor) {
    const t = v0 + fraction * (v1 - v0);
    setView(t - (t - v0) * factor, t + (v1 - t) * factor, false);
  }
  function X(t) { return (t - v0) / (v1 - v0) * width; }
  function T(x) { return v0 + x / width * (v1 - v0); }

  // ---- drawing ----------------------------------------------------------------------------

  function levelFor(nsPerPixel) {
    const l = Math.floor(Math.log2(nsPerPixel * F / SPAN));
    return Math.max(0, Math.min(LEVELS - 1, isFinite(l) ? l : 0));
  }
  // The parts of [a, b] the kept detail covers.
  function covered(a, b) {
    const out = [];
    coverage.forEach(([c0, c1]) => {
      if (c1 >= a && c0 <= b) out.push([Math.max(a, c0), Math.min(b, c1), c0]);
    });
    return out;
  }
  function firstAtOrAfter(arr, lo, hi, t) {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function drawAxis() {
    ctx.fillStyle = '#f7f7f7';
    ctx.fillRect(0, 0, width, AXIS);
    ctx.strokeStyle = '#ccc';
    ctx.beginPath();
    ctx.moveTo(0, AXIS + 0.5);
    ctx.lineTo(width, AXIS + 0.5);
    ctx.stroke();
    const ns = v1 - v0;
    const raw = ns / Math.max(1, width / 110);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || 10 * p;
    // One unit for every label, from the view's end; as many digits as the step needs in it.
    const far = Math.max(Math.abs(v0), Math.abs(v1));
    const [unit, unitName] = far >= 1e9 ? [1e9, ' s'] : far >= 1e6 ? [1e6, ' ms'] :
      far >= 1e3 ? [1e3, ' \u00b5s'] : [1, ' ns'];
    const digits = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / unit) - 1e-9)));
    ctx.fillStyle = '#333';
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = Math.round(X(t)) + 0.5;
      ctx.strokeStyle = '#999';
      ctx.beginPath();
      ctx.moveTo(x, AXIS - 6);
      ctx.lineTo(x, AXIS);
      ctx.stroke();
      ctx.strokeStyle = 'rgba(0,0,0,0.06)';
      ctx.beginPath();
      ctx.moveTo(x, AXIS);
      ctx.lineTo(x, height);
      ctx.stroke();
      ctx.fillText((t / unit).toFixed(digits) + unitName, x + 3, AXIS / 2 - 2);
    }
  }

  // The summary's states of row r over [a, b] at `level`.
  function drawSummaryStates(r, y, a, b, level) {
    const nb = F >> level, bw = SPAN / nb, st = r.states, off = levelOffset[level];
    const b0 = Math.max(0, Math.floor(a / bw)), b1 = Math.min(nb - 1, Math.floor(b / bw));
    const xa = X(a), xb = X(b);
    let run = b0, kind = st[off + b0] & 15;
    for (let k = b0 + 1; k <= b1 + 1; ++k) {
      const v = k <= b1 ? st[off + k] & 15 : -1;
      if (v === kind) continue;
      if (kind !== NO_STATE) {
        const x0 = Math.max(xa, X(run * bw)), x1 = Math.min(xb, X(k * bw));
        ctx.fillStyle = kindColour[kind];
        ctx.fillRect(x0, y, Math.max(1, x1 - x0), barH);
      }
      run = k;
      kind = v;
    }
  }
  function drawDensity(r, y, a, b, level) {
    const nb = F >> level, bw = SPAN / nb, ev = r.events[level];
    const b0 = Math.max(0, Math.floor(a / bw)), b1 = Math.min(nb - 1, Math.floor(b / bw));
    const h = Math.max(2, Math.floor(barH / 5));
    for (let k = b0; k <= b1; ++k) {
      if (!ev[k]) continue;
      const x0 = Math.max(X(a), X(k * bw)), x1 = Math.min(X(b), X((k + 1) * bw));
      ctx.fillStyle = 'rgba(40,40,40,' + Math.min(0.9, 0.2 + Math.log10(ev[k]) / 5) + ')';
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
    }
  }
  function drawDetailStates(r, y, a, b) {
    if (r.to > a && r.from < b) {
      ctx.fillStyle = kindColour[OUTSIDE];
      const x0 = X(Math.max(a, r.from)), x1 = X(Math.min(b, r.to));
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), barH);
    }
    const i0 = firstAtOrAfter(S.t, r.states0, r.states1, a - r.maxDur);
    const lastPixel = [];
    for (let i = i0; i < r.states1 && S.t[i] <= b; ++i) {
      const s = S.t[i], e = s + S.dur[i];
      if (e < a) continue;
      const d = S.depth[i];
      const x0 = X(Math.max(s, a)), x1 = X(Math.min(e, b));
      const px = Math.floor(x0);
      if (x1 - x0 < 1 && lastPixel[d] === px) continue;
      lastPixel[d] = px;
      const kind = regionKind[S.region[i]];
      ctx.fillStyle = kindColour[kind];
      const inset = Math.min(d * 3, barH / 2 - 1);
      ctx.fillRect(x0, y + inset, Math.max(1, x1 - x0), barH - 2 * inset);
    }
  }
  // Each region's kind, from the states that name it (the summary has no regions).
  const regionKind = new Uint8Array(D.regions.length);
  D.region_kinds.forEach((k, i) => { regionKind[i] = k; });

  function drawMarkers(r, ri, y, a, b, counts) {
    const i0 = firstAtOrAfter(M.t, r.markers0, r.markers1, a);
    const lastPixel = new Int32Array(D.events.length).fill(-1);
    const h = Math.max(3, Math.floor(barH * 0.45));
    for (let i = i0; i < r.markers1 && M.t[i] <= b; ++i) {
      const e = M.event[i];
      counts[e]++;
      if (!show.markers || !show.events[e]) continue;
      const px = Math.floor(X(M.t[i]));
      if (lastPixel[e] === px) continue;
      lastPixel[e] = px;
      ctx.fillStyle = eventColour(e);
      ctx.fillRect(px, y + (e % 2 ? barH - h : 0), 2, h);
    }
  }
  function drawSummaryLane(r, c, y, a, b, level) {
    const lv = r.counters[c];
    if (!lv) return;
    const nb = F >> level, bw = SPAN / nb, v = lv[level], top = counterMax[c] || 1;
    const b0 = Math.max(0, Math.floor(a / bw)), b1 = Math.min(nb - 1, Math.floor(b / bw));
    ctx.fillStyle = laneColour[c];
    for (let k = b0; k <= b1; ++k) {
      if (!(v[k] > 0)) continue;
      const x0 = Math.max(X(a), X(k * bw)), x1 = Math.min(X(b), X((k + 1) * bw));
      const h = Math.max(1, laneH * v[k] / top);
      ctx.fillRect(x0, y + laneH - h, Math.max(1, x1 - x0), h);
    }
  }
  // The step function of a counter over [a, b], part of the kept detail that begins at `since`:
  // before the first step there, the value is what that step changed.
  function drawDetailLane(r, c, y, a, b, since) {
    const idx = r.steps[c];
    if (!idx || !idx.length) return;
    const top = counterMax[c] || 1;
    ctx.fillStyle = laneColour[c];
    let k = 0;
    while (k < idx.length && P.t[idx[k]] < a) ++k;
    let value = 0;
    if (k > 0 && P.t[idx[k - 1]] >= since) value = P.value[idx[k - 1]];
    else if (k < idx.length) value = P.before[idx[k]];
    let t = a;
    const bar = (t0, t1, v) => {
      if (v <= 0 || t1 <= t0) return;
      const x0 = X(t0), x1 = X(t1), h = Math.max(1, laneH * v / top);
      ctx.fillRect(x0, y + laneH - h, Math.max(1, x1 - x0), h);
    };
    for (; k < idx.length && P.t[idx[k]] <= b; ++k) {
      bar(t, P.t[idx[k]], value);
      t = P.t[idx[k]];
      value = P.value[idx[k]];
    }
    bar(t, Math.min(b, r.to), value);
  }
  const laneColour = ['#3a7bd5', '#d97a1c', '#4a9a4a'];

  // Lines are drawn once per pixel pair and rows; `drawn` keeps them for hovering.
  let drawnLines = [];
  function drawMessages(a, b, stats) {
    drawnLines = [];
    const seen = new Set();
    const rowY = (k) => laid[k].y + barH / 2;
    const inDetail = (t) => coverage.some(([c0, c1]) => t >= c0 && t <= c1);
    for (let i = 0; i < G.from.length; ++i) {
      const s = G.send[i], r = s + G.recv[i];
      const ps = s + G.xfer_begin[i], pr = r + G.xfer_end[i];
      const lo = Math.min(s, r, ps, pr), hi = Math.max(s, r, ps, pr);
      if (hi < a || lo > b || !inDetail(s) && !inDetail(r)) continue;
      stats.lines++;
      if (show.physical) stats.physical++;
      const pairs = [];
      if (show.messages) pairs.push([s, r, false]);
      if (show.physical) pairs.push([ps, pr, true]);
      pairs.forEach(([t0, t1, phys]) => {
        const x0 = Math.round(X(t0)), x1 = Math.round(X(t1));
        const key = x0 + ',' + x1 + ',' + G.from[i] + ',' + G.to[i] + ',' + phys;
        if (seen.has(key)) return;
        seen.add(key);
        const y0 = rowY(G.from[i]), y1 = rowY(G.to[i]);
        ctx.strokeStyle = phys ? '#e07000' : '#111';
        ctx.setLineDash(phys ? [4, 3] : []);
        ctx.lineWidth = phys ? 1.5 : 1;
        ctx.beginPath();
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1, y1);
        ctx.stroke();
        // An arrowhead at the receiving end.
        const ang = Math.atan2(y1 - y0, x1 - x0);
        ctx.setLineDash([]);
        ctx.beginPath();
        ctx.moveTo(x1, y1);
        ctx.lineTo(x1 - 6 * Math.cos(ang - 0.4), y1 - 6 * Math.sin(ang - 0.4));
        ctx.moveTo(x1, y1);
        ctx.lineTo(x1 - 6 * Math.cos(ang + 0.4), y1 - 6 * Math.sin(ang + 0.4));
        ctx.stroke();
        stats.drawn++;
        if (drawnLines.length < 20000) drawnLines.push([x0, y0, x1, y1, i, phys]);
      });
    }
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
  }

  let mode = '';
  let lastDrawMs = 0;
  function draw() {
    const started = performance.now();
    ctx.clearRect(0, 0, width, height);
    const nspp = (v1 - v0) / width;
    const level = levelFor(nspp);
    // Bars from the summary where a bucket is no wider than a pixel; detail otherwise.
    const summaryFine = SPAN / F <= nspp;
    const a = Math.max(v0, 0), b = Math.min(v1, SPAN);
    const parts = covered(a, b);
    const detailAll = parts.length === 1 && parts[0][0] <= a && parts[0][1] >= b;
    mode = summaryFine ? (parts.length ? 'summary, with the kept detail\'s markers and lines'
      : 'summary') : detailAll ? 'exact' : parts.length ? 'exact where kept, summary elsewhere'
      : 'summary (no detail kept here)';
    const counts = new Array(D.events.length).fill(0);
    rows.forEach((r, ri) => {
      const y = laid[ri].y;
      if (ri === highlightRank || r.rank === highlightRank) {
        ctx.fillStyle = 'rgba(255,200,0,0.25)';
        ctx.fillRect(0, y - GAP / 2, width, barH + GAP);
      }
      if (summaryFine || !detailAll) {
        drawSummaryStates(r, y, a, b, level);
        laid[ri].lanes.forEach((l) => drawSummaryLane(r, l.counter, l.y, a, b, level));
      }
      // Where detail was kept: exact states when zoomed in, markers always.
      let uncovered = [[a, b]];
      parts.forEach(([c0, c1, since]) => {
        if (!summaryFine) {
          ctx.clearRect(X(c0), y, Math.max(1, X(c1) - X(c0)), barH);
          drawDetailStates(r, y, c0, c1);
          laid[ri].lanes.forEach((l) => {
            ctx.clearRect(X(c0), l.y, Math.max(1, X(c1) - X(c0)), laneH);
            drawDetailLane(r, l.counter, l.y, c0, c1, since);
          });
        }
        drawMarkers(r, ri, y, c0, c1, counts);
        uncovered = uncovered.flatMap(([u0, u1]) => [[u0, Math.min(u1, c0)],
          [Math.max(u0, c1), u1]]).filter(([u0, u1]) => u1 > u0);
      });
      if (show.markers) uncovered.forEach(([u0, u1]) => drawDensity(r, y, u0, u1, level));
    });
    const stats = { lines: 0, physical: 0, drawn: 0 };
    drawMessages(a, b, stats);
    drawAxis();
    counts.forEach((n, e) => { eventCount[e].textContent = '(' + n + ')'; });
    const markers = counts.reduce((x, y) => x + y, 0);
    lastDrawMs = performance.now() - started;
    statusLine.dataset.from = Math.round(v0);
    statusLine.dataset.to = Math.round(v1);
    statusLine.dataset.mode = mode;
    statusLine.dataset.detail = detailAll ? 'all' : parts.length ? 'part' : 'none';
    statusLine.dataset.level = level;
    statusLine.dataset.lines = stats.lines;
    statusLine.dataset.markers = markers;
    statusLine.dataset.drawMs = lastDrawMs.toFixed(1);
    statusLine.textContent = timeText(v0, 6) + ' \u2013 ' + timeText(v1, 6) + ' (' +
      timeText(v1 - v0) + ') \u00b7 ' + mode + (summaryFine ? ' (bucket ' +
      timeText(SPAN * Math.pow(2, level) / F) + ')' : '') + ' \u00b7 ' + stats.lines +
      ' messages \u00b7 ' + markers + ' Peruse events in view \u00b7 drawn in ' +
      lastDrawMs.toFixed(1) + ' ms';
    laid.forEach((l, ri) => l.label.classList.toggle('tl-highlight',
      rows[ri].rank === highlightRank));
  }

  // ---- hovering ---------------------------------------------------------------------------

  function rowAt(y) {
    for (let i = 0; i < laid.length; ++i) {
      const l = laid[i];
      if (y >= l.y && y < l.y + barH) return { row: i };
      for (const lane of l.lanes)
        if (y >= lane.y && y < lane.y + laneH) return { row: i, lane: lane.counter };
    }
    return null;
  }
  function inCoverage(t) { return coverage.some(([c0, c1]) => t >= c0 && t <= c1); }
  function markerText(i) {
    const e = M.event[i], comm = M.comm[i];
    return D.events[e] + ' at ' + timeText(M.t[i], 6) + '\nrequest ' + M.request[i] +
      '\npeer ' + rankText(M.peer[i]) + ', tag ' + M.tag[i] + ', ' + M.bytes[i] + ' bytes' +
      '\n' + (M.op[i] ? 'receive' : 'send') + (comm >= 0 ? ', ' + (D.comms[comm] || 'comm ' +
      comm) : '');
  }
  function describe(x, y) {
    const at = rowAt(y);
    const t = T(x);
    const near = (x1, y1, x2, y2) => {
      const dx = x2 - x1, dy = y2 - y1, len = dx * dx + dy * dy;
      const u = len ? Math.max(0, Math.min(1, ((x - x1) * dx + (y - y1) * dy) / len)) : 0;
      return Math.hypot(x - x1 - u * dx, y - y1 - u * dy) <= 3;
    };
    for (const [x0, y0, x1, y1, i, phys] of drawnLines) {
      if (!near(x0, y0, x1, y1)) continue;
      const s = G.send[i], r = s + G.recv[i];
      return 'message ' + rows[G.from[i]].name + ' \u2192 ' + rows[G.to[i]].name + ', tag ' +
        G.tag[i] + ', ' + G.bytes[i] + ' bytes\nlogical: sent ' + timeText(s, 6) +
        ', received ' + timeText(r, 6) + ' (' + timeText(r - s) + ')\nphysical: ' +
        timeText(s + G.xfer_begin[i], 6) + ' \u2192 ' + timeText(r + G.xfer_end[i], 6) +
        ' (' + timeText(r + G.xfer_end[i] - s - G.xfer_begin[i]) + ')' +
        (phys ? '' : '');
    }
    if (!at) return null;
    const r = rows[at.row];
    const nspp = (v1 - v0) / width;
    const level = levelFor(nspp);
    const nb = F >> level, bw = SPAN / nb;
    const k = Math.max(0, Math.min(nb - 1, Math.floor(t / bw)));
    if (at.lane !== undefined) {
      const c = at.lane, idx = r.steps[c] || [];
      if (inCoverage(t) && idx.length && SPAN / F > nspp) {
        let value = P.before[idx[0]];
        for (const i of idx) { if (P.t[i] > t) break; value = P.value[i]; }
        return r.name + ': ' + D.counters[c] + ' ' + value + ' at ' + timeText(t, 6);
      }
      const v = r.counters[c] ? r.counters[c][level][k] : 0;
      return r.name + ': ' + D.counters[c] + ' at most ' + v + ' in ' + timeText(k * bw, 6) +
        ' \u2013 ' + timeText((k + 1) * bw, 6);
    }
    if (inCoverage(t)) {
      // The nearest marker within 3 pixels.
      const i0 = firstAtOrAfter(M.t, r.markers0, r.markers1, T(x - 3));
      let best = -1;
      for (let i = i0; i < r.markers1 && M.t[i] <= T(x + 3); ++i) {
        if (!show.markers || !show.events[M.event[i]]) continue;
        if (best < 0 || Math.abs(M.t[i] - t) < Math.abs(M.t[best] - t)) best = i;
      }
      if (best >= 0) return r.name + ': ' + markerText(best);
      let call = -1;
      const j0 = firstAtOrAfter(S.t, r.states0, r.states1, t - r.maxDur);
      for (let i = j0; i < r.states1 && S.t[i] <= t; ++i)
        if (S.t[i] + S.dur[i] >= t && (call < 0 || S.depth[i] >= S.depth[call])) call = i;
      if (call >= 0) {
        return r.name + ': ' + D.regions[S.region[call]] + '\n' + timeText(S.t[call], 6) +
          ' \u2013 ' + timeText(S.t[call] + S.dur[call], 6) + ' (' + timeText(S.dur[call]) +
          (S.open[call] ? ', goes on past the kept detail' : '') + ')' +
          (S.calls[call] > 1 ? '\n' + S.calls[call] + ' unsuccessful polls folded, ' +
            timeText(S.inside[call]) + ' of it inside MPI' : '');
      }
      if (SPAN / F > nspp) return r.name + ': outside MPI at ' + timeText(t, 6);
    }
    const v = r.states[levelOffset[level] + k];
    if ((v & 15) === NO_STATE) return r.name + ': no events at ' + timeText(t, 6);
    return r.name + ', ' + timeText(k * bw, 6) + ' \u2013 ' + timeText((k + 1) * bw, 6) +
      ':\nmostly ' + D.kinds[v & 15].name + ', ' + Math.round(100 * (v >> 4) / 15) +
      '% in MPI, ' + r.events[level][k] + ' Peruse events';
  }

  // ---- interaction ------------------------------------------------------------------------

  let drag = null;
  canvas.addEventListener('mousedown', (e) => {
    canvas.focus();
    const pan = e.button === 1 || e.shiftKey || e.ctrlKey || e.altKey;
    drag = { x: e.offsetX, v0, v1, pan };
    if (pan) canvas.classList.add('tl-panning');
    e.preventDefault();
  });
  window.addEventListener('mousemove', (e) => {
    if (drag) {
      const x = e.clientX - canvas.getBoundingClientRect().left;
      if (drag.pan) {
        const dt = (x - drag.x) / width * (drag.v1 - drag.v0);
        v0 = drag.v0 - dt;
        v1 = drag.v1 - dt;
        draw();
      } else {
        const lo = Math.max(0, Math.min(x, drag.x)), hi = Math.min(width, Math.max(x, drag.x));
        selection.hidden = false;
        selection.style.left = lo + 'px';
        selection.style.width = (hi - lo) + 'px';
      }
    }
  });
  window.addEventListener('mouseup', (e) => {
    if (!drag) return;
    const x = e.clientX - canvas.getBoundingClientRect().left;
    const d = drag;
    drag = null;
    canvas.classList.remove('tl-panning');
    selection.hidden = true;
    if (!d.pan && Math.abs(x - d.x) > 3) {
      const lo = Math.min(x, d.x), hi = Math.max(x, d.x);
      setView(T(Math.max(0, lo)), T(Math.min(width, hi)), true);
    } else if (d.pan && (d.v0 !== v0)) {
      history.push([d.v0, d.v1]);
    }
  });
  canvas.addEventListener('mousemove', (e) => {
    if (drag) return;
    const text = describe(e.offsetX, e.offsetY);
    if (!text) {
      tip.hidden = true;
      return;
    }
    tip.textContent = text;
    tip.hidden = false;
    const left = e.offsetX + 14;
    tip.style.left = Math.min(left, Math.max(0, width - tip.offsetWidth - 4)) + 'px';
    tip.style.top = (e.offsetY + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const dx = e.deltaX, dy = e.deltaY;
    if (e.shiftKey || Math.abs(dx) > Math.abs(dy)) {
      const dt = (e.shiftKey ? dy || dx : dx) / width * (v1 - v0);
      setView(v0 + dt, v1 + dt, false);
    } else {
      zoomAt(e.offsetX / width, Math.exp(dy * (e.deltaMode === 1 ? 0.05 : 0.002)));
    }
  }, { passive: false });
  canvas.addEventListener('dblclick', () => setView(0, SPAN, true));
  canvas.addEventListener('keydown', (e) => {
    const w = v1 - v0;
    const keys = {
      ArrowLeft: () => setView(v0 - w / 10, v1 - w / 10, false),
      ArrowRight: () => setView(v0 + w / 10, v1 + w / 10, false),
      '+': () => zoomAt(0.5, 0.5), '=': () => zoomAt(0.5, 0.5), '-': () => zoomAt(0.5, 2),
      Home: () => setView(0, SPAN, true), Backspace: () => back(),
    };
    if (keys[e.key]) {
      keys[e.key]();
      e.preventDefault();
    }
  });
  window.addEventListener('resize', () => { resize(); draw(); });

  // ---- the occurrence tables --------------------------------------------------------------

  function cellText(v, type) {
    if (type === 'duration') return timeText(v);
    if (type === 'time') return timeText(v, 6);
    if (type === 'rank') return rankText(v);
    return String(v);
  }
  function jump(from, to, rank, tr) {
    document.querySelectorAll('.tl-table tr.tl-current').forEach((x) =>
      x.classList.remove('tl-current'));
    if (tr) tr.classList.add('tl-current');
    highlightRank = rank;
    setView(from, to, true);
    document.getElementById('timeline').scrollIntoView({ block: 'nearest' });
  }
  const tablesBox = document.getElementById('tl-tables');
  D.tables.forEach((t) => {
    const h = document.createElement('h3');
    h.textContent = t.title;
    tablesBox.appendChild(h);
    if (t.note || !t.rows.length) {
      const p = document.createElement('p');
      p.className = 'tl-note';
      p.textContent = t.note || 'none found';
      tablesBox.appendChild(p);
      if (t.note) return;
    }
    if (!t.rows.length) return;
    const table = document.createElement('table');
    table.className = 'tl-table';
    table.id = 'table-' + t.id;
    const head = table.createTHead().insertRow();
    t.columns.forEach((c, ci) => {
      const th = document.createElement('th');
      th.textContent = c.name;
      th.title = 'sort by ' + c.name;
      th.addEventListener('click', () => sortTable(table, t, ci, th));
      head.appendChild(th);
    });
    const body = table.createTBody();
    t.rows.forEach((row, ri) => {
      const tr = body.insertRow();
      tr.dataset.index = ri;
      tr.dataset.from = row.view[0];
      tr.dataset.to = row.view[1];
      tr.dataset.rank = row.rank;
      tr.title = 'show it on the timeline';
      row.cells.forEach((v, ci) => {
        const td = tr.insertCell();
        td.textContent = cellText(v, t.columns[ci].type);
        td.dataset.value = v;
      });
      tr.addEventListener('click', () => jump(row.view[0], row.view[1], row.rank, tr));
    });
    tablesBox.appendChild(table);
  });
  function sortTable(table, t, ci, th) {
    const descending = th.getAttribute('aria-sort') !== 'descending';
    table.querySelectorAll('th').forEach((x) => x.removeAttribute('aria-sort'));
    th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
    const body = table.tBodies[0];
    const trs = Array.from(body.rows);
    const text = t.columns[ci].type === 'text';
    trs.sort((x, y) => {
      const a = x.cells[ci].dataset.value, b = y.cells[ci].dataset.value;
      const c = text ? a.localeCompare(b) : Number(a) - Number(b);
      return descending ? -c : c;
    });
    trs.forEach((tr) => body.appendChild(tr));
  }

  // ---- start ------------------------------------------------------------------------------

  layout();
  draw();
  statusLine.dataset.loadMs = performance.now().toFixed(1);
  const summaryNote = document.getElementById('tl-kept');
  summaryNote.textContent = D.complete ? 'Every event of the trace is shown exactly (' +
    D.items_kept + ' items).' : 'The trace has ' + D.items_seen + ' items; ' + D.items_kept +
    ' are kept in detail: the start and end of the trace and a window around each ' +
    'occurrence in the tables below (click a row to see it). Elsewhere each pixel shows the ' +
    'state its row spent most of that time in.';
  window.perusetraceTimeline = {
    view: () => [v0, v1],
    setView: (a, b) => setView(a, b, true),
    draw: () => { draw(); return lastDrawMs; },
    jump: (table, index) => {
      const tr = document.querySelector('#table-' + table + ' tbody tr[data-index="' + index +
        '"]');
      if (tr) tr.click();
      return !!tr;
    },
  };
})();
