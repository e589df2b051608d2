// retention.js — the retention view: for each heap snapshot, its leak kinds and
// its roots by retained bytes; a root opens into its dominator tree (nested
// <details>, so expanding needs no script). Data: JSON in #memloupe-retention,
// written by src/report/retention_html.cc, or null when the trace holds no
// snapshot (the panel stays hidden). Joined last, after page.js, in the report's
// one function scope; it adds window.memloupe.retention() for tests.
//
//   snapshots[]  {label, time_ns, at_exit, reachable_*, shared_*, leaks: {kind_bytes, kind_blocks},
//                 roots_total, roots[], tree_nodes}
//   roots[]      {kind, name, where, retained_bytes, retained_blocks, reachable_bytes?, children[],
//                 more_count?, more_bytes?}   (kind "shared": a block no single root holds)
//   children[]   {block, site, retained_bytes, retained_blocks, children[], more_count?, more_bytes?}

const R = JSON.parse(document.getElementById('memloupe-retention').textContent);

function retainedText(n) {
  return fmtBytes(n.retained_bytes) + ' in ' + fmtCount(n.retained_blocks) + (n.retained_blocks === 1 ? ' block' : ' blocks');
}

// One tree level: a <details> per child (a plain line when it has none), and a
// last line summing the children the data left out.
function treeLevel(parent, node) {
  for (const c of node.children) {
    const line = document.createElement(c.children.length || c.more_count ? 'details' : 'div');
    line.className = 'ret-node';
    const head = document.createElement(line.tagName === 'DETAILS' ? 'summary' : 'span');
    head.append(text('span', retainedText(c), 'ret-bytes'), text('span', c.block, 'ret-block'),
      text('span', c.site, 'ret-site'));
    line.append(head);
    if (line.tagName === 'DETAILS') treeLevel(line, c);
    parent.append(line);
  }
  if (node.more_count) {
    parent.append(text('div', '… ' + fmtCount(node.more_count) + ' more: ' + fmtBytes(node.more_bytes), 'ret-more'));
  }
}

function drawRetention() {
  if (!R || !R.snapshots.length) return;
  el('retention-panel').hidden = false;
  const box = el('retention');
  for (const s of R.snapshots) {
    const section = document.createElement('div');
    section.className = 'ret-snapshot';
    section.append(text('h3', 'Snapshot “' + s.label + '” at ' + fmtTime(s.time_ns) + (s.at_exit ? ' (at exit)' : '')));
    const L = s.leaks;
    section.append(text('div', 'reachable ' + fmtBytes(s.reachable_bytes) + ' in ' + fmtCount(s.reachable_blocks) +
      ' blocks, shared between roots ' + fmtBytes(s.shared_bytes) + ' · definitely lost ' +
      fmtBytes(L.definitely_lost_bytes) + ' · indirectly lost ' + fmtBytes(L.indirectly_lost_bytes) +
      ' · possibly lost ' + fmtBytes(L.possibly_lost_bytes) + ' · still reachable ' +
      fmtBytes(L.still_reachable_bytes), 'ret-summary'));
    for (const r of s.roots) {
      // A root that retains nothing has no tree to open.
      const opens = r.children.length > 0 || r.more_count;
      const root = document.createElement(opens ? 'details' : 'div');
      root.className = 'ret-root';
      const head = document.createElement(opens ? 'summary' : 'div');
      head.className = 'root';
      head.append(text('span', retainedText(r), 'ret-bytes'), text('span', r.kind, 'ret-kind'), text('span', r.name, 'ret-name'),
        text('span', r.where, 'ret-site'));
      if (r.reachable_bytes !== undefined) head.append(text('span', 'reachable ' + fmtBytes(r.reachable_bytes), 'ret-reach'));
      root.append(head);
      treeLevel(root, r);
      section.append(root);
    }
    if (s.roots_total > s.roots.length) {
      section.append(text('div', '… ' + fmtCount(s.roots_total - s.roots.length) + ' more roots (memloupe retention shows them all)', 'ret-more'));
    }
    box.append(section);
  }
}

drawRetention();
window.memloupe.retention = () => {
  const first = document.querySelector('#retention .ret-root');
  return {
    snapshots: R ? R.snapshots.length : 0,
    roots: document.querySelectorAll('#retention .ret-root').length,
    first_root: first ? first.querySelector('.ret-name').textContent : '',
    first_retained: R && R.snapshots.length && R.snapshots[0].roots.length ? R.snapshots[0].roots[0].retained_bytes : 0,
    open: document.querySelectorAll('#retention details[open]').length,
    // Tree lines a user sees: no closed <details> above them.
    visible_nodes: [...document.querySelectorAll('#retention .ret-node')]
      .filter((n) => n.parentElement.closest('details:not([open])') === null).length,
  };
};
