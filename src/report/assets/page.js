// page.js — the info header, the summary, the tables, and the wiring of the
// controls; also window.memloupe, the same actions for scripts and tests.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, page inside one function scope (assets/report.html),
// so each sees the others' top-level names.

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
    const fn = text('td', shortSiteLabel(n), 'fn');
    if (whereOf[n]) fn.append(text('span', ' ' + whereOf[n].replace(/^.*\//, ''), 'where'));
    if (v[2] !== n) fn.append(text('div', 'via ' + shortOf[v[2]], 'via'));
    fn.title = pathOf(v[2]);
    tr.append(fn, text('td', fmtBytes(v[0]), 'num'), text('td', fmtCount(v[1]), 'num'),
      text('td', total > 0 ? (100 * v[0] / total).toFixed(1) : '0', 'num'));
    table.append(tr);
  }
}


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
  showType(i) { showTypeStacks(i); return el('type-stacks').textContent; },
};

// The types table (D.types: [name, objects, bytes, [node, objects, bytes, ...]]),
// whole-selection figures; a click lists the type's stacks, innermost frame first.
function nodePath(n) {
  const out = [];
  for (; n > 0; n = parent[n]) out.push(shortOf[n]);
  return out;
}
function showTypeStacks(i) {
  const [name, objects, bytes, stacks] = D.types[i];
  el('type-title').textContent = name + ' — ' + fmtCount(objects) + ' objects, ' + fmtBytes(bytes);
  const box = el('type-stacks');
  box.replaceChildren();
  for (let k = 0; k < stacks.length; k += 3) {
    const div = text('div', fmtCount(stacks[k + 1]) + ' objects, ' + fmtBytes(stacks[k + 2]), 'type-stack');
    div.append(text('pre', nodePath(stacks[k]).join('\n')));
    box.append(div);
  }
}
function drawTypes() {
  if (!D.types || D.types.length === 0) return;
  el('types-panel').hidden = false;
  const table = el('types');
  table.replaceChildren();
  const head = document.createElement('tr');
  for (const h of ['Objects', 'Bytes', 'Type']) head.append(text('th', h));
  table.append(head);
  D.types.forEach((t, i) => {
    const row = document.createElement('tr');
    row.append(text('td', fmtCount(t[1]), 'num'), text('td', fmtBytes(t[2]), 'num'), text('td', t[0], 'fn'));
    row.style.cursor = 'pointer';
    row.addEventListener('click', () => showTypeStacks(i));
    table.append(row);
  });
  showTypeStacks(0);
}

drawInfo();
drawTypes();
refresh();
document.body.dataset.ready = '1';
