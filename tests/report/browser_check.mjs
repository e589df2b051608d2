// Opens a memloupe HTML report in real headless Chromium and reports, one
// `key=value` per line on stdout, what a user would see: console errors, whether
// the flame graph and timeline were drawn (canvas pixels inked), and the numbers
// before a time range is dragged on the timeline with the mouse, after it, and
// after the range is cleared again; with heap snapshots, the retention view
// before and after a click opens the first root.
//
// Then the views a click opens: the site table sorted by a column header, a
// row clicked (the flame graph focuses on that site), the inverted flame
// graph's toggle clicked (and a row clicked there too).
//
//   node browser_check.mjs REPORT.html [--screenshot OUT.png] [--views DIR] [--eval EXPR] [--chromium PATH]
//
// --views DIR writes one PNG per view into DIR: timeline.png, flame.png,
// flame-inverted.png, sites.png, types.png when shown (docs/REPORT.md's pictures).
//
// It speaks the DevTools protocol over --remote-debugging-pipe (fd 3: commands
// to the browser, fd 4: replies and events; messages end with a NUL byte), so it
// needs nothing but node and the browser. Exit status: 0 when it could check
// (the JSON says what it found), 2 on a usage or browser failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const option = (name) => { const i = args.indexOf(name); return i >= 0 ? args.splice(i, 2)[1] : undefined; };
const screenshot = option('--screenshot');
const viewsDir = option('--views');
const expression = option('--eval');  // also print eval=JSON of this expression, evaluated in the page
const chromium = option('--chromium') || '/usr/bin/chromium';
if (args.length !== 1) {
  console.error('usage: node browser_check.mjs REPORT.html [--screenshot OUT.png] [--views DIR] [--eval EXPR] [--chromium PATH]');
  process.exit(2);
}
const reportUrl = pathToFileURL(resolve(args[0])).href;

const profileDir = mkdtempSync(join(tmpdir(), 'memloupe-chromium-'));
const browser = spawn(chromium, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--disable-extensions', '--mute-audio', `--user-data-dir=${profileDir}`,
  '--remote-debugging-pipe', 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let browserLog = '';
browser.stderr.on('data', (d) => { browserLog = (browserLog + d).slice(-4000); });

const fail = (message) => {
  console.error(`browser_check: ${message}\n--- chromium stderr (tail) ---\n${browserLog}`);
  cleanup();
  process.exit(2);
};
// Generous: on a loaded machine (CI runs builds beside it) Chromium can take a minute to start.
const watchdog = setTimeout(() => fail('timed out after 240 s'), 240_000);
function cleanup() {
  clearTimeout(watchdog);
  try { browser.kill('SIGKILL'); } catch { /* already gone */ }
  try { rmSync(profileDir, { recursive: true, force: true }); } catch { /* best effort */ }
}
browser.on('error', (e) => fail(`cannot start ${chromium}: ${e.message}`));

// ---- the protocol
const toBrowser = browser.stdio[3], fromBrowser = browser.stdio[4];
let nextId = 1;
const pending = new Map();
const listeners = [];
let buffered = '';
fromBrowser.on('data', (chunk) => {
  buffered += chunk.toString('utf8');
  let end;
  while ((end = buffered.indexOf('\0')) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id && pending.has(message.id)) {
      const { ok, ko, method } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) ko(new Error(`${method}: ${message.error.message}`)); else ok(message.result);
    } else if (message.method) {
      for (const l of listeners) l(message);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextId++;
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((ok, ko) => pending.set(id, { ok, ko, method }));
}
function waitFor(method, sessionId) {
  return new Promise((ok) => {
    const l = (m) => {
      if (m.method === method && m.sessionId === sessionId) { listeners.splice(listeners.indexOf(l), 1); ok(m.params); }
    };
    listeners.push(l);
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the check
const errors = [];
try {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  const page = (method, params) => send(method, params, sessionId);
  listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    if (m.method === 'Runtime.exceptionThrown') {
      const d = m.params.exceptionDetails;
      errors.push(`exception: ${d.exception?.description || d.text}`);
    } else if (m.method === 'Runtime.consoleAPICalled' && (m.params.type === 'error' || m.params.type === 'assert')) {
      errors.push(`console.${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(' ')}`);
    } else if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') {
      errors.push(`log: ${m.params.entry.text} ${m.params.entry.url || ''}`);
    }
  });
  await page('Runtime.enable');
  await page('Log.enable');
  await page('Page.enable');
  await page('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });
  const loaded = waitFor('Page.loadEventFired', sessionId);
  const navigated = Date.now();
  await page('Page.navigate', { url: reportUrl });
  await loaded;
  // How long the page took to parse its data and draw every view (for the
  // record: docs/REPORT.md; tests assert nothing on time).
  const loadMs = Date.now() - navigated;

  const evaluate = async (expression) => {
    const r = await page('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) throw new Error(`evaluate ${expression}: ${r.exceptionDetails.exception?.description}`);
    return r.result.value;
  };
  const state = () => evaluate(`(() => {
    const m = window.memloupe;
    if (!m) return null;
    const t = (id) => document.getElementById(id).textContent;
    return { ready: document.body.dataset.ready === '1', summary: m.summary(), drawn: m.drawn(),
      shown: { allocated: t('sum-allocated'), peak: t('sum-peak'), leaked: t('sum-leaked'), range: t('sum-range'),
        allocated_ci: document.getElementById('sum-allocated-ci')?.textContent ?? '' },
      topAllocatedRows: document.querySelectorAll('#sites tr.site').length,
      topAllocatedFirst: document.querySelector('#sites tr.site td')?.textContent ?? '' };
  })()`);
  const canvasInk = (id) => evaluate(`(() => {
    const c = document.getElementById('${id}');
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] !== 0) ink++;
    return { width: c.width, height: c.height, inked: ink };
  })()`);

  // One PNG per view: the element's box (a panel), at 1280 px wide.
  async function shootViews(...list) {
    for (const [name, selector] of list) {
      const r = await evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
        e.scrollIntoView(); const b = e.getBoundingClientRect();
        return { x: b.left + window.scrollX, y: b.top + window.scrollY, width: b.width, height: b.height }; })()`);
      if (!(r.width > 0)) continue;  // a hidden panel (no types, no snapshots)
      await sleep(50);
      const shot = await page('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true,
        clip: { x: Math.max(0, r.x - 8), y: Math.max(0, r.y - 8), width: r.width + 16, height: Math.min(r.height + 16, 1600), scale: 1 } });
      writeFileSync(join(viewsDir, `${name}.png`), Buffer.from(shot.data, 'base64'));
    }
  }

  const evaluated = expression ? JSON.stringify(await evaluate(expression)) : null;
  const before = await state();
  const flameCanvas = await canvasInk('flame');
  const timelineCanvas = await canvasInk('timeline');

  // Drag across the middle of the timeline with the mouse, as a user would.
  const box = await evaluate(`(() => { const r = document.getElementById('timeline').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height }; })()`);
  const y = box.y + box.h / 2;
  const x0 = box.x + 64 + (box.w - 76) * 0.30, x1 = box.x + 64 + (box.w - 76) * 0.62;
  await page('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x0, y });
  await page('Input.dispatchMouseEvent', { type: 'mousePressed', x: x0, y, button: 'left', clickCount: 1 });
  for (let k = 1; k <= 5; k++) {
    await page('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x0 + (x1 - x0) * k / 5, y, button: 'left', buttons: 1 });
  }
  await page('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x1, y, button: 'left', clickCount: 1 });
  await sleep(100);
  const afterDrag = await state();

  // Search and zoom (click the widest frame below the root).
  await evaluate(`window.memloupe.search('main')`);
  const searchResult = await evaluate(`document.getElementById('search-result').textContent`);
  await evaluate(`window.memloupe.search('')`);
  await evaluate(`window.memloupe.clearRange()`);
  const cleared = await state();

  // The site table, the focus on a site and the inverted flame graph, by mouse.
  const click = async (selector) => {
    const at = await evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
      if (!e) return null; e.scrollIntoView({ block: 'center' }); const r = e.getBoundingClientRect();
      return { x: r.left + Math.min(r.width / 2, 30), y: r.top + r.height / 2 }; })()`);
    if (!at) return false;
    await page('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y });
    await page('Input.dispatchMouseEvent', { type: 'mousePressed', x: at.x, y: at.y, button: 'left', clickCount: 1 });
    await page('Input.dispatchMouseEvent', { type: 'mouseReleased', x: at.x, y: at.y, button: 'left', clickCount: 1 });
    await sleep(50);
    return true;
  };
  const views = {};
  views.table = await evaluate('window.memloupe.table()');
  if (await evaluate(`!document.getElementById('page-next').disabled`)) {
    await click('#page-next');
    views.next_page = await evaluate('window.memloupe.table()');
    await click('#page-prev');
  }
  // Sort by the "leaked" column (its header, clicked), and check the order shown.
  await click('#sites th[data-col="3"]');
  views.sorted = await evaluate(`(() => { const t = window.memloupe.table();
    const bytes = [...document.querySelectorAll('#sites tr.site')].map((r) => Number(window.memloupe.siteLeaked(Number(r.dataset.site))));
    let ordered = true; for (let i = 1; i < bytes.length; i++) if (bytes[i] > bytes[i - 1]) ordered = false;
    return { sort: t.sort, descending: t.descending, rows: t.rows, ordered, first_leaked: bytes[0] ?? -1 }; })()`);
  await click('#sites th[data-col="0"]');  // back to allocated, largest first
  const focusCheck = async () => evaluate(`(() => { const d = window.memloupe.drawn();
    return { zoom: d.zoom, zoom_name: d.zoomName, expected: d.focus >= 0 ? window.memloupe.focusName(d.focus) : '',
      focus: d.focus, flame_rects: d.flame, inverted: d.inverted,
      row_marked: document.querySelectorAll('#sites tr.focused').length }; })()`);
  // Click the second row (the first is often the largest, already the whole graph).
  views.focus_row = await evaluate(`Number(document.querySelector('#sites tr.site:nth-of-type(3)')?.dataset.site ?? -1)`);
  await click('#sites tr.site:nth-of-type(3) td');
  views.focus = await focusCheck();
  views.focus_ink = (await canvasInk('flame')).inked;
  await click('#reset-zoom');
  await click('#inverted');
  views.inverted = await evaluate(`(() => { const d = window.memloupe.drawn();
    return { on: d.inverted, flame_rects: d.flame, top: window.memloupe.flameTop() }; })()`);
  views.inverted_ink = (await canvasInk('flame')).inked;
  if (viewsDir) await shootViews(['flame-inverted', '#flame-panel']);
  await click('#sites tr.site:nth-of-type(3) td');
  views.inverted_focus = await focusCheck();
  await click('#reset-zoom');
  await click('#inverted');
  views.back = await evaluate(`(() => { const d = window.memloupe.drawn(); return { on: d.inverted, flame_rects: d.flame, zoom: d.zoom }; })()`);
  views.timeline = await evaluate(`(() => { const d = window.memloupe.drawn();
    return { rss: d.rss, mapped: d.mapped, rss_last_ns: d.rssLast, duration_ns: window.memloupe.duration() }; })()`);
  views.intervals = await evaluate('window.memloupe.intervals()');

  // The retention view, when the report has heap snapshots: click the first
  // root, as a user opens its dominator tree.
  const retentionBefore = await evaluate('window.memloupe.retention ? window.memloupe.retention() : null');
  let retentionAfter = null;
  if (retentionBefore && retentionBefore.roots > 0) {
    const at = await evaluate(`(() => { const s = document.querySelector('#retention summary.root');
      s.scrollIntoView(); const r = s.getBoundingClientRect(); return { x: r.left + 40, y: r.top + r.height / 2 }; })()`);
    await page('Input.dispatchMouseEvent', { type: 'mousePressed', x: at.x, y: at.y, button: 'left', clickCount: 1 });
    await page('Input.dispatchMouseEvent', { type: 'mouseReleased', x: at.x, y: at.y, button: 'left', clickCount: 1 });
    await sleep(100);
    retentionAfter = await evaluate('window.memloupe.retention()');
  }

  if (screenshot) {
    // The picture for the docs: whole trace, a range dragged.
    await evaluate(`window.memloupe.search(''); window.scrollTo(0, 0)`);
    await page('Input.dispatchMouseEvent', { type: 'mousePressed', x: x0, y, button: 'left', clickCount: 1 });
    await page('Input.dispatchMouseEvent', { type: 'mouseMoved', x: x1, y, button: 'left', buttons: 1 });
    await page('Input.dispatchMouseEvent', { type: 'mouseReleased', x: x1, y, button: 'left', clickCount: 1 });
    await sleep(100);
    const height = await evaluate('document.documentElement.scrollHeight');
    await page('Emulation.setDeviceMetricsOverride', { width: 1280, height: Math.min(height, 2400), deviceScaleFactor: 1, mobile: false });
    await sleep(200);
    const shot = await page('Page.captureScreenshot', { format: 'png' });
    writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  }

  if (viewsDir) {
    await evaluate(`window.memloupe.search(''); window.memloupe.clearRange(); window.scrollTo(0, 0)`);
    await shootViews(['timeline', '#timeline-panel'], ['flame', '#flame-panel'], ['sites', '#sites-panel'],
      ['types', '#types-panel']);
  }

  await sleep(50);
  const lines = [`errors=${errors.length}`, ...errors.map((e) => `error=${e.replace(/\n/g, ' ')}`),
    `load_ms=${loadMs}`, ...(evaluated !== null ? [`eval=${evaluated}`] : []), `flame_inked=${flameCanvas.inked}`, `timeline_inked=${timelineCanvas.inked}`, `search=${searchResult}`];
  const flat = (prefix, st) => {
    if (!st) return lines.push(`${prefix}.ready=false`);
    lines.push(`${prefix}.ready=${st.ready}`, `${prefix}.flame_rects=${st.drawn.flame}`,
      `${prefix}.timeline_points=${st.drawn.timeline}`, `${prefix}.top_allocated_rows=${st.topAllocatedRows}`,
      `${prefix}.top_allocated_first=${st.topAllocatedFirst}`);
    for (const [k, v] of Object.entries(st.summary)) lines.push(`${prefix}.${k}=${v}`);
    for (const [k, v] of Object.entries(st.shown)) lines.push(`${prefix}.shown_${k}=${v}`);
  };
  flat('before', before);
  flat('after', afterDrag);
  flat('cleared', cleared);
  const flatten = (prefix, v) => {
    if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) flatten(`${prefix}.${k}`, x);
    else lines.push(`${prefix}=${v}`);
  };
  for (const [k, v] of Object.entries(views)) flatten(k, v);
  for (const [prefix, r] of [['retention', retentionBefore], ['retention_opened', retentionAfter]]) {
    if (r) for (const [k, v] of Object.entries(r)) lines.push(`${prefix}.${k}=${v}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  await send('Browser.close').catch(() => {});
  cleanup();
  process.exit(0);
} catch (e) {
  fail(e.stack || String(e));
}
