// page.js — the info header, the summary, the tables, and the wiring of the
// controls; also window.memloupe, the same actions for scripts and tests.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope (assets/report.html),
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
  const stat = (label, value, interval, detail, id) => {
    const d = document.createElement('div');
    d.className = 'stat';
    d.append(text('span', label, 'label'));
    const v = text('span', value, 'value');
    v.id = id;
    const line = document.createElement('span');
    line.append(v);
    if (interval) { const ci = text('span', ' ' + interval, 'ci'); ci.id = id + '-ci'; line.append(ci); }
    d.append(line, text('span', detail, 'detail'));
    box.append(d);
  };
  const blocks = (a) => { const e = objectsEstimate(a); return fmtCount(e.value) + ' ' + (EXACT ? '' : countInterval(e) + ' ') + 'blocks'; };
  const bytes = (a) => bytesEstimate(a);
  const alloc = bytes(t.allocated), peak = bytes(values.peakLive), leak = bytes(t.leaked);
  stat(state.range ? 'allocated in range' : 'allocated', fmtBytes(alloc.value), bytesInterval(alloc), blocks(t.allocated), 'sum-allocated');
  stat(state.range ? 'live at the range\'s peak' : 'live at peak', fmtBytes(peak.value), bytesInterval(peak),
    (values.peakLive[1] > 0 ? blocks(values.peakLive) + ' ' : '') + 'at ' + fmtTime(values.peakTime), 'sum-peak');
  stat(state.range ? 'leaked, allocated in range' : 'leaked (live at exit)', fmtBytes(leak.value), bytesInterval(leak), blocks(t.leaked), 'sum-leaked');
  const r = state.range;
  const range = text('span', r ? 'range ' + fmtTime(r[0] * D.bucket_ns) + ' – ' +
    fmtTime(Math.min((r[1] + 1) * D.bucket_ns, D.info.duration_ns)) : 'whole trace', 'range');
  range.id = 'sum-range';
  const where = document.createElement('div');
  where.className = 'stat';
  where.append(range);
  if (!EXACT) where.append(text('span', 'sampled: estimates [95% interval]', 'detail'));
  box.append(where);
}

function refresh() {
  values = computeValues();
  drawSummary();
  drawTimeline();
  drawFlame();
  drawSites();
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
  const T = flameTree(), p = T.page[n], total = nodeValue[0];
  tip.replaceChildren(text('div', n === 0 ? 'all' : otherNode[p] ? '[other] under ' + nameOf[parent[p]] : nameOf[p], 'fn'));
  if (whereOf[p] && n !== 0) tip.append(text('div', whereOf[p]));
  tip.append(text('div', nodeFigure(n) + ' — ' + (total > 0 ? (100 * nodeValue[n] / total).toFixed(2) : '0') + '% of all'));
  tip.hidden = false;
  tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 420) + 'px';
  tip.style.top = (ev.clientY + 14) + 'px';
});
flame.addEventListener('mouseleave', () => { tip.hidden = true; });
el('reset-zoom').addEventListener('click', () => { state.zoom = 0; state.focus = -1; drawFlame(); drawSites(); });
el('metric').addEventListener('change', (ev) => { state.metric = ev.target.value; drawFlame(); });
el('inverted').addEventListener('change', (ev) => setInverted(ev.target.checked));
el('search').addEventListener('input', (ev) => {
  const q = ev.target.value.trim();
  try { state.search = q ? new RegExp(q, 'i') : null; } catch (e) {
    state.search = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
  drawFlame();
});
el('site-filter').addEventListener('input', (ev) => {
  const q = ev.target.value.trim();
  try { table.filter = q ? new RegExp(q, 'i') : null; } catch (e) {
    table.filter = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
  table.page = 0;
  drawSites();
});
el('page-prev').addEventListener('click', () => { table.page = Math.max(0, table.page - 1); drawSites(); });
el('page-next').addEventListener('click', () => { table.page++; drawSites(); });
window.addEventListener('resize', () => { drawTimeline(); drawFlame(); });

// For tests and scripting: the same actions as the mouse, and the numbers shown.
window.memloupe = {
  selectTime, clearRange, setInverted, focusSite, sortSites,
  setMetric(m) { state.metric = m; el('metric').value = m; drawFlame(); },
  search(q) { const s = el('search'); s.value = q; s.dispatchEvent(new Event('input')); },
  zoom(n) { state.zoom = n; drawFlame(); },
  summary() {
    const t = totals();
    return { allocated: t.allocated[0], allocations: t.allocated[1], peak: values.peakBytes, leaked: t.leaked[0],
      range: state.range, flameValue: nodeValue[0] };
  },
  // The whole selection's figures with their intervals, as `summary --json` gives them.
  intervals() {
    const t = totals(), out = {};
    for (const [k, a] of [['allocated', t.allocated], ['peak', values.peakLive], ['leaked', t.leaked]]) {
      const b = bytesEstimate(a), o = objectsEstimate(a);
      out[k] = { bytes: b.value, bytes_lo: b.lo, bytes_hi: b.hi, blocks: o.value, blocks_lo: o.lo, blocks_hi: o.bounded ? o.hi : null };
    }
    return out;
  },
  drawn() {
    const T = flameTree();
    return { flame: flameRects.length, timeline: Number(el('timeline').dataset.drawn),
      rss: rssCurve.length, mapped: mappedCurve.length, rssLast: rssCurve.length ? rssCurve[rssCurve.length - 1][0] : 0,
      inverted: state.inverted, zoom: state.zoom, zoomName: state.zoom ? nameOf[T.page[state.zoom]] : 'all',
      focus: state.focus, sites: SITES };
  },
  table() {
    const rows = [...document.querySelectorAll('#sites tr.site')];
    return { rows: table.rows.length, shown: rows.length, sort: table.sort, descending: table.descending,
      first: rows.length ? rows[0].firstChild.textContent : '',
      firstSite: rows.length ? Number(rows[0].dataset.site) : -1,
      info: el('page-info').textContent };
  },
  siteName, siteTitle, poisson95,
  siteLeaked(s) { return values.per[s].leaked[0]; },
  // The full name of a site's own frame (the row's name), what a click on its row zooms to.
  focusName(s) { const l = D.sites[s].l; return l ? S[l[0]] : nameOf[D.sites[s].f]; },
  duration() { return D.info.duration_ns; },
  // The widest frame under the drawn root.
  flameTop() {
    const T = flameTree();
    let best = -1;
    for (const c of T.children[state.zoom]) if (best < 0 || nodeValue[c] > nodeValue[best]) best = c;
    return best < 0 ? '' : nameOf[T.page[best]];
  },
  showType(i) { showTypeStacks(i); return el('type-stacks').textContent; },
};

// The types table (D.types: [name, objects, bytes, [node, objects, bytes, ...]]),
// whole-selection figures; a click lists the type's stacks, innermost frame first.
function nodePath(n) {
  const out = [];
  for (; n > 0; n = parent[n]) out.push(shortOf[n]);
  return out;
}
// A type's objects and bytes as estimates (sampled: [.., blocks seen,
// variance, element size]): elements of buffers get the bytes' interval over
// sizeof, blocks the Horvitz–Thompson one, a type counted both ways none.
function typeFigures(t) {
  const bytes = bytesEstimate([t[2]]);
  let objects = objectsEstimate([0, t[1], t[4], t[5]]);
  if (!EXACT && t[6] > 0) objects = { value: t[1], lo: bytes.lo / t[6], hi: bytes.hi / t[6], bounded: true };
  const objectsText = fmtCount(t[1]) + (EXACT || t[6] < 0 ? '' : ' ' + countInterval(objects));
  return { objects: objectsText, bytes: fmtBytes(t[2]) + (EXACT ? '' : ' ' + bytesInterval(bytes)) };
}
function showTypeStacks(i) {
  const [name, , , stacks] = D.types[i];
  const f = typeFigures(D.types[i]);
  el('type-title').textContent = name + ' — ' + f.objects + ' objects, ' + f.bytes;
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
    const f = typeFigures(t);
    row.append(text('td', f.objects, 'num'), text('td', f.bytes, 'num'), text('td', t[0], 'fn'));
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
