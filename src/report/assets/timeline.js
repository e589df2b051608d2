// timeline.js — the heap and RSS over time, the peak, markers and the selected range.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope (assets/report.html),
// so each sees the others' top-level names.

const TL = { left: 64, right: 12, top: 12, bottom: 22, drag: null };
const curve = (flat) => { const p = []; for (let i = 0; i < flat.length; i += 2) p.push([flat[i], flat[i + 1]]); return p; };
const heapCurve = curve(D.heap), rssCurve = curve(D.rss);
// Mapped memory (anonymous mmap, sbrk) is its own series beside the heap; absent in older data.
const mappedCurve = curve(D.mapped || []);
const markers = []; for (let i = 0; i < D.markers.length; i += 2) markers.push([D.markers[i], D.markers[i + 1]]);
let tlGeom = null;

function drawTimeline() {
  const canvas = el('timeline');
  const { ctx, w, h } = setupCanvas(canvas, 200);
  const dur = Math.max(D.info.duration_ns, 1);
  let ymax = D.peak[1];
  for (const [, v] of rssCurve) ymax = Math.max(ymax, v);
  for (const [, v] of heapCurve) ymax = Math.max(ymax, v);
  for (const [, v] of mappedCurve) ymax = Math.max(ymax, v);
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
  // From a sampled trace, the heap's 95% band (each point's interval) under the curve.
  if (!EXACT && heapCurve.length) {
    ctx.beginPath();
    const band = heapCurve.map(([t, v]) => [t, bytesEstimate([v])]);
    const top = (v) => Math.max(TL.top, Y(v));
    band.forEach(([t, e], i) => (i ? ctx.lineTo(X(t), top(e.hi)) : ctx.moveTo(X(t), top(e.hi))));
    for (let i = band.length - 1; i >= 0; i--) ctx.lineTo(X(band[i][0]), Y(band[i][1].lo));
    ctx.closePath();
    ctx.fillStyle = 'rgba(217, 83, 79, 0.10)'; ctx.fill();
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
  el('mapped-key').hidden = !mappedCurve.length;
  el('band-key').hidden = EXACT;
  if (mappedCurve.length) {
    ctx.beginPath();
    let prev = 0;
    mappedCurve.forEach(([t, v], i) => {
      if (i) ctx.lineTo(X(t), Y(prev)); else ctx.moveTo(X(t), Y(0));
      ctx.lineTo(X(t), Y(v)); prev = v;
    });
    ctx.lineTo(X(dur), Y(prev));
    ctx.strokeStyle = '#2e8b57'; ctx.lineWidth = 1.5; ctx.stroke();
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
    // Near the right edge the name goes on the left of its line, so it stays on the canvas.
    const right = x + 3 + ctx.measureText(name).width > w;
    ctx.textAlign = right ? 'right' : 'left';
    ctx.fillText(name, right ? x - 3 : x + 3, TL.top + 10);
  }
  ctx.textAlign = 'left';
  ctx.setLineDash([]);
  if (D.peak[1] > 0) {
    const px = X(D.peak[0]), py = Y(D.peak[1]);
    ctx.fillStyle = '#b8002e';
    ctx.beginPath(); ctx.arc(px, py, 4, 0, 2 * Math.PI); ctx.fill();
    const pe = bytesEstimate([D.peak[1], 0, 0, 0]);
    const label = 'peak ' + fmtBytes(D.peak[1]) + (EXACT ? '' : ' ' + bytesInterval(pe)) + ' at ' + fmtTime(D.peak[0]);
    ctx.textAlign = px > w - 180 ? 'right' : 'left';
    ctx.fillText(label, px + (ctx.textAlign === 'right' ? -8 : 8), Math.max(py - 4, TL.top + 10));
  }
  canvas.dataset.drawn = String(heapCurve.length + rssCurve.length + mappedCurve.length);
}

function timeAtX(x) {
  const t = ((x - TL.left) / tlGeom.pw) * tlGeom.dur;
  return Math.max(0, Math.min(tlGeom.dur, t));
}
