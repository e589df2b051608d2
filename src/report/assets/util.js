// util.js — formatting of bytes, counts and times; DOM and canvas helpers.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope (assets/report.html),
// so each sees the others' top-level names.

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
const el = (id) => document.getElementById(id);
function text(tag, content, cls) {
  const e = document.createElement(tag);
  e.textContent = content;
  if (cls) e.className = cls;
  return e;
}


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

// ---- 95% intervals of figures from a sampled trace: the rules of
// src/analysis/estimate.cc (exact Garwood interval on the sample count for
// bytes; Horvitz–Thompson with a normal approximation for blocks), ported so
// the page can give intervals for any time range it recomputes. The browser
// test checks the page's whole-trace intervals against `memloupe summary --json`.
const Z975 = 1.959963984540054;
// log Γ(x), x > 0 (Lanczos, g = 7, 9 terms: ~1e-15 relative).
const LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
function logGamma(x) {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = LANCZOS[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}
// Regularised lower incomplete gamma P(a, x): series below a + 1, continued fraction above.
function gammaP(a, x) {
  if (x <= 0) return 0;
  const logPrefix = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let term = 1 / a, sum = term;
    for (let n = 1; n < 100000; n++) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return Math.min(1, sum * Math.exp(logPrefix));
  }
  const tiny = 1e-300;
  let b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (let i = 1; i < 100000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b; if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c; if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.max(0, 1 - Math.exp(logPrefix) * h);
}
function gammaQuantile(a, p, z) {
  if (a > 1e4) { const t = 1 - 1 / (9 * a) + z / (3 * Math.sqrt(a)); return a * t * t * t; }
  let lo = 0, hi = a + 10 * Math.sqrt(a) + 20;
  while (gammaP(a, hi) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (gammaP(a, mid) < p) lo = mid; else hi = mid;
  }
  return (lo + hi) / 2;
}
const poissonCache = new Map();
function poisson95(k) {
  let r = poissonCache.get(k);
  if (!r) {
    r = [k === 0 ? 0 : gammaQuantile(k, 0.025, -Z975), gammaQuantile(k + 1, 0.975, Z975)];
    if (poissonCache.size < 100000) poissonCache.set(k, r);
  }
  return r;
}
// {value, lo, hi, bounded} of bytes and of blocks (objects) from an amount:
// [bytes, objects, blocks seen, objects variance]. Exact traces: lo = hi = value.
function bytesEstimate(a) {
  const v = a[0];
  if (EXACT) return { value: v, lo: v, hi: v, bounded: true };
  const k = Math.max(0, Math.round(v / BPS));
  const [lo, hi] = poisson95(k);
  return { value: v, lo: lo * BPS, hi: hi * BPS, bounded: true };
}
function objectsEstimate(a) {
  const v = a[1];
  if (EXACT) return { value: v, lo: v, hi: v, bounded: true };
  const blocks = a[2];
  if (!(blocks > 0)) return { value: 0, lo: 0, hi: 0, bounded: false };
  const half = Z975 * Math.sqrt(Math.max(0, a[3]));
  const lo = Math.max(blocks, v - half);
  return { value: v, lo, hi: v + half, bounded: v - blocks >= 1 };
}
// "[1.05, 1.24] MiB"-style interval text in the unit of the value (empty when exact).
function bytesInterval(e) {
  if (EXACT) return '';
  const ref = e.value > 0 ? e.value : e.hi;
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0, div = 1;
  while (ref / div >= 1024 && i < units.length - 1) { div *= 1024; i++; }
  const f = (x) => { x /= div; return i === 0 ? String(Math.round(x)) : x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0); };
  return '[' + f(e.lo) + ', ' + f(e.hi) + '] ' + units[i];
}
function countInterval(e) {
  if (EXACT) return '';
  return '[' + fmtCount(e.lo) + ', ' + (e.bounded ? fmtCount(e.hi) : '?') + ']';
}
