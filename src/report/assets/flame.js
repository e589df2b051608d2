// flame.js — the flame graph (root at the top) of the current metric and range,
// with zoom and search highlighting.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, page inside one function scope (assets/report.html),
// so each sees the others' top-level names.

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
      const label = n === 0 ? 'all (' + fmtMetric(nodeValue[0], state.metric) + ')' : shortOf[n];
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
