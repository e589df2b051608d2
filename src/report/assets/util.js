// util.js — formatting of bytes, counts and times; DOM and canvas helpers.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, page inside one function scope (assets/report.html),
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
