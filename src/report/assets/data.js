// data.js — the report's data (JSON in #memloupe-data, written by
// src/report/html_data.cc) and the numbers computed from it for a time range.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, page inside one function scope (assets/report.html),
// so each sees the others' top-level names.
//
// Data model (see html_data.h):
//   nodes   flat [parent, name, short name, where, other] per node; node 0 is the
//           root and every node comes after its parent. The short name (template
//           arguments "<…>", parameters "()") is the label, written by the C++
//           rule the terminal views use (report::short_function_name); the
//           full name is for tooltips, titles and search.
//   sites   {n: node, t: [alloc B, alloc N, live B, live N, peak B, peak N, leak B, leak N],
//            b: [bucket, alloc B, alloc N, freed B, freed N, leaked B, leaked N, ...]}
//   types   [name, objects, bytes, [node, objects, bytes, ...]] per C++ type
//           (whole selection; page.js's types table)
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


function pathOf(n) {
  const p = [];
  for (; n !== 0; n = parent[n]) p.push(nameOf[n]);
  return p.reverse().join(' → ');
}
function siteLabel(n) { return otherNode[n] ? '[other] under ' + nameOf[parent[n]] : nameOf[n]; }
function shortSiteLabel(n) { return otherNode[n] ? '[other] under ' + shortOf[parent[n]] : shortOf[n]; }

// Tables name a site by its innermost frame in the program's own code: the
// nearest frame (from the allocation outwards) that is not library code (the
// data's flag 2, set by analysis::is_library_file, the rule the text views
// use), or the innermost frame if there is none. Sites with the same such
// frame share a row.
const ownFrame = new Int32Array(NODES);
for (let n = 0; n < NODES; n++) {
  let a = n;
  while (a !== 0 && (otherNode[a] || libraryNode[a])) a = parent[a];
  ownFrame[n] = a === 0 ? n : a;
}
