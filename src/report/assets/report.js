// memloupe HTML report: reads the JSON in #memloupe-data (written by
// src/report/html_data.cc) and draws the timeline, the flame graph and the
// tables. No libraries, no network.
//
// Data model (see html_data.h):
//   nodes   flat [parent, name, where, other] per node; node 0 is the root and
//           every node comes after its parent
//   sites   {n: node, t: [alloc B, alloc N, live B, live N, peak B, peak N, leak B, leak N],
//            b: [bucket, alloc B, alloc N, freed B, freed N, leaked B, leaked N, ...]}
// A time range is a closed range of buckets [b0, b1]; every number shown is
// recomputed from the buckets in it.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('memloupe-data').textContent);
  const S = D.strings;
  const NODES = D.nodes.length / 4;
  const B = D.buckets;
  const parent = new Int32Array(NODES), nameOf = [], whereOf = [], otherNode = [];
  for (let i = 0; i < NODES; i++) {
    parent[i] = D.nodes[4 * i];
    nameOf.push(S[D.nodes[4 * i + 1]]);
    whereOf.push(S[D.nodes[4 * i + 2]]);
    otherNode.push(D.nodes[4 * i + 3] === 1);
  }
  const children = Array.from({ length: NODES }, () => []);
  for (let i = 1; i < NODES; i++) children[parent[i]].push(i);

  // Each site's live bytes/objects at the end of every bucket (prefix sums of
  // allocated - freed), and the whole heap's, for "live at the range's peak".
  const liveB = D.sites.map(() => new Float64Array(B));
  const liveN = D.sites.map(() => new Float64Array(B));
  const heapAt = new Float64Array(B);
  D.sites.forEach((site, s) => {
    const b = site.b;
    for (let k = 0; k < b.length; k += 7) {
      liveB[s][b[k]] += b[k + 1] - b[k + 3];
      liveN[s][b[k]] += b[k + 2] - b[k + 4];
    }
    for (let i = 1; i < B; i++) { liveB[s][i] += liveB[s][i - 1]; liveN[s][i] += liveN[s][i - 1]; }
    for (let i = 0; i < B; i++) heapAt[i] += liveB[s][i];
  });

  const state = { metric: 'allocated', range: null, zoom: 0, search: null };
  let values = null;  // per site: {allocated:[B,N], peak:[B,N], leaked:[B,N]} for the current range

  // ---------------------------------------------------------------- numbers
  function computeValues() {
    const r = state.range;
    let peakBucket = -1, peakTime = D.peak[0], peakBytes = D.peak[1];
    if (r) {
      for (let i = r[0]; i <= r[1]; i++) if (peakBucket < 0 || heapAt[i] > heapAt[peakBucket]) peakBucket = i;
      peakTime = Math.min((peakBucket + 1) * D.bucket_ns, D.info.duration_ns);
      peakBytes = peakBucket >= 0 ? heapAt[peakBucket] : 0;
    }
    const per = D.sites.map((site, s) => {
      if (!r) {
        const t = site.t;
        return { allocated: [t[0], t[1]], peak: [t[4], t[5]], leaked: [t[6], t[7]] };
      }
      const v = { allocated: [0, 0], peak: [liveB[s][peakBucket], liveN[s][peakBucket]], leaked: [0, 0] };
      const b = site.b;
      for (let k = 0; k < b.length; k += 7) {
        if (b[k] < r[0] || b[k] > r[1]) continue;
        v.allocated[0] += b[k + 1]; v.allocated[1] += b[k + 2];
        v.leaked[0] += b[k + 5]; v.leaked[1] += b[k + 6];
      }
      return v;
    });
    return { per, peakTime, peakBytes };
  }

  function metricOf(v, metric) {
    if (metric === 'count') return v.allocated[1];
    return Math.max(0, v[metric][0]);
  }

  function totals() {
    const t = { allocated: [0, 0], peak: [0, 0], leaked: [0, 0] };
    for (const v of values.per) for (const k in t) { t[k][0] += v[k][0]; t[k][1] += v[k][1]; }
    return t;
  }

  // ---------------------------------------------------------------- formatting
  function fmtBytes(b) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    b = Math.max(0, b);
    while (b >= 1024 && i < units.length - 1) { b /= 1024; i++; }
    return (i === 0 ? Math.round(b) : b.toFixed(b < 10 ? 2 : b < 100 ? 1 : 0)) + ' ' + units[i];
  }
  function fmtCount(n) {
    n = Math.max(0, n);
    return n >= 1e6 ? (n / 1e6).toFixed(2) + ' M' : n >= 1e4 ? (n / 1e3).toFixed(1) + ' k' : String(Math.round(n));
  }
  function fmtTime(ns) {
    const s = ns / 1e9;
    return s >= 10 ? s.toFixed(1) + ' s' : s >= 1 ? s.toFixed(2) + ' s' : ns >= 1e6 ? (ns / 1e6).toFixed(1) + ' ms'
      : (ns / 1e3).toFixed(0) + ' µs';
  }
  function fmtMetric(x, metric) { return metric === 'count' ? fmtCount(x) + ' allocs' : fmtBytes(x); }
  // C++ names are long: labels drop template arguments and parameter lists
  // ("std::vector<int>::push_back(int const&)" -> "std::vector<…>::push_back()");
  // tooltips and titles keep the full name.
  function shortName(name) {
    let out = '', depth = 0;
    for (let i = 0; i < name.length; i++) {
      const c = name[i];
      if (c === '<' && !/operator<?$/.test(out)) { if (depth++ === 0) out += '<…>'; continue; }
      if (c === '>' && depth > 0) { depth--; continue; }
      if (depth === 0) out += c;
    }
    // Then the parameters: from the first '(' that opens a non-empty list (names
    // cut at 200 bytes may have lost their closing parenthesis).
    const anon = '(anonymous namespace)';
    const t = out.split(anon).join('\u0001');
    const p = t.search(/\((?!\))/);
    return (p > 0 ? t.slice(0, p) + '()' : t).split('\u0001').join(anon);
  }
  const el = (id) => document.getElementById(id);
  function text(tag, content, cls) {
    const e = document.createElement(tag);
    e.textContent = content;
    if (cls) e.className = cls;
    return e;
  }

  // ---------------------------------------------------------------- info and summary
  function drawInfo() {
    const i = D.info;
    const mode = i.mode === 'all' ? 'every call' : 'sampled, 1 per ' + fmtBytes(i.bytes_per_sample) + ' (estimates)';
    const rows = [['program', i.argv || i.executable], ['pid', i.pid], ['host', i.host], ['recorded', mode],
      ['duration', fmtTime(i.duration_ns)], ['events', fmtCount(i.events)],
      ['started', i.start_wall_ns ? new Date(i.start_wall_ns / 1e6).toISOString().replace('T', ' ').slice(0, 19) + ' UTC' : '?']];
    if (i.source_format) rows.push(['from', i.source_format]);
    const dl = el('info');
    for (const [k, v] of rows) {
      const d = document.createElement('div');
      d.append(text('dt', k), text('dd', String(v)));
      dl.append(d);
    }
    document.title = 'memloupe: ' + (i.executable || 'report');
    el('footer').textContent = 'memloupe report · ' + i.sites + ' allocation sites, ' + D.nodes_total +
      ' call-tree nodes; the page keeps the ' + (NODES - 1) + ' largest (the rest are merged into [other]) and ' +
      B + ' time buckets of ' + fmtTime(D.bucket_ns) + '.';
  }

  function drawSummary() {
    const t = totals();
    const box = el('summary');
    box.replaceChildren();
    const stat = (label, value, detail, id) => {
      const d = document.createElement('div');
      d.className = 'stat';
      d.append(text('span', label, 'label'));
      const v = text('span', value, 'value');
      v.id = id;
      d.append(v, text('span', detail, 'detail'));
      box.append(d);
    };
    stat(state.range ? 'allocated in range' : 'allocated', fmtBytes(t.allocated[0]), fmtCount(t.allocated[1]) + ' blocks', 'sum-allocated');
    stat(state.range ? 'live at the range\'s peak' : 'live at peak', fmtBytes(values.peakBytes),
      'at ' + fmtTime(values.peakTime), 'sum-peak');
    stat(state.range ? 'leaked, allocated in range' : 'leaked (live at exit)', fmtBytes(t.leaked[0]), fmtCount(t.leaked[1]) + ' blocks', 'sum-leaked');
    const r = state.range;
    box.append(text('span', r ? 'range ' + fmtTime(r[0] * D.bucket_ns) + ' – ' +
      fmtTime(Math.min((r[1] + 1) * D.bucket_ns, D.info.duration_ns)) : 'whole trace', 'range'));
    box.lastChild.id = 'sum-range';
  }

  // ---------------------------------------------------------------- tables
  function pathOf(n) {
    const p = [];
    for (; n !== 0; n = parent[n]) p.push(nameOf[n]);
    return p.reverse().join(' → ');
  }
  function siteLabel(n) { return otherNode[n] ? '[other] under ' + nameOf[parent[n]] : nameOf[n]; }

  // Tables name a site by its innermost frame in the program's own code: the
  // nearest frame (from the allocation outwards) whose file is not under /usr/
  // (the compiler's and the system's headers and libraries), or the innermost
  // frame if there is none. Sites with the same such frame share a row.
  const ownFrame = new Int32Array(NODES);
  for (let n = 0; n < NODES; n++) {
    let a = n;
    while (a !== 0 && (otherNode[a] || !whereOf[a] || whereOf[a].startsWith('/usr/'))) a = parent[a];
    ownFrame[n] = a === 0 ? n : a;
  }

  function drawTable(id, metric) {
    const table = el(id);
    table.replaceChildren();
    const head = document.createElement('tr');
    head.append(text('th', 'site (innermost frame)'), text('th', 'bytes', 'num'), text('th', 'blocks', 'num'), text('th', '%', 'num'));
    table.append(head);
    const total = totals()[metric][0];
    const grouped = new Map();  // row node -> [bytes, blocks, innermost site node]
    values.per.forEach((v, s) => {
      if (!(v[metric][0] > 0)) return;
      const leaf = D.sites[s].n, row = ownFrame[leaf];
      const g = grouped.get(row) || [0, 0, leaf];
      g[0] += v[metric][0];
      g[1] += v[metric][1];
      grouped.set(row, g);
    });
    const rows = [...grouped.entries()].sort((a, b) => b[1][0] - a[1][0]).slice(0, 12);
    if (!rows.length) {
      const tr = document.createElement('tr');
      const td = text('td', 'nothing in this range', 'empty');
      td.colSpan = 4;
      tr.append(td);
      table.append(tr);
    }
    for (const [n, v] of rows) {
      const tr = document.createElement('tr');
      const fn = text('td', shortName(siteLabel(n)), 'fn');
      if (whereOf[n]) fn.append(text('span', ' ' + whereOf[n].replace(/^.*\//, ''), 'where'));
      if (v[2] !== n) fn.append(text('div', 'via ' + shortName(nameOf[v[2]]), 'via'));
      fn.title = pathOf(v[2]);
      tr.append(fn, text('td', fmtBytes(v[0]), 'num'), text('td', fmtCount(v[1]), 'num'),
        text('td', total > 0 ? (100 * v[0] / total).toFixed(1) : '0', 'num'));
      table.append(tr);
    }
  }

  // ---------------------------------------------------------------- canvases
  function setupCanvas(canvas, cssHeight) {
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth || canvas.parentElement.clientWidth || 800;
    canvas.style.height = cssHeight + 'px';
    canvas.width = Math.round(w * ratio);
    canvas.height = Math.round(cssHeight * ratio);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    return { ctx, w, h: cssHeight };
  }

  // ---------------------------------------------------------------- timeline
  const TL = { left: 64, right: 12, top: 12, bottom: 22, drag: null };
  const curve = (flat) => { const p = []; for (let i = 0; i < flat.length; i += 2) p.push([flat[i], flat[i + 1]]); return p; };
  const heapCurve = curve(D.heap), rssCurve = curve(D.rss);
  const markers = []; for (let i = 0; i < D.markers.length; i += 2) markers.push([D.markers[i], D.markers[i + 1]]);
  let tlGeom = null;

  function drawTimeline() {
    const canvas = el('timeline');
    const { ctx, w, h } = setupCanvas(canvas, 200);
    const dur = Math.max(D.info.duration_ns, 1);
    let ymax = D.peak[1];
    for (const [, v] of rssCurve) ymax = Math.max(ymax, v);
    for (const [, v] of heapCurve) ymax = Math.max(ymax, v);
    ymax = ymax > 0 ? ymax * 1.08 : 1;
    const pw = w - TL.left - TL.right, ph = h - TL.top - TL.bottom;
    const X = (t) => TL.left + (t / dur) * pw, Y = (v) => TL.top + ph - (v / ymax) * ph;
    tlGeom = { X, dur, pw };
    ctx.clearRect(0, 0, w, h);
    ctx.font = '11px system-ui, sans-serif';
    ctx.fillStyle = '#6a737d';
    ctx.strokeStyle = '#eceae4';
    for (let k = 0; k <= 4; k++) {
      const v = (ymax / 1.08) * k / 4, y = Y(v);
      ctx.beginPath(); ctx.moveTo(TL.left, y); ctx.lineTo(w - TL.right, y); ctx.stroke();
      ctx.textAlign = 'right'; ctx.fillText(fmtBytes(v), TL.left - 6, y + 4);
    }
    for (let k = 0; k <= 5; k++) {
      ctx.textAlign = k === 0 ? 'left' : k === 5 ? 'right' : 'center';
      ctx.fillText(k === 0 ? '0' : fmtTime(dur * k / 5), X(dur * k / 5), h - 6);
    }
    // The selected range, snapped to buckets.
    if (state.range) {
      const x0 = X(state.range[0] * D.bucket_ns), x1 = X(Math.min((state.range[1] + 1) * D.bucket_ns, dur));
      ctx.fillStyle = 'rgba(59, 115, 185, 0.16)';
      ctx.fillRect(x0, TL.top, Math.max(x1 - x0, 1), ph);
    }
    if (TL.drag) {
      ctx.fillStyle = 'rgba(59, 115, 185, 0.10)';
      ctx.fillRect(Math.min(TL.drag.x0, TL.drag.x1), TL.top, Math.abs(TL.drag.x1 - TL.drag.x0), ph);
    }
    // Heap: filled steps.
    if (heapCurve.length) {
      ctx.beginPath();
      ctx.moveTo(X(heapCurve[0][0]), Y(0));
      let prev = 0;
      for (const [t, v] of heapCurve) { ctx.lineTo(X(t), Y(prev)); ctx.lineTo(X(t), Y(v)); prev = v; }
      ctx.lineTo(X(dur), Y(prev)); ctx.lineTo(X(dur), Y(0)); ctx.closePath();
      ctx.fillStyle = 'rgba(217, 83, 79, 0.22)'; ctx.fill();
      ctx.strokeStyle = '#d9534f'; ctx.lineWidth = 1.5; ctx.stroke();
    }
    if (rssCurve.length) {
      ctx.beginPath();
      rssCurve.forEach(([t, v], i) => (i ? ctx.lineTo(X(t), Y(v)) : ctx.moveTo(X(t), Y(v))));
      ctx.strokeStyle = '#3b73b9'; ctx.lineWidth = 1.5; ctx.stroke();
    }
    ctx.lineWidth = 1;
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = '#888';
    ctx.fillStyle = '#555';
    ctx.textAlign = 'left';
    for (const [t, name] of markers) {
      const x = X(t);
      ctx.beginPath(); ctx.moveTo(x, TL.top); ctx.lineTo(x, TL.top + ph); ctx.stroke();
      ctx.fillText(name, x + 3, TL.top + 10);
    }
    ctx.setLineDash([]);
    if (D.peak[1] > 0) {
      const px = X(D.peak[0]), py = Y(D.peak[1]);
      ctx.fillStyle = '#b8002e';
      ctx.beginPath(); ctx.arc(px, py, 4, 0, 2 * Math.PI); ctx.fill();
      const label = 'peak ' + fmtBytes(D.peak[1]) + ' at ' + fmtTime(D.peak[0]);
      ctx.textAlign = px > w - 180 ? 'right' : 'left';
      ctx.fillText(label, px + (ctx.textAlign === 'right' ? -8 : 8), Math.max(py - 4, TL.top + 10));
    }
    canvas.dataset.drawn = String(heapCurve.length + rssCurve.length);
  }

  function timeAtX(x) {
    const t = ((x - TL.left) / tlGeom.pw) * tlGeom.dur;
    return Math.max(0, Math.min(tlGeom.dur, t));
  }

  // ---------------------------------------------------------------- flame graph
  const ROW = 18;
  let flameRects = [];
  let nodeValue = null;

  function computeNodeValues() {
    nodeValue = new Float64Array(NODES);
    D.sites.forEach((site, s) => { nodeValue[site.n] += metricOf(values.per[s], state.metric); });
    for (let i = NODES - 1; i > 0; i--) nodeValue[parent[i]] += nodeValue[i];
  }

  function colour(n, matched) {
    if (matched) return '#c86dd7';
    if (otherNode[n]) return '#c9c9c4';
    let h = 0;
    const s = nameOf[n];
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
    return 'hsl(' + (8 + (h % 42)) + ', ' + (70 + (h >> 8) % 20) + '%, ' + (58 + (h >> 16) % 12) + '%)';
  }

  function matches(n) { return state.search !== null && state.search.test(nameOf[n]); }

  function drawFlame() {
    computeNodeValues();
    const canvas = el('flame');
    // Depth of the drawn tree decides the height.
    const ancestors = [];
    for (let n = state.zoom; n !== 0; n = parent[n]) ancestors.unshift(n);
    ancestors.unshift(0);
    const items = [];  // [node, depth, x0 fraction, width fraction]
    ancestors.forEach((n, d) => items.push([n, d, 0, 1]));
    const rootValue = nodeValue[state.zoom];
    const base = ancestors.length - 1;
    const walk = (n, depth, x0, w) => {
      const kids = children[n].filter((c) => nodeValue[c] > 0).sort((a, b) => nodeValue[b] - nodeValue[a]);
      let x = x0;
      for (const c of kids) {
        const cw = rootValue > 0 ? (nodeValue[c] / rootValue) : 0;
        items.push([c, depth + 1, x, cw]);
        walk(c, depth + 1, x, cw);
        x += cw;
      }
    };
    if (rootValue > 0) walk(state.zoom, base, 0, 1);
    let maxDepth = 0;
    for (const it of items) maxDepth = Math.max(maxDepth, it[1]);
    const { ctx, w } = setupCanvas(canvas, (maxDepth + 1) * ROW + 4);
    ctx.clearRect(0, 0, w, (maxDepth + 1) * ROW + 4);
    ctx.font = '11.5px ui-monospace, "DejaVu Sans Mono", monospace';
    ctx.textBaseline = 'middle';
    flameRects = [];
    let matched = 0;
    const matchedCounted = new Set();
    for (const [n, depth, fx, fw] of items) {
      const x = fx * w, width = fw * w, y = depth * ROW;
      if (width < 0.4) continue;
      const m = matches(n);
      if (m && n !== 0 && depth >= base) {
        // Count a match once, not again under a matching ancestor.
        let a = parent[n], covered = false;
        for (; a !== 0; a = parent[a]) if (matchedCounted.has(a)) { covered = true; break; }
        if (!covered) { matched += nodeValue[n]; matchedCounted.add(n); }
      }
      ctx.fillStyle = n === 0 ? '#d8d4cc' : depth < base ? '#e6e2da' : colour(n, m);
      ctx.fillRect(x + 0.5, y + 0.5, Math.max(width - 1, 0.5), ROW - 1);
      if (width > 28) {
        const label = n === 0 ? 'all (' + fmtMetric(nodeValue[0], state.metric) + ')' : shortName(nameOf[n]);
        const maxChars = Math.floor((width - 8) / 7);
        ctx.fillStyle = '#1f2328';
        ctx.fillText(label.length > maxChars ? label.slice(0, Math.max(maxChars - 1, 1)) + '…' : label, x + 4, y + ROW / 2 + 0.5);
      }
      flameRects.push([x, y, width, n]);
    }
    canvas.dataset.drawn = String(flameRects.length);
    const sr = el('search-result');
    sr.textContent = state.search === null ? '' : 'matched: ' + fmtMetric(matched, state.metric) + ' (' +
      (rootValue > 0 ? (100 * matched / rootValue).toFixed(1) : '0') + '% of the view)';
    el('reset-zoom').disabled = state.zoom === 0;
  }

  function rectAt(ev) {
    const r = el('flame').getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (const f of flameRects) if (x >= f[0] && x < f[0] + f[2] && y >= f[1] && y < f[1] + ROW) return f[3];
    return -1;
  }

  // ---------------------------------------------------------------- wiring
  function refresh() {
    values = computeValues();
    drawSummary();
    drawTimeline();
    drawFlame();
    drawTable('top-allocated', 'allocated');
    drawTable('top-peak', 'peak');
    drawTable('top-leaked', 'leaked');
    el('clear-range').disabled = state.range === null;
  }

  function selectTime(t0, t1) {
    if (t1 < t0) [t0, t1] = [t1, t0];
    const bucket = (t) => Math.max(0, Math.min(B - 1, Math.floor(t / D.bucket_ns)));
    state.range = B > 0 ? [bucket(t0), bucket(Math.max(t0, t1 - 1))] : null;
    refresh();
  }
  function clearRange() { state.range = null; refresh(); }

  const tl = el('timeline');
  tl.addEventListener('mousedown', (ev) => {
    const x = ev.clientX - tl.getBoundingClientRect().left;
    TL.drag = { x0: x, x1: x };
  });
  window.addEventListener('mousemove', (ev) => {
    if (!TL.drag) return;
    TL.drag.x1 = ev.clientX - tl.getBoundingClientRect().left;
    drawTimeline();
  });
  window.addEventListener('mouseup', () => {
    if (!TL.drag) return;
    const { x0, x1 } = TL.drag;
    TL.drag = null;
    if (Math.abs(x1 - x0) < 3) { drawTimeline(); return; }  // a click, not a drag
    selectTime(timeAtX(Math.min(x0, x1)), timeAtX(Math.max(x0, x1)));
  });
  tl.addEventListener('dblclick', clearRange);
  el('clear-range').addEventListener('click', clearRange);

  const flame = el('flame'), tip = el('tooltip');
  flame.addEventListener('click', (ev) => {
    const n = rectAt(ev);
    if (n >= 0) { state.zoom = n; drawFlame(); }
  });
  flame.addEventListener('mousemove', (ev) => {
    const n = rectAt(ev);
    if (n < 0) { tip.hidden = true; return; }
    const total = nodeValue[0];
    tip.replaceChildren(text('div', n === 0 ? 'all' : siteLabel(n), 'fn'));
    if (whereOf[n]) tip.append(text('div', whereOf[n]));
    tip.append(text('div', fmtMetric(nodeValue[n], state.metric) + ' — ' +
      (total > 0 ? (100 * nodeValue[n] / total).toFixed(2) : '0') + '% of all'));
    tip.hidden = false;
    tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 420) + 'px';
    tip.style.top = (ev.clientY + 14) + 'px';
  });
  flame.addEventListener('mouseleave', () => { tip.hidden = true; });
  el('reset-zoom').addEventListener('click', () => { state.zoom = 0; drawFlame(); });
  el('metric').addEventListener('change', (ev) => { state.metric = ev.target.value; drawFlame(); });
  el('search').addEventListener('input', (ev) => {
    const q = ev.target.value.trim();
    try { state.search = q ? new RegExp(q, 'i') : null; } catch (e) {
      state.search = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
    drawFlame();
  });
  window.addEventListener('resize', () => { drawTimeline(); drawFlame(); });

  // For tests and scripting: the same actions as the mouse, and the numbers shown.
  window.memloupe = {
    selectTime, clearRange,
    setMetric(m) { state.metric = m; el('metric').value = m; drawFlame(); },
    search(q) { const s = el('search'); s.value = q; s.dispatchEvent(new Event('input')); },
    zoom(n) { state.zoom = n; drawFlame(); },
    summary() {
      const t = totals();
      return { allocated: t.allocated[0], allocations: t.allocated[1], peak: values.peakBytes, leaked: t.leaked[0],
        range: state.range, flameValue: nodeValue[0] };
    },
    drawn() { return { flame: flameRects.length, timeline: Number(el('timeline').dataset.drawn) }; },
  };

  drawInfo();
  refresh();
  document.body.dataset.ready = '1';
})();
