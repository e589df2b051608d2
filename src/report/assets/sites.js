// sites.js — the site table: every site entry (one per allocation site, or
// the sites merged past the size budget), sortable by any column, filtered by
// a regular expression, paged; a row's click focuses the flame graph on it.
// Part of the memloupe HTML report's script. The parts are joined in the order
// util, data, timeline, flame, sites, page, retention inside one function scope
// (assets/report.html), so each sees the others' top-level names.

// Columns: [title, amount of values.per, bytes or blocks].
const COLUMNS = [
  ['allocated', 'allocated', 'bytes'], ['allocations', 'allocated', 'blocks'], ['live at peak', 'peak', 'bytes'],
  ['leaked', 'leaked', 'bytes'], ['leaked blocks', 'leaked', 'blocks'],
];
const PAGE_ROWS = 50;
const table = { sort: 0, descending: true, page: 0, filter: null, rows: [] };

function columnValue(s, c) {
  const a = values.per[s][COLUMNS[c][1]];
  return COLUMNS[c][2] === 'bytes' ? a[0] : a[1];
}
function drawSites() {
  const rows = [];
  for (let s = 0; s < SITES; s++) {
    // In a range, the sites with nothing in it are left out.
    if (state.range && !COLUMNS.some((_, c) => columnValue(s, c) > 0)) continue;
    if (table.filter && !table.filter.test(siteName(s)) && !table.filter.test(siteTitle(s))) continue;
    rows.push(s);
  }
  const c = table.sort, sign = table.descending ? -1 : 1;
  if (c < 0) rows.sort((a, b) => sign * siteName(a).localeCompare(siteName(b)));
  else rows.sort((a, b) => sign * (columnValue(a, c) - columnValue(b, c)) || a - b);
  table.rows = rows;
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
  table.page = Math.min(table.page, pages - 1);
  const box = el('sites');
  box.replaceChildren();
  const head = document.createElement('tr');
  const th = (label, col, cls) => {
    const h = text('th', label + (table.sort === col ? (table.descending ? ' ▾' : ' ▴') : ''), cls + ' sortable' + (table.sort === col ? ' sorted' : ''));
    h.dataset.col = String(col);
    h.addEventListener('click', () => sortSites(col));
    head.append(h);
  };
  th('site (own frame)', -1, '');
  COLUMNS.forEach((col, i) => th(col[0], i, 'num'));
  box.append(head);
  if (!rows.length) {
    const tr = document.createElement('tr');
    const td = text('td', state.range ? 'nothing in this range' : 'no sites', 'empty');
    td.colSpan = COLUMNS.length + 1;
    tr.append(td);
    box.append(tr);
  }
  const totalsNow = totals();
  for (const s of rows.slice(table.page * PAGE_ROWS, (table.page + 1) * PAGE_ROWS)) {
    const site = D.sites[s];
    const tr = document.createElement('tr');
    tr.className = 'site' + (state.focus === s ? ' focused' : '');
    tr.dataset.site = String(s);
    const fn = text('td', siteName(s), 'fn');
    if (site.l && S[site.l[2]]) fn.append(text('span', ' ' + S[site.l[2]].replace(/^.*\//, ''), 'where'));
    if (site.l && S[site.l[4]]) fn.append(text('div', '← ' + S[site.l[4]], 'via'));
    if (site.l && S[site.l[3]]) fn.append(text('div', 'via ' + S[site.l[3]], 'via'));
    fn.title = siteTitle(s);
    tr.append(fn);
    COLUMNS.forEach((col) => {
      const a = values.per[s][col[1]];
      let cell;
      if (col[2] === 'bytes') {
        const e = bytesEstimate(a);
        const total = totalsNow[col[1]][0];
        cell = text('td', fmtBytes(e.value), 'num');
        cell.title = total > 0 ? (100 * e.value / total).toFixed(1) + '% of all' : '';
        if (!EXACT && e.value > 0) cell.append(text('span', bytesInterval(e), 'ci'));
      } else {
        const e = objectsEstimate(a);
        cell = text('td', fmtCount(e.value), 'num');
        if (!EXACT && e.value > 0) cell.append(text('span', countInterval(e), 'ci'));
      }
      tr.append(cell);
    });
    tr.addEventListener('click', () => { focusSite(s); drawSites(); el('flame-box').scrollIntoView({ block: 'nearest' }); });
    box.append(tr);
  }
  el('page-info').textContent = rows.length ? 'sites ' + (table.page * PAGE_ROWS + 1) + '–' +
    Math.min(rows.length, (table.page + 1) * PAGE_ROWS) + ' of ' + rows.length : '';
  el('page-prev').disabled = table.page === 0;
  el('page-next').disabled = table.page >= pages - 1;
}
function sortSites(col) {
  if (table.sort === col) table.descending = !table.descending; else { table.sort = col; table.descending = col >= 0; }
  table.page = 0;
  drawSites();
}
