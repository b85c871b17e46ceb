// The DOM the Disks page and the disk picker share: the filter bar and the
// list of disks grouped by node. What is shown is decided in
// disk-filter.js; this module only draws it, keyed by node and by disk so
// that an update touches only what changed.
//
// Groups start collapsed and a collapsed group has no rows in the DOM: at
// 10,000 disks only the 500 group headers are there until someone opens a
// node. When everything the filter shows fits in AUTO_EXPAND_ROWS rows
// (a small cluster, or a narrow search) the groups open by themselves;
// Expand all opens groups up to MAX_EXPANDED_ROWS rows and says so;
// Collapse all closes every group until the filter changes.
import { h, field, input, formatBytes } from './_shared.js';
import { DISK_TYPES, UNCLAIMED, emptyFilter, parseSize, formatCount } from './disk-filter.js';

export const AUTO_EXPAND_ROWS = 100;
export const MAX_EXPANDED_ROWS = 1000;

// ensureStylesheet links console.css (same origin, so style-src 'self'
// allows it) into a page whose HTML does not, such as the shared sheet.
export function ensureStylesheet() {
  const href = new URL('./console.css', import.meta.url).href;
  if ([...document.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) return;
  document.head.append(h('link', { attrs: { rel: 'stylesheet', href } }));
}

// nodeLabel names a group's node; '' is a disk no node reported yet (or, in
// the picker, a listed name with no Disk).
export function nodeLabel(node) {
  return node || '(no node)';
}

// truncated is text cut to its box with an ellipsis, the whole of it in
// the tooltip.
export function truncated(value, tag = 'span') {
  const textValue = value === undefined || value === null || value === '' ? '—' : String(value);
  return h(tag, { class: 'cr-truncate', text: textValue, attrs: { title: textValue } });
}

// heldBadge replaces the Available badge of a disk another pool holds.
export function heldBadge(pool) {
  return h('span', { class: 'plugin-text', attrs: { 'data-badge': 'neutral', 'data-held-by': pool }, text: `○ Held by ${pool}` });
}

// filterBar is the filters both pages offer. onChange() is called after
// each change (text fields after a short pause); read() is the filter.
// With picker, it also offers "Hide disks that cannot be picked".
export function filterBar({ picker = false, onChange }) {
  const search = input('disk-search', { type: 'search', placeholder: 'Name, path, model or serial', autocomplete: 'off' });
  const nodes = h('select', { class: 'plugin-select', name: 'disk-node', id: 'field-disk-node', multiple: true, size: 4 });
  const type = h('select', { class: 'plugin-select', name: 'disk-type', id: 'field-disk-type' },
    h('option', { value: '', text: 'Any type' }), DISK_TYPES.map((t) => h('option', { value: t, text: t })));
  const state = h('select', { class: 'plugin-select', name: 'disk-state', id: 'field-disk-state' },
    h('option', { value: '', text: 'Any state' }), h('option', { value: 'Available', text: 'Available' }),
    h('option', { value: 'InUse', text: 'In use' }), h('option', { value: 'Missing', text: 'Missing' }));
  const minSize = input('disk-size-min', { placeholder: 'e.g. 1Ti', autocomplete: 'off', size: 8 });
  const maxSize = input('disk-size-max', { placeholder: 'e.g. 8 TiB', autocomplete: 'off', size: 8 });
  const pool = h('select', { class: 'plugin-select', name: 'disk-pool', id: 'field-disk-pool' });
  const hide = picker ? h('input', { class: 'plugin-checkbox', type: 'checkbox', name: 'hide-unpickable', id: 'field-hide-unpickable' }) : null;
  const sizeError = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'size-error', 'aria-live': 'polite' } });
  const clear = h('button', { class: 'plugin-button plugin-button-secondary', type: 'button', text: 'Clear filters', attrs: { 'data-action': 'clear-filters', name: 'clear-filters' } });

  // Typing filters on the next frame: at most one pass a frame however
  // fast one types, and a filter shows within a frame of the keystroke
  // (a pause of its own would be the whole 100 ms budget).
  let frame = 0;
  const soon = () => { if (!frame) frame = requestAnimationFrame(() => { frame = 0; onChange(); }); };
  const now = () => { cancelAnimationFrame(frame); frame = 0; onChange(); };
  // Inside the pool form, Enter in a filter field filters; it must not submit the pool.
  for (const el of [search, minSize, maxSize]) el.addEventListener('keydown', (event) => { if (event.key === 'Enter') { event.preventDefault(); now(); } });
  search.addEventListener('input', soon);
  minSize.addEventListener('input', soon);
  maxSize.addEventListener('input', soon);
  for (const el of [nodes, type, state, pool, hide]) if (el) el.addEventListener('change', now);
  clear.addEventListener('click', () => {
    search.value = ''; minSize.value = ''; maxSize.value = ''; type.value = ''; state.value = ''; pool.value = '';
    for (const o of nodes.options) o.selected = false;
    if (hide) hide.checked = false;
    now();
  });

  const element = h('div', { class: 'cr-filters', attrs: { role: 'search', 'aria-label': 'Filter disks' } },
    h('div', { class: 'cr-filter cr-filter-wide' }, field('Search', search)),
    h('div', { class: 'cr-filter cr-filter-wide' }, field('Nodes', nodes, 'None selected: every node.')),
    h('div', { class: 'cr-filter' }, field('Type', type)),
    h('div', { class: 'cr-filter' }, field('State', state)),
    h('div', { class: 'cr-filter' }, field('Size from', minSize)),
    h('div', { class: 'cr-filter' }, field('Size up to', maxSize)),
    h('div', { class: 'cr-filter' }, field('Claimed by', pool)),
    hide ? h('div', { class: 'cr-filter cr-filter-check' },
      hide, h('label', { class: 'plugin-label', attrs: { for: hide.id }, text: 'Hide disks that cannot be picked' })) : null,
    h('div', { class: 'cr-filter cr-filter-check' }, clear),
    sizeError);

  const readSize = (el) => {
    const bytes = parseSize(el.value);
    const bad = Number.isNaN(bytes);
    el.setAttribute('aria-invalid', bad ? 'true' : 'false');
    return bad ? null : bytes;
  };

  let nodeKey = '';
  let poolKey = '';
  return {
    element,
    read() {
      const f = emptyFilter();
      f.search = search.value;
      f.nodes = [...nodes.selectedOptions].map((o) => o.value);
      f.type = type.value;
      f.state = state.value;
      f.minBytes = readSize(minSize);
      f.maxBytes = readSize(maxSize);
      const bad = [minSize, maxSize].filter((el) => el.getAttribute('aria-invalid') === 'true');
      sizeError.textContent = bad.length ? `Not a size: ${bad.map((el) => `"${el.value}"`).join(', ')}. Write a number and a unit, e.g. 500Gi, 4 TiB or 2TB; the filter ignores it until then.` : '';
      f.pool = pool.value;
      f.pickableOnly = Boolean(hide && hide.checked);
      return f;
    },
    // setChoices offers the nodes and pools there are, keeping what is
    // selected (a selected node that has gone stays offered).
    setChoices({ nodes: nodeList, pools: poolList }) {
      const chosenNodes = new Set([...nodes.selectedOptions].map((o) => o.value));
      const allNodes = [...new Set([...nodeList, ...chosenNodes])];
      const nk = allNodes.join('\n');
      if (nk !== nodeKey) {
        nodeKey = nk;
        nodes.replaceChildren(...allNodes.map((n) => h('option', { value: n, text: nodeLabel(n), selected: chosenNodes.has(n), attrs: { title: nodeLabel(n) } })));
      }
      const chosenPool = pool.value;
      const allPools = [...new Set([...poolList, ...(chosenPool && chosenPool !== UNCLAIMED ? [chosenPool] : [])])];
      const pk = allPools.join('\n');
      if (pk !== poolKey || pool.options.length === 0) {
        poolKey = pk;
        pool.replaceChildren(h('option', { value: '', text: 'Any pool, or none' }), h('option', { value: UNCLAIMED, text: 'No pool' }),
          ...allPools.map((p) => h('option', { value: p, text: p })));
        pool.value = chosenPool;
      }
    },
  };
}

// groupedDisks draws groups (disk-filter.js groupByNode) as node sections.
// columns: [{label, className}] of a disk's row; row(entry) makes its <tr>
// (with data-row = the disk's name), made again only when signature(entry)
// changes, and refresh(tr, entry), when given, brings a kept row up to date
// in place (a checkbox's checked state: making the row again would take
// the keyboard focus from it); counts(group) is a group's count line; groupControl, when
// given, makes a control put before a group's toggle (the picker's "every
// disk of this node" checkbox), and updateGroupControl(el, group) keeps it
// current.
export function groupedDisks({ columns, row, signature, refresh = null, counts, groupControl = null, updateGroupControl = null, emptyText }) {
  const list = h('div', { class: 'cr-groups', attrs: { 'data-role': 'disk-groups' } });
  const note = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'expand-note', 'aria-live': 'polite' } });
  const empty = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'no-disks' } });
  const element = h('div', {}, note, empty, list);
  const sections = new Map();
  const explicit = new Map();
  let mode = 'auto';
  let autoOff = false; // Collapse all: small results stay closed until the filter changes
  let last = [];
  let lastTotal = 0;
  let serial = 0;

  // expandedNodes decides which groups are open now.
  const expandedNodes = (groups, total) => {
    const open = new Set();
    let budget = MAX_EXPANDED_ROWS;
    let capped = 0;
    for (const g of groups) {
      if (explicit.has(g.node)) {
        if (explicit.get(g.node)) open.add(g.node);
        continue;
      }
      if (mode === 'expanded') {
        if (g.disks.length <= budget || open.size === 0) { open.add(g.node); budget -= g.disks.length; } else capped += 1;
      } else if (mode === 'auto' && !autoOff && total <= AUTO_EXPAND_ROWS) open.add(g.node);
    }
    return { open, capped };
  };

  const sectionFor = (g) => {
    let s = sections.get(g.node);
    if (s) return s;
    serial += 1;
    const bodyId = `disk-group-${serial}`;
    const countsEl = h('span', { class: 'cr-group-counts', attrs: { 'data-role': 'group-counts', id: `${bodyId}-counts` } });
    const toggle = h('button', {
      class: 'cr-group-toggle', type: 'button',
      attrs: { 'aria-expanded': 'false', 'aria-controls': bodyId, 'aria-describedby': `${bodyId}-counts`, 'data-action': 'toggle-group', 'data-node': g.node },
    }, h('span', { class: 'cr-caret', attrs: { 'aria-hidden': 'true' }, text: '▸' }), truncated(nodeLabel(g.node)));
    const body = h('div', { class: 'cr-group-body', id: bodyId });
    const control = groupControl ? groupControl(g) : null;
    const section = h('section', { class: 'cr-group', attrs: { 'data-node': g.node } },
      h('div', { class: 'cr-group-header' }, control, toggle, countsEl), body);
    s = { section, toggle, countsEl, body, control, rows: new Map(), tbody: null, open: false };
    toggle.addEventListener('click', () => {
      explicit.set(g.node, !s.open);
      draw(last, lastTotal);
    });
    sections.set(g.node, s);
    return s;
  };

  const drawRows = (s, g) => {
    if (!s.tbody) {
      s.tbody = h('tbody');
      s.body.replaceChildren(h('table', { class: 'plugin-table cr-disk-table' },
        h('colgroup', {}, columns.map((c) => h('col', { class: c.className || '' }))),
        h('thead', {}, h('tr', {}, columns.map((c) => h('th', { attrs: { scope: 'col' }, text: c.label })))),
        s.tbody));
    }
    const keep = new Set();
    g.disks.forEach((entry, i) => {
      keep.add(entry.name);
      const sig = signature(entry);
      let cached = s.rows.get(entry.name);
      if (!cached || cached.sig !== sig) {
        const tr = row(entry);
        if (cached) cached.tr.replaceWith(tr);
        cached = { tr, sig };
        s.rows.set(entry.name, cached);
      } else if (refresh) refresh(cached.tr, entry);
      if (s.tbody.children[i] !== cached.tr) s.tbody.insertBefore(cached.tr, s.tbody.children[i] || null);
    });
    for (const [name, cached] of s.rows) if (!keep.has(name)) { cached.tr.remove(); s.rows.delete(name); }
  };

  const draw = (groups, total) => {
    last = groups;
    lastTotal = total;
    const { open, capped } = expandedNodes(groups, total);
    const keep = new Set();
    groups.forEach((g, i) => {
      keep.add(g.node);
      const s = sectionFor(g);
      const text = counts(g);
      if (s.countsEl.textContent !== text) s.countsEl.textContent = text;
      if (s.control && updateGroupControl) updateGroupControl(s.control, g);
      const isOpen = open.has(g.node);
      if (isOpen !== s.open) {
        s.open = isOpen;
        s.toggle.setAttribute('aria-expanded', String(isOpen));
        s.toggle.firstChild.textContent = isOpen ? '▾' : '▸';
        s.section.classList.toggle('cr-open', isOpen);
        if (!isOpen) { s.body.replaceChildren(); s.rows.clear(); s.tbody = null; }
      }
      if (isOpen) drawRows(s, g);
      if (list.children[i] !== s.section) list.insertBefore(s.section, list.children[i] || null);
    });
    for (const [node, s] of sections) if (!keep.has(node)) { s.section.remove(); sections.delete(node); }
    empty.textContent = groups.length === 0 ? emptyText : '';
    note.textContent = capped > 0
      ? `Expanded ${formatCount(open.size)} of ${formatCount(groups.length)} nodes: at most ${formatCount(MAX_EXPANDED_ROWS)} disks are shown at once. Narrow the filter, or open a node by hand.`
      : '';
  };

  return {
    element,
    update: draw,
    expandAll() { mode = 'expanded'; autoOff = false; explicit.clear(); draw(last, lastTotal); },
    collapseAll() { mode = 'auto'; autoOff = true; explicit.clear(); draw(last, lastTotal); },
    // filterChanged is called before drawing a new filter's groups: what
    // Collapse all closed may open by itself again when the result is small
    // (a node opened or closed by hand stays so).
    filterChanged() { autoOff = false; },
    // openRows is how many disk rows are in the DOM.
    openRows() { let n = 0; for (const s of sections.values()) n += s.rows.size; return n; },
  };
}

// groupCounts is a node group's count line: disks, per state, and bytes.
export function groupCounts(g, { selected = false } = {}) {
  const parts = [`${formatCount(g.counts.disks)} ${g.counts.disks === 1 ? 'disk' : 'disks'}`];
  if (g.counts.Available) parts.push(`${formatCount(g.counts.Available)} Available`);
  if (g.counts.InUse) parts.push(`${formatCount(g.counts.InUse)} In use`);
  if (g.counts.Missing) parts.push(`${formatCount(g.counts.Missing)} Missing`);
  if (g.bytes) parts.push(formatBytes(g.bytes));
  if (selected) parts.push(`${formatCount(g.counts.selected)} selected`);
  return parts.join(' · ');
}
