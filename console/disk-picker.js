// The disk picker shared by the DiskPool create and edit forms.
//
// It offers every Disk, grouped by node and filtered as the Disks page is
// (disk-filter.js decides, disk-groups.js draws): free disks can be
// picked, a disk another pool holds says so ("Held by <pool>") and cannot
// be, and whatever the pool already lists stays listed and checked even
// when the picker cannot offer it (the Disk is gone, or another pool won
// it): the saved disk array is replaced whole, so an entry dropped here
// would silently leave the pool.
//
// Disks arrive through update(batch) from live.js's follow (pages first,
// then watch events), so the picker is usable while 10,000 disks load and
// stays current while it is open.
//
// Benchmark hooks: the root (data-role="disk-picker") counts filter
// applications in data-filter-generation and selection changes in
// data-selection-generation, and has data-loaded="complete" once every
// page is in; the filters are named disk-search, disk-node (multiple),
// disk-type, disk-state; the button select-filtered selects every
// pickable disk the filter shows; the summary is
// data-role="selection-summary".
import { h, hint, formatBytes, badge, button } from './_shared.js';
import { isRetired } from './retirement-pages.js';
import {
  DISK_TYPES, diskFacts, goneFacts, pickerEntry, compileFilter, groupByNode, nodeNames, poolNames, selectAll, deselectAll,
  selectionState, summarizeSelection, summarySentences, formatCount,
} from './disk-filter.js';
import { filterBar, groupedDisks, groupCounts, truncated, heldBadge, ensureStylesheet, nodeLabel } from './disk-groups.js';
import { loadingSentence, followProblem } from './live.js';

// The consequence of unchecking a disk the pool already has, as the
// reconciler will carry it out.
export const REMOVAL_WARNING = 'It leaves the CephCluster device list, but its OSD keeps running until it is purged from Ceph manually, and data may rebalance in the meantime.';

const COLUMNS = [
  { label: 'Use', className: 'cr-col-check' },
  { label: 'Disk', className: 'cr-col-name' },
  { label: 'Path', className: 'cr-col-stable' },
  { label: 'Size', className: 'cr-col-size' },
  { label: 'Type', className: 'cr-col-type' },
  { label: 'State', className: 'cr-col-state' },
];

// createDiskPicker returns {element, selectedDisks(), disks(), keep(name),
// update(batch), problem(err, info)}. poolName is the pool being edited
// ('' when creating), selected its spec.disks; disks, when given, is the
// whole Disk list at once (else update() brings them). With onRetire, the
// removal warning offers "Retire instead" for each unchecked disk the pool
// gives to Ceph (claimed by this pool, not retired): onRetire(name) is
// called and the pool's list is left alone. onChange, when given, is
// called after the selection or the Disks changed; disks() are the Disk
// objects the picker knows.
export function createDiskPicker({ disks = null, poolName = '', selected = [], onRetire = null, onChange = null }) {
  ensureStylesheet();
  const saved = new Set(selected);
  let checked = new Set(selected);
  const known = new Map(); // name → picker entry of a Disk that exists
  let complete = false;
  let filterGeneration = 0;
  let selectionGeneration = 0;
  let visible = [];
  let groupsByNode = new Map();

  const progress = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'load-progress', 'aria-live': 'polite' }, text: 'Loading disks…' });
  const problemSlot = h('div', { attrs: { 'data-role': 'live-problem' } });
  const matchCount = h('p', { class: 'plugin-text', attrs: { 'data-role': 'match-count' } });
  const summary = h('div', { class: 'cr-summary', attrs: { 'data-role': 'selection-summary', 'aria-live': 'polite' } });
  const warning = h('div', { attrs: { 'data-warning': 'removal', 'aria-live': 'polite' } });

  const filters = filterBar({
    picker: true,
    onChange: () => {
      groups.filterChanged();
      draw();
      filterGeneration += 1;
      element.dataset.filterGeneration = String(filterGeneration);
    },
  });

  const bulk = {
    filtered: button('Select every pickable disk shown', () => changeSelection(selectAll(checked, visible)), { secondary: true, name: 'select-filtered' }),
    types: DISK_TYPES.map((t) => ({ type: t, el: button(`Select shown ${t}`, () => changeSelection(selectAll(checked, visible.filter((e) => e.type === t))), { secondary: true, name: `select-type-${t}` }) })),
    none: button('Deselect disks shown', () => changeSelection(deselectAll(checked, visible)), { secondary: true, name: 'deselect-filtered' }),
  };
  for (const el of [bulk.filtered, bulk.none, ...bulk.types.map((b) => b.el)]) el.setAttribute('name', el.dataset.action);

  const boxes = new WeakMap(); // row → its checkbox
  const groups = groupedDisks({
    columns: COLUMNS,
    row: (entry) => {
      const tr = entryRow(entry, checked.has(entry.name), (on) => toggle(entry.name, on));
      boxes.set(tr, tr.querySelector('input[data-disk]'));
      return tr;
    },
    signature: (e) => `${e.resourceVersion}|${e.pickable}|${e.note}|${e.held}`,
    refresh: (tr, e) => { const box = boxes.get(tr); if (box) box.checked = checked.has(e.name); },
    counts: (g) => groupCounts(g, { selected: true }),
    groupControl: (g) => {
      const el = h('input', {
        class: 'plugin-checkbox', type: 'checkbox', name: 'select-node',
        attrs: { 'data-node': g.node, 'aria-label': `Select every pickable disk shown on node ${nodeLabel(g.node)}` },
      });
      el.addEventListener('change', () => {
        const group = groupsByNode.get(g.node);
        if (!group) return;
        changeSelection(el.checked ? selectAll(checked, group.disks) : deselectAll(checked, group.disks));
      });
      return el;
    },
    updateGroupControl: (el, g) => {
      const state = selectionState(checked, g.disks);
      el.checked = state === 'all';
      el.indeterminate = state === 'some';
      el.disabled = g.counts.pickable === 0;
    },
    emptyText: 'No disks to show: none discovered yet, or none matches the filter.',
  });

  const element = h('fieldset', {
    class: 'plugin-fieldset cr-picker',
    attrs: { 'data-disk-picker': 'true', 'data-role': 'disk-picker', 'data-filter-generation': '0', 'data-selection-generation': '0' },
  },
  h('legend', { class: 'plugin-legend', text: 'Disks' }),
  progress, problemSlot, filters.element,
  h('div', { class: 'plugin-actions' }, bulk.filtered, bulk.types.map((b) => b.el), bulk.none,
    button('Expand all', () => groups.expandAll(), { secondary: true, name: 'expand-all' }),
    button('Collapse all', () => groups.collapseAll(), { secondary: true, name: 'collapse-all' })),
  summary, matchCount, groups.element, warning);

  const entries = () => {
    const all = new Map(known);
    if (complete) for (const name of saved) if (!all.has(name)) all.set(name, pickerEntry(goneFacts(name), poolName, saved));
    return all;
  };
  let current = new Map();

  function draw() {
    current = entries();
    const all = [...current.values()];
    filters.setChoices({ nodes: nodeNames(all), pools: poolNames(all) });
    visible = all.filter(compileFilter(filters.read()));
    const grouped = groupByNode(visible, checked);
    groupsByNode = new Map(grouped.map((g) => [g.node, g]));
    groups.update(grouped, visible.length);
    matchCount.textContent = visible.length === all.length
      ? `${formatCount(all.length)} ${all.length === 1 ? 'disk' : 'disks'} on ${formatCount(grouped.length)} ${grouped.length === 1 ? 'node' : 'nodes'}.`
      : `Showing ${formatCount(visible.length)} of ${formatCount(all.length)} disks, on ${formatCount(grouped.length)} ${grouped.length === 1 ? 'node' : 'nodes'}.`;
    const pickable = visible.filter((e) => e.pickable).length;
    bulk.filtered.textContent = `Select every pickable disk shown (${formatCount(pickable)})`;
    bulk.filtered.disabled = !complete || pickable === 0;
    for (const b of bulk.types) {
      const n = visible.filter((e) => e.pickable && e.type === b.type).length;
      b.el.textContent = `Select shown ${b.type} (${formatCount(n)})`;
      b.el.disabled = !complete || n === 0;
    }
    bulk.none.disabled = !visible.some((e) => checked.has(e.name));
    drawSummary();
  }

  function drawSummary() {
    const words = summarySentences(summarizeSelection(current, checked, poolName), formatBytes);
    summary.replaceChildren(
      h('p', { class: 'plugin-text', attrs: { 'data-summary': 'selection' }, text: words.selection }),
      h('p', { class: 'plugin-text', attrs: { 'data-summary': 'replication' }, text: words.replication }));
  }

  const retirable = (entry) => Boolean(onRetire && poolName && entry.disk && entry.claimedBy === poolName && !isRetired(entry.disk));
  const refreshWarning = () => showRemovalWarning(warning, [...saved].filter((n) => !checked.has(n)).map((n) => current.get(n) || pickerEntry(goneFacts(n), poolName, saved)), retirable, onRetire);

  const changed = () => { if (onChange) onChange(); };

  function changeSelection(next) {
    checked = next;
    draw();
    refreshWarning();
    selectionGeneration += 1;
    element.dataset.selectionGeneration = String(selectionGeneration);
    changed();
  }
  function toggle(name, on) {
    const next = new Set(checked);
    if (on) next.add(name); else next.delete(name);
    changeSelection(next);
  }
  // keep checks a disk again: a retirement, not the pool's list, takes it out.
  const keep = (name) => toggle(name, true);

  let drawPending = false;
  function update(batch) {
    for (const obj of batch.deleted) known.delete(obj.metadata.name);
    for (const obj of batch.upserted) known.set(obj.metadata.name, pickerEntry(diskFacts(obj), poolName, saved));
    if (batch.phase === 'listing') progress.textContent = loadingSentence('disks', batch.progress);
    if (batch.phase === 'listed' && !complete) {
      complete = true;
      progress.textContent = '';
      element.dataset.loaded = 'complete';
    }
    problemSlot.replaceChildren();
    if (batch.phase !== 'watching') { draw(); refreshWarning(); changed(); return; }
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => { drawPending = false; draw(); refreshWarning(); changed(); });
  }

  function problem(err, info = {}) {
    if (!err) { problemSlot.replaceChildren(); return; }
    problemSlot.replaceChildren(followProblem(err, info, { listed: complete, noun: 'disks' }));
  }

  // Keep the saved order, then add new picks in the order shown.
  const selectedDisks = () => {
    const order = groupByNode([...current.values()]).flatMap((g) => g.disks.map((e) => e.name));
    const out = selected.filter((name) => checked.has(name));
    const taken = new Set(out);
    for (const name of [...order, ...checked]) {
      if (checked.has(name) && !taken.has(name)) { out.push(name); taken.add(name); }
    }
    return out;
  };

  const knownDisks = () => [...known.values()].map((e) => e.disk).filter(Boolean);

  if (disks) update({ upserted: disks, deleted: [], phase: 'listed', progress: { loaded: disks.length, about: disks.length, done: true } });
  else draw();
  return { element, selectedDisks, disks: knownDisks, keep, update, problem };
}

function entryRow(entry, isChecked, onToggle) {
  const box = h('input', {
    class: 'plugin-checkbox', type: 'checkbox', name: 'disk', value: entry.name,
    checked: isChecked, disabled: !entry.pickable,
    attrs: { 'aria-label': `Use disk ${entry.name}`, 'data-disk': entry.name },
  });
  box.addEventListener('change', () => onToggle(box.checked));
  return h('tr', { attrs: { 'data-row': entry.name } },
    h('td', {}, box),
    h('td', {}, truncated(entry.name)),
    h('td', {}, truncated(entry.stablePath || entry.path)),
    h('td', { text: entry.sizeBytes ? formatBytes(entry.sizeBytes) : '—' }),
    h('td', { text: entry.type || '—' }),
    h('td', { class: 'cr-state' }, stateBadge(entry), entry.note ? h('span', { class: 'plugin-hint', attrs: { 'data-note': 'true' }, text: ` ${entry.note}` }) : null));
}

// stateBadge says in words what the disk is to this pool: a disk another
// pool holds is "Held by" it, never a green Available.
function stateBadge(entry) {
  if (!entry.disk) return badge('Missing');
  if (entry.held) return heldBadge(entry.held);
  return badge(entry.state);
}

function showRemovalWarning(container, removed, retirable, onRetire) {
  container.replaceChildren();
  if (removed.length === 0) return;
  const offers = removed.filter(retirable);
  container.append(h('div', { class: 'plugin-error', attrs: { role: 'alert' } },
    h('p', { class: 'plugin-text', text: `Removing ${removed.length === 1 ? 'a disk' : `${removed.length} disks`} from this pool: ${removed.map(describe).join(', ')}.` }),
    h('p', { class: 'plugin-text', text: REMOVAL_WARNING })));
  if (offers.length === 0) return;
  container.append(h('div', { attrs: { 'data-retire-offers': 'true' } },
    hint(RETIRE_INSTEAD_HINT),
    h('ul', { class: 'plugin-text' }, offers.map((entry) => h('li', { attrs: { 'data-retire-offer': entry.name } },
      h('span', { text: `${describe(entry)} ` }),
      retireButton(entry.name, onRetire))))));
}

// RETIRE_INSTEAD_HINT is what "Retire instead" does differently.
const RETIRE_INSTEAD_HINT = 'Retire instead keeps the disk in this pool\'s list and takes its OSD out of Ceph safely with a DiskRetirement: the cluster is checked first, and nothing is touched until you confirm.';

function retireButton(name, onRetire) {
  const el = button('Retire instead', () => onRetire(name), { secondary: true, name: 'retire-instead' });
  el.setAttribute('data-disk', name);
  el.setAttribute('aria-label', `Retire disk ${name} instead`);
  return el;
}

function describe(entry) {
  return entry.node && entry.path ? `${entry.name} (${entry.path} on ${entry.node})` : entry.name;
}
