// The disk picker shared by the DiskPool create and edit forms.
//
// It lists every Disk with a checkbox: free disks can be picked, disks another
// pool claims are shown as such and cannot be, and whatever the pool already
// lists stays listed and checked even when the picker cannot offer it (the
// Disk is gone, or another pool won it): the saved disk array is replaced
// whole, so an entry dropped here would silently leave the pool.
import { h, hint, formatBytes, badge, button } from './_shared.js';
import { isRetired } from './retirement-pages.js';

// The consequence of unchecking a disk the pool already has, as the
// reconciler will carry it out.
export const REMOVAL_WARNING = 'It leaves the CephCluster device list, but its OSD keeps running until it is purged from Ceph manually, and data may rebalance in the meantime.';

// createDiskPicker returns {element, selectedDisks(), keep(name)}. disks is
// the Disk list, poolName the pool being edited ('' when creating), selected
// its spec.disks. With onRetire, the removal warning offers "Retire instead"
// for each unchecked disk the pool gives to Ceph (claimed by this pool, not
// retired): onRetire(name) is called and the pool's list is left alone.
export function createDiskPicker({ disks, poolName = '', selected = [], onRetire = null }) {
  const saved = new Set(selected);
  const entries = pickerEntries(disks, poolName, selected);
  const checked = new Set(selected);
  const warning = h('div', { attrs: { 'data-warning': 'removal', 'aria-live': 'polite' } });

  const boxes = new Map();
  const retirable = (entry) => Boolean(onRetire && poolName && entry.disk && entry.status.claimedBy === poolName && !isRetired(entry.disk));
  const refresh = () => showRemovalWarning(warning, entries.filter((e) => saved.has(e.name) && !checked.has(e.name)), retirable, onRetire);
  const onToggle = (entry, box) => {
    if (box.checked) checked.add(entry.name); else checked.delete(entry.name);
    refresh();
  };
  // keep checks a disk again: a retirement, not the pool's list, takes it out.
  const keep = (name) => {
    checked.add(name);
    if (boxes.has(name)) boxes.get(name).checked = true;
    refresh();
  };

  const element = h('fieldset', { class: 'plugin-fieldset', attrs: { 'data-disk-picker': 'true' } },
    h('legend', { class: 'plugin-legend', text: 'Disks' }),
    entries.length === 0 ? hint('No disks discovered yet.') : entriesTable(entries, checked, onToggle, boxes),
    warning);

  // Keep the saved order, then add new picks in the order shown.
  const selectedDisks = () => [
    ...selected.filter((name) => checked.has(name)),
    ...entries.map((e) => e.name).filter((name) => checked.has(name) && !saved.has(name)),
  ];
  return { element, selectedDisks, keep };
}

// pickerEntries decides, per disk, whether it can be picked and what to say.
function pickerEntries(disks, poolName, selected) {
  const known = new Map(disks.map((d) => [d.metadata.name, d]));
  const saved = new Set(selected);
  const entries = [...disks].sort(byNodeAndPath).map((disk) => {
    const s = disk.status || {};
    const name = disk.metadata.name;
    const entry = { name, disk, status: s, selectable: true, note: '' };
    const claimedElsewhere = s.claimedBy && s.claimedBy !== poolName;
    if (saved.has(name)) {
      if (claimedElsewhere) entry.note = `Claimed by the older pool ${s.claimedBy}; kept in this pool's list, but not used by it.`;
      else if (s.state === 'Missing') entry.note = `Missing from discovery${s.reason ? `: ${s.reason}` : ''}; kept in this pool's list.`;
    } else if (claimedElsewhere) {
      entry.selectable = false;
      entry.note = `Claimed by pool ${s.claimedBy}`;
    } else if (s.state !== 'Available') {
      entry.selectable = false;
      entry.note = s.reason || `Not available (${s.state || 'unknown state'})`;
    }
    return entry;
  });
  // Entries the pool lists that have no Disk any more: keep them, say why.
  for (const name of selected) {
    if (!known.has(name)) entries.push({ name, disk: null, status: {}, selectable: true, note: 'No such disk in the inventory any more; kept in this pool\'s list.' });
  }
  return entries;
}

function byNodeAndPath(a, b) {
  const key = (d) => `${(d.status && d.status.nodeName) || ''}\u0000${(d.status && d.status.path) || d.metadata.name}`;
  return key(a).localeCompare(key(b), undefined, { numeric: true });
}

function entriesTable(entries, checked, onToggle, boxes) {
  return h('table', { class: 'plugin-table' },
    h('thead', {}, h('tr', {}, ['', 'Disk', 'Node', 'Path', 'Size', 'Type', 'State'].map((label) => h('th', { attrs: { scope: 'col' }, text: label })))),
    h('tbody', {}, entries.map((entry) => entryRow(entry, checked, onToggle, boxes))));
}

function entryRow(entry, checked, onToggle, boxes) {
  const s = entry.status;
  const box = h('input', {
    class: 'plugin-checkbox', type: 'checkbox', name: 'disk', value: entry.name,
    checked: checked.has(entry.name), disabled: !entry.selectable,
    attrs: { 'aria-label': `Use disk ${entry.name}`, 'data-disk': entry.name },
  });
  box.addEventListener('change', () => onToggle(entry, box));
  boxes.set(entry.name, box);
  return h('tr', { attrs: { 'data-row': entry.name } },
    h('td', {}, box),
    h('td', { text: entry.name }),
    h('td', { text: s.nodeName || '—' }),
    h('td', { text: s.stablePath || s.path || '—' }),
    h('td', { text: s.size ? formatBytes(s.size) : '—' }),
    h('td', { text: s.type || '—' }),
    h('td', {}, entry.disk ? badge(s.state) : badge('Missing'), entry.note ? h('span', { class: 'plugin-hint', attrs: { 'data-note': 'true' }, text: ` ${entry.note}` }) : null));
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
  const s = entry.status;
  return s.nodeName && s.path ? `${entry.name} (${s.path} on ${s.nodeName})` : entry.name;
}
