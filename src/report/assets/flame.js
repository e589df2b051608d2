// flame.js — the flame graph of the current metric and range, top-down (root
// at the top, callees below) or inverted (bottom-up: the allocating frames at
// the top, their callers below), with zoom, search and a focused site.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope (assets/report.html),
// so each sees the others' top-level names.

const ROW = 18;
let flameRects = [];
let nodeValue = null, nodeAux = null;  // per node of the drawn tree: the metric, and [blocks, variance]

// A tree the flame graph draws: parent links (parents before children), its
// children, the page node each node names (labels, colours, tooltips), and the
// node each site's value is added at.
function makeTree(parentOf, childrenOf, pageNode, siteLeaf) {
  return { parent: parentOf, children: childrenOf, page: pageNode, siteLeaf, count: parentOf.length };
}
const identity = Int32Array.from({ length: NODES }, (_, i) => i);
const TOP_DOWN = makeTree(parent, children, identity, Int32Array.from(D.sites, (s) => s.n));

// The inverted tree: each site's frames from its own node up to the root,
// merged by name level by level. invChain[s] lists the nodes a site runs
// through, from the inverted root's child (its innermost frame) down.
const invChain = [];
const INVERTED = (() => {
  const par = [0], page = [0], kids = [new Map()];
  D.sites.forEach((site) => {
    let at = 0;
    const chain = [];
    for (let n = site.n; n !== 0; n = parent[n]) {
      const key = otherNode[n] ? '[other]' : nameOf[n];
      let next = kids[at].get(key);
      if (next === undefined) {
        next = par.length;
        par.push(at); page.push(n); kids.push(new Map());
        kids[at].set(key, next);
      }
      chain.push(next);
      at = next;
    }
    invChain.push(chain);
  });
  const childList = kids.map((m) => [...m.values()]);
  return makeTree(Int32Array.from(par), childList, Int32Array.from(page),
    Int32Array.from(invChain, (c) => (c.length ? c[c.length - 1] : 0)));
})();
const flameTree = () => (state.inverted ? INVERTED : TOP_DOWN);

function computeNodeValues() {
  const T = flameTree();
  nodeValue = new Float64Array(T.count);
  nodeAux = new Float64Array(2 * T.count);
  values.per.forEach((v, s) => {
    const leaf = T.siteLeaf[s];
    nodeValue[leaf] += metricOf(v, state.metric);
    const a = v[state.metric === 'count' ? 'allocated' : state.metric];
    nodeAux[2 * leaf] += a[2]; nodeAux[2 * leaf + 1] += a[3];
  });
  for (let i = T.count - 1; i > 0; i--) {
    const p = T.parent[i];
    nodeValue[p] += nodeValue[i]; nodeAux[2 * p] += nodeAux[2 * i]; nodeAux[2 * p + 1] += nodeAux[2 * i + 1];
  }
}
// The drawn value of node i as a figure with its interval.
function nodeFigure(i) {
  if (state.metric === 'count') {
    const e = objectsEstimate([0, nodeValue[i], nodeAux[2 * i], nodeAux[2 * i + 1]]);
    return fmtCount(e.value) + ' allocs ' + countInterval(e);
  }
  const e = bytesEstimate([nodeValue[i]]);
  return fmtBytes(e.value) + ' ' + bytesInterval(e);
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

// The nodes of the drawn tree that show the focused site (a table row's click).
function focusedNodes() {
  if (state.focus < 0) return new Set();
  return new Set(state.inverted ? invChain[state.focus] : [D.sites[state.focus].n]);
}

function drawFlame() {
  computeNodeValues();
  const T = flameTree();
  const canvas = el('flame');
  const ancestors = [];
  for (let n = state.zoom; n !== 0; n = T.parent[n]) ancestors.unshift(n);
  ancestors.unshift(0);
  const items = [];  // [node, depth, x0 fraction, width fraction]
  ancestors.forEach((n, d) => items.push([n, d, 0, 1]));
  const rootValue = nodeValue[state.zoom];
  const base = ancestors.length - 1;
  const walk = (n, depth, x0) => {
    const kids = T.children[n].filter((c) => nodeValue[c] > 0).sort((a, b) => nodeValue[b] - nodeValue[a]);
    let x = x0;
    for (const c of kids) {
      const cw = rootValue > 0 ? (nodeValue[c] / rootValue) : 0;
      items.push([c, depth + 1, x, cw]);
      walk(c, depth + 1, x);
      x += cw;
    }
  };
  if (rootValue > 0) walk(state.zoom, base, 0);
  let maxDepth = 0;
  for (const it of items) maxDepth = Math.max(maxDepth, it[1]);
  const { ctx, w } = setupCanvas(canvas, (maxDepth + 1) * ROW + 4);
  ctx.clearRect(0, 0, w, (maxDepth + 1) * ROW + 4);
  ctx.font = '11.5px ui-monospace, "DejaVu Sans Mono", monospace';
  ctx.textBaseline = 'middle';
  flameRects = [];
  let matched = 0;
  const matchedCounted = new Set();
  const focus = focusedNodes();
  const outlines = [];
  for (const [n, depth, fx, fw] of items) {
    const x = fx * w, width = fw * w, y = depth * ROW;
    if (width < 0.4) continue;
    const p = T.page[n];
    const m = n !== 0 && matches(p);
    if (m && depth >= base) {
      // Count a match once, not again under a matching ancestor.
      let a = T.parent[n], covered = false;
      for (; a !== 0; a = T.parent[a]) if (matchedCounted.has(a)) { covered = true; break; }
      if (!covered) { matched += nodeValue[n]; matchedCounted.add(n); }
    }
    ctx.fillStyle = n === 0 ? '#d8d4cc' : depth < base ? '#e6e2da' : colour(p, m);
    ctx.fillRect(x + 0.5, y + 0.5, Math.max(width - 1, 0.5), ROW - 1);
    if (focus.has(n)) outlines.push([x, y, width]);
    if (width > 28) {
      const label = n === 0 ? 'all (' + fmtMetric(nodeValue[0], state.metric) + ')' : shortOf[p];
      const maxChars = Math.floor((width - 8) / 7);
      ctx.fillStyle = '#1f2328';
      ctx.fillText(label.length > maxChars ? label.slice(0, Math.max(maxChars - 1, 1)) + '…' : label, x + 4, y + ROW / 2 + 0.5);
    }
    flameRects.push([x, y, width, n]);
  }
  ctx.strokeStyle = '#1d4ed8';
  ctx.lineWidth = 2;
  for (const [x, y, width] of outlines) ctx.strokeRect(x + 1, y + 1, Math.max(width - 2, 1), ROW - 2);
  ctx.lineWidth = 1;
  canvas.dataset.drawn = String(flameRects.length);
  const sr = el('search-result');
  sr.textContent = state.search === null ? '' : 'matched: ' + fmtMetric(matched, state.metric) + ' (' +
    (rootValue > 0 ? (100 * matched / rootValue).toFixed(1) : '0') + '% of the view)';
  el('reset-zoom').disabled = state.zoom === 0 && state.focus < 0;
  el('flame-hint').textContent = state.inverted
    ? 'inverted: the allocating frames at the top, their callers below · click a frame to zoom · width = the metric'
    : 'root at the top, callees below · click a frame to zoom · width = the metric';
}

function rectAt(ev) {
  const r = el('flame').getBoundingClientRect();
  const x = ev.clientX - r.left, y = ev.clientY - r.top;
  for (const f of flameRects) if (x >= f[0] && x < f[0] + f[2] && y >= f[1] && y < f[1] + ROW) return f[3];
  return -1;
}

// A table row's click: the flame graph zooms to the site's own frame (in the
// inverted graph: that frame on the site's path up from its innermost frame)
// and outlines the site.
function focusSite(s) {
  state.focus = s;
  const site = D.sites[s];
  if (state.inverted) {
    const chain = invChain[s];
    let depth = 0;  // frames from the innermost up to the focus node
    for (let n = site.n; n !== 0 && n !== site.f; n = parent[n]) depth++;
    state.zoom = chain.length ? chain[Math.min(depth, chain.length - 1)] : 0;
  } else {
    state.zoom = site.f;
  }
  drawFlame();
}
function setInverted(on) {
  state.inverted = on;
  el('inverted').checked = on;
  if (state.focus >= 0) focusSite(state.focus); else { state.zoom = 0; drawFlame(); }
}
