// data.js — the report's data (JSON in #memloupe-data, written by
// src/report/html_data.cc) and the numbers computed from it for a time range.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope (assets/report.html),
// so each sees the others' top-level names.
//
// Data model (see html_data.h):
//   nodes   flat [parent, name, short name, where, other] per node; node 0 is the
//           root and every node comes after its parent. The short name (template
//           arguments "<…>", parameters "()") is the label, written by the C++
//           rule the terminal views use (report::short_function_name); the
//           full name is for tooltips, titles and search.
//   sites   one entry per allocation site (distinct backtrace; the site table's
//           rows), or per page node for the sites merged past the size budget:
//           {n: node, f: node to focus, l: [name, short name, where, innermost
//            frame's short name, caller's short name] of the site's own frame | m: sites merged,
//            t: [alloc B, alloc N, live B, live N, peak B, peak N, leak B, leak N],
//            b: [bucket, alloc B, alloc N, freed B, freed N, leaked B, leaked N, ...],
//            sampled traces only: c: [blocks seen, variance] per amount of t,
//            bc: the same per amount of b (6 per bucket entry)}
//   types   [name, objects, bytes, [node, objects, bytes, ...]] per C++ type
//           (whole selection; page.js's types table)
// Amounts in the page are [bytes, objects, blocks seen, objects variance]
// (util.js turns them into intervals).
// A time range is a closed range of buckets [b0, b1]; every number shown is
// recomputed from the buckets in it.

const D = JSON.parse(document.getElementById('memloupe-data').textContent);
const S = D.strings;
const NODES = D.nodes.length / 5;
const B = D.buckets;
const parent = new Int32Array(NODES), nameOf = [], shortOf = [], whereOf = [], otherNode = [], libraryNode = [];
for (let i = 0; i < NODES; i++) {
  parent[i] = D.nodes[5 * i];
  nameOf.push(S[D.nodes[5 * i + 1]]);
  shortOf.push(S[D.nodes[5 * i + 2]]);
  whereOf.push(S[D.nodes[5 * i + 3]]);
  otherNode.push((D.nodes[5 * i + 4] & 1) === 1);
  libraryNode.push((D.nodes[5 * i + 4] & 2) === 2);
}
const children = Array.from({ length: NODES }, () => []);
for (let i = 1; i < NODES; i++) children[parent[i]].push(i);

const EXACT = D.info.mode === 'all';
const BPS = Math.max(1, D.info.bytes_per_sample || 1);
const SITES = D.sites.length;

// The whole heap's live bytes at the end of every bucket (prefix sums of
// allocated - freed over every site), for the range's peak.
const heapAt = new Float64Array(B);
for (const site of D.sites) {
  const b = site.b;
  for (let k = 0; k < b.length; k += 7) heapAt[b[k]] += b[k + 1] - b[k + 3];
}
for (let i = 1; i < B; i++) heapAt[i] += heapAt[i - 1];

const state = { metric: 'allocated', range: null, zoom: 0, search: null, inverted: false, focus: -1 };
let values = null;  // per site: {allocated, peak, leaked} amounts for the current range, and the peak

const amount4 = (bytes, objects, c, i) => [bytes, objects, c ? c[i] : 0, c ? c[i + 1] : 0];
function computeValues() {
  const r = state.range;
  let peakBucket = -1, peakTime = D.peak[0], peakBytes = D.peak[1];
  if (r) {
    for (let i = r[0]; i <= r[1]; i++) if (peakBucket < 0 || heapAt[i] > heapAt[peakBucket]) peakBucket = i;
    peakTime = Math.min((peakBucket + 1) * D.bucket_ns, D.info.duration_ns);
    peakBytes = peakBucket >= 0 ? heapAt[peakBucket] : 0;
  }
  const pl = D.peak_live || [0, 0, 0];
  const peakLive = r ? [peakBytes, 0, 0, 0] : [peakBytes, pl[0], pl[1], pl[2]];
  const per = D.sites.map((site, s) => {
    if (!r) {
      const t = site.t, c = site.c;
      return { allocated: amount4(t[0], t[1], c, 0), peak: amount4(t[4], t[5], c, 4), leaked: amount4(t[6], t[7], c, 6) };
    }
    // Live at the peak bucket's end: what the site allocated minus what it freed up to then.
    const v = { allocated: [0, 0, 0, 0], leaked: [0, 0, 0, 0], peak: [0, 0, 0, 0] };
    const b = site.b, bc = site.bc;
    for (let k = 0, j = 0; k < b.length; k += 7, j += 6) {
      if (b[k] <= peakBucket) {
        v.peak[0] += b[k + 1] - b[k + 3]; v.peak[1] += b[k + 2] - b[k + 4];
        if (!EXACT) { v.peak[2] += bc[j] - bc[j + 2]; v.peak[3] += bc[j + 1] - bc[j + 3]; }
      }
      if (b[k] < r[0] || b[k] > r[1]) continue;
      v.allocated[0] += b[k + 1]; v.allocated[1] += b[k + 2];
      v.leaked[0] += b[k + 5]; v.leaked[1] += b[k + 6];
      if (!EXACT) { v.allocated[2] += bc[j]; v.allocated[3] += bc[j + 1]; v.leaked[2] += bc[j + 4]; v.leaked[3] += bc[j + 5]; }
    }
    for (let i = 1; i < 4; i++) peakLive[i] += v.peak[i];
    return v;
  });
  return { per, peakTime, peakBytes, peakLive };
}

function metricOf(v, metric) {
  if (metric === 'count') return v.allocated[1];
  return Math.max(0, v[metric][0]);
}

function totals() {
  const t = { allocated: [0, 0, 0, 0], peak: [0, 0, 0, 0], leaked: [0, 0, 0, 0] };
  for (const v of values.per) for (const k in t) for (let i = 0; i < 4; i++) t[k][i] += v[k][i];
  return t;
}

function pathOf(n) {
  const p = [];
  for (; n !== 0; n = parent[n]) p.push(nameOf[n]);
  return p.reverse().join(' → ');
}
function siteLabel(n) { return otherNode[n] ? '[other] under ' + nameOf[parent[n]] : nameOf[n]; }
function shortSiteLabel(n) { return otherNode[n] ? '[other] under ' + shortOf[parent[n]] : shortOf[n]; }

// The site table names a site by its own frame: the innermost frame in the
// program's code (src/report/html_data.cc picks it by the text views' rule).
// Short names that stand for several functions (template arguments cut) are
// shown in full, so rows can be told apart.
const fullsOfShort = new Map();
for (const site of D.sites) {
  if (!site.l) continue;
  const set = fullsOfShort.get(site.l[1]) || new Set();
  set.add(site.l[0]);
  fullsOfShort.set(site.l[1], set);
}
function siteName(s) {
  const site = D.sites[s];
  if (!site.l) return site.m + ' smaller site' + (site.m === 1 ? '' : 's') + ' under ' + shortOf[site.n];
  return S[fullsOfShort.get(site.l[1]).size > 1 ? site.l[0] : site.l[1]] || '(no frames)';
}
function siteTitle(s) {
  const site = D.sites[s];
  if (!site.l) return pathOf(site.n);
  const own = S[site.l[0]];
  const path = pathOf(site.f);
  return nameOf[site.f] === own ? path : (path ? path + ' → … → ' : '') + own;
}
