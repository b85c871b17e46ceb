// What the Disks page and the disk picker decide about disks, as pure
// functions: no DOM, no SDK, so a browser test imports this module and
// checks each rule on plain objects (disks_browser_test.go).
//
// A disk is looked at through its facts (diskFacts): the few fields the
// filters, the search and the groups read, normalised once when the disk
// arrives, so filtering 10,000 disks on every keystroke reads strings it
// already has instead of walking status objects.

// The types and states the filters offer, as the filters' <option> values.
// Disk.status.type is lower case in the API (hdd, ssd, nvme); the filters
// and the pages use the names people write.
export const DISK_TYPES = ['HDD', 'SSD', 'NVMe'];
export const DISK_STATES = ['Available', 'InUse', 'Missing'];

// UNCLAIMED is the pool filter's value for "claimed by no pool".
export const UNCLAIMED = '-';

// The annotation a DiskRetirement leaves on a retired disk
// (v1alpha1.RetiredAnnotation): its OSD is out of Ceph.
const RETIRED_ANNOTATION = 'ceph.fundament.io/retired';

// Automatic replication: min(MAX_REPLICAS, nodes), as replication.go.
const MAX_REPLICAS = 3;

const collator = new Intl.Collator('en', { numeric: true });

// diskType names a Disk's status.type as the filters do ('' when unknown).
export function diskType(value) {
  switch (String(value || '').toLowerCase()) {
    case 'hdd': return 'HDD';
    case 'ssd': return 'SSD';
    case 'nvme': return 'NVMe';
    default: return '';
  }
}

// diskFacts is what the filters, the search and the groups read of a Disk.
export function diskFacts(disk) {
  const s = disk.status || {};
  const annotations = (disk.metadata && disk.metadata.annotations) || {};
  const name = disk.metadata.name;
  const facts = {
    name,
    node: s.nodeName || '',
    path: s.path || '',
    stablePath: s.stablePath || '',
    model: s.model || '',
    serial: s.serial || '',
    sizeBytes: sizeBytes(s.size),
    type: diskType(s.type),
    state: s.state || '',
    reason: s.reason || '',
    claimedBy: s.claimedBy || '',
    retired: Boolean(annotations[RETIRED_ANNOTATION]),
    resourceVersion: (disk.metadata && disk.metadata.resourceVersion) || '',
    disk,
  };
  facts.haystack = [name, facts.path, facts.stablePath, facts.model, facts.serial].join('\n').toLowerCase();
  return facts;
}

// goneFacts stands for a name a pool lists that has no Disk: it has a name
// and nothing else.
export function goneFacts(name) {
  return {
    name, node: '', path: '', stablePath: '', model: '', serial: '', sizeBytes: null, type: '', state: '', reason: '',
    claimedBy: '', retired: false, resourceVersion: '', disk: null, haystack: name.toLowerCase(),
  };
}

const UNITS = {
  '': 1, b: 1,
  k: 1e3, kb: 1e3, m: 1e6, mb: 1e6, g: 1e9, gb: 1e9, t: 1e12, tb: 1e12, p: 1e15, pb: 1e15, e: 1e18, eb: 1e18,
  ki: 2 ** 10, kib: 2 ** 10, mi: 2 ** 20, mib: 2 ** 20, gi: 2 ** 30, gib: 2 ** 30, ti: 2 ** 40, tib: 2 ** 40, pi: 2 ** 50, pib: 2 ** 50, ei: 2 ** 60, eib: 2 ** 60,
};

// parseSize reads a size as people type it into the size filter: a number
// with an optional unit, binary (Ki, KiB, ... as Kubernetes and formatBytes
// write them) or decimal (k, KB, G, TB, ...), any case, spaces allowed:
// "4Ti", "4 TiB", "500G", "1.5tb". Empty is null (no bound); anything else
// unreadable is NaN.
export function parseSize(text) {
  const value = String(text === undefined || text === null ? '' : text).trim();
  if (value === '') return null;
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)$/.exec(value);
  if (!match) return NaN;
  const unit = UNITS[match[2].toLowerCase()];
  return unit === undefined ? NaN : Number(match[1]) * unit;
}

// sizeBytes reads a Disk's status.size (a Kubernetes quantity); null when
// absent or unreadable.
function sizeBytes(quantity) {
  if (typeof quantity === 'number') return quantity;
  if (typeof quantity !== 'string') return null;
  const match = /^([0-9]+(?:\.[0-9]+)?)([KMGTPE]i|[kMGTPE])?$/.exec(quantity.trim());
  if (!match) return null;
  return Number(match[1]) * (match[2] ? UNITS[match[2].toLowerCase()] : 1);
}

// emptyFilter shows every disk. nodes: node names ('' is "no node"), none
// meaning every node; type: a DISK_TYPES value or ''; state: a DISK_STATES
// value or ''; minBytes, maxBytes: inclusive bounds or null; pool: a pool
// name, UNCLAIMED, or '' for any; search: free text; pickableOnly: only
// what the picker can offer (entries with pickable false are hidden).
export function emptyFilter() {
  return { nodes: [], type: '', state: '', minBytes: null, maxBytes: null, pool: '', search: '', pickableOnly: false };
}

// compileFilter turns a filter into a predicate on facts (or picker
// entries, which are facts with pickable). Search words must all occur, in
// any of name, path, stable path, model and serial, ignoring case.
export function compileFilter(filter) {
  const f = { ...emptyFilter(), ...filter };
  const nodes = f.nodes && f.nodes.length > 0 ? new Set(f.nodes) : null;
  const words = String(f.search || '').toLowerCase().split(/\s+/).filter(Boolean);
  const min = typeof f.minBytes === 'number' && !Number.isNaN(f.minBytes) ? f.minBytes : null;
  const max = typeof f.maxBytes === 'number' && !Number.isNaN(f.maxBytes) ? f.maxBytes : null;
  return (d) => {
    if (nodes && !nodes.has(d.node)) return false;
    if (f.type && d.type !== f.type) return false;
    if (f.state && d.state !== f.state) return false;
    if (min !== null && (d.sizeBytes === null || d.sizeBytes < min)) return false;
    if (max !== null && (d.sizeBytes === null || d.sizeBytes > max)) return false;
    if (f.pool === UNCLAIMED ? d.claimedBy !== '' : f.pool && d.claimedBy !== f.pool) return false;
    if (f.pickableOnly && d.pickable === false) return false;
    for (const word of words) if (!d.haystack.includes(word)) return false;
    return true;
  };
}

// filterDisks keeps what the filter shows, in the order given.
export function filterDisks(list, filter) {
  return list.filter(compileFilter(filter));
}

// isFiltering says whether a filter hides anything in principle.
export function isFiltering(filter) {
  const f = { ...emptyFilter(), ...filter };
  return f.nodes.length > 0 || Boolean(f.type || f.state || f.pool || String(f.search).trim()) || f.minBytes !== null || f.maxBytes !== null || f.pickableOnly;
}

// byPath orders a node's disks as lsblk does (sdb before sdc, nvme2n1
// before nvme10n1); disks without a path by name.
export function byPath(a, b) {
  return collator.compare(a.path || a.name, b.path || b.name) || collator.compare(a.name, b.name);
}

// groupByNode groups disks by node, nodes in natural order (node-2 before
// node-10) with "no node" first, each node's disks byPath, and counts per
// group: disks, per state, pickable (entries with pickable not false),
// selected (names in selected) and bytes.
export function groupByNode(list, selected = null) {
  const groups = new Map();
  for (const d of list) {
    let g = groups.get(d.node);
    if (!g) {
      g = { node: d.node, disks: [], counts: { disks: 0, Available: 0, InUse: 0, Missing: 0, pickable: 0, selected: 0 }, bytes: 0 };
      groups.set(d.node, g);
    }
    g.disks.push(d);
    g.counts.disks += 1;
    if (g.counts[d.state] !== undefined) g.counts[d.state] += 1;
    if (d.pickable !== false) g.counts.pickable += 1;
    if (selected && selected.has(d.name)) g.counts.selected += 1;
    if (d.sizeBytes) g.bytes += d.sizeBytes;
  }
  const out = [...groups.values()].sort((a, b) => collator.compare(a.node, b.node));
  for (const g of out) g.disks.sort(byPath);
  return out;
}

// nodeNames are the distinct nodes of list, in group order.
export function nodeNames(list) {
  return [...new Set(list.map((d) => d.node))].sort(collator.compare);
}

// poolNames are the distinct pools claiming disks of list, sorted.
export function poolNames(list) {
  return [...new Set(list.map((d) => d.claimedBy).filter(Boolean))].sort(collator.compare);
}

// pickerEntry decides whether the picker offers a disk and what it says,
// for the pool poolName ('' when creating) whose saved spec.disks is
// saved (a Set). A disk the pool already lists can always be unchecked
// (the saved array is replaced whole, so the picker must be able to keep
// or drop it); anything else can be picked only when it is Available,
// claimed by no other pool and not retired. held names the other pool
// that holds the disk, shown instead of an Available badge.
export function pickerEntry(facts, poolName, saved) {
  const entry = { ...facts, pickable: true, note: '', held: '' };
  const claimedElsewhere = facts.claimedBy && facts.claimedBy !== poolName;
  if (claimedElsewhere) entry.held = facts.claimedBy;
  if (!facts.disk) {
    entry.note = 'No such disk in the inventory any more; kept in this pool\'s list.';
  } else if (saved.has(facts.name)) {
    if (claimedElsewhere) entry.note = `Claimed by the older pool ${facts.claimedBy}; kept in this pool's list, but not used by it.`;
    else if (facts.state === 'Missing') entry.note = `Missing from discovery${facts.reason ? `: ${facts.reason}` : ''}; kept in this pool's list.`;
  } else if (claimedElsewhere) {
    entry.pickable = false;
    entry.note = `Claimed by pool ${facts.claimedBy}: a disk serves one pool.`;
  } else if (facts.retired) {
    entry.pickable = false;
    entry.note = 'Retired: wipe it and remove the annotation ceph.fundament.io/retired first.';
  } else if (facts.state !== 'Available') {
    entry.pickable = false;
    entry.note = facts.reason || `Not available (${facts.state || 'unknown state'})`;
  }
  return entry;
}

// selectAll adds every pickable entry of list to selected (a new Set).
export function selectAll(selected, list) {
  const next = new Set(selected);
  for (const e of list) if (e.pickable !== false) next.add(e.name);
  return next;
}

// deselectAll removes every entry of list from selected (a new Set).
export function deselectAll(selected, list) {
  const next = new Set(selected);
  for (const e of list) next.delete(e.name);
  return next;
}

// selectionState is how much of list's pickable entries are selected:
// 'none', 'some' or 'all' ('none' when nothing is pickable).
export function selectionState(selected, list) {
  let pickable = 0;
  let chosen = 0;
  for (const e of list) {
    if (e.pickable === false) continue;
    pickable += 1;
    if (selected.has(e.name)) chosen += 1;
  }
  if (chosen === 0) return 'none';
  return chosen === pickable ? 'all' : 'some';
}

// summarizeSelection is what a selection amounts to. entries: every picker
// entry (by name); selected: the names checked; poolName: the pool edited
// ('' when creating). Replication is sized against the cluster's nodes:
// the union of the nodes of every pool's disks (read from the claims:
// disks other pools hold, not retired) and of this pool's selection, not
// this pool's nodes alone (replication.go, union.go).
export function summarizeSelection(entries, selected, poolName = '') {
  const nodes = new Set();
  const clusterNodes = new Set();
  const byType = { HDD: 0, SSD: 0, NVMe: 0, unknown: 0 };
  let disks = 0;
  let rawBytes = 0;
  let unknownSize = 0;
  let notInInventory = 0;
  let heldElsewhere = 0;
  for (const e of entries.values()) {
    if (e.disk && !e.retired && e.claimedBy && e.claimedBy !== poolName && e.node) clusterNodes.add(e.node);
  }
  for (const name of selected) {
    const e = entries.get(name);
    disks += 1;
    if (!e || !e.disk) { notInInventory += 1; continue; }
    if (e.claimedBy && e.claimedBy !== poolName) { heldElsewhere += 1; continue; }
    if (e.node) { nodes.add(e.node); if (!e.retired) clusterNodes.add(e.node); }
    if (e.type) byType[e.type] += 1; else byType.unknown += 1;
    if (e.sizeBytes) rawBytes += e.sizeBytes; else unknownSize += 1;
  }
  const cluster = clusterNodes.size;
  const replicas = Math.min(MAX_REPLICAS, cluster);
  return {
    disks, nodes: nodes.size, rawBytes, unknownSize, byType, notInInventory, heldElsewhere,
    clusterNodes: cluster,
    replicas,
    failureDomain: replicas >= 2 && cluster >= 2 ? 'host' : 'osd',
  };
}

// summarySentences words a summary; formatBytes is passed in (it lives with
// the DOM helpers in _shared.js) so this module stays free of them.
export function summarySentences(sum, formatBytes) {
  const n = (count, word, plural = `${word}s`) => `${count.toLocaleString('en-US')} ${count === 1 ? word : plural}`;
  const types = DISK_TYPES.filter((t) => sum.byType[t] > 0).map((t) => `${sum.byType[t].toLocaleString('en-US')} ${t}`);
  let selection = sum.disks === 0
    ? 'No disks selected.'
    : `${n(sum.disks, 'disk')} selected on ${n(sum.nodes, 'node')}, ${formatBytes(sum.rawBytes)} raw${types.length ? ` (${types.join(', ')})` : ''}.`;
  const caveats = [];
  if (sum.heldElsewhere) caveats.push(`${n(sum.heldElsewhere, 'disk')} another pool holds ${sum.heldElsewhere === 1 ? 'counts' : 'count'} there, not here`);
  if (sum.notInInventory) caveats.push(`${n(sum.notInInventory, 'listed disk')} ${sum.notInInventory === 1 ? 'is' : 'are'} not in the inventory`);
  if (sum.unknownSize) caveats.push(`${n(sum.unknownSize, 'disk')} without a size`);
  if (caveats.length) selection += ` Of these, ${caveats.join('; ')}.`;
  let replication;
  if (sum.clusterNodes === 0) {
    replication = 'No pool would give Ceph a disk: storage kinds cannot provision until one does.';
  } else {
    const copies = sum.replicas === 1
      ? `1 copy (failure domain osd: losing the node loses the data), and an explicit 2 or 3 replicas is clamped to 1`
      : `${sum.replicas} copies, one per node (failure domain host)${sum.replicas < MAX_REPLICAS ? `, and an explicit 3 replicas is clamped to ${sum.replicas}` : ''}`;
    replication = `Replication counts the cluster's nodes, the union of every pool's nodes, not only this pool's: with this selection the cluster's disks span ${n(sum.clusterNodes, 'node')}, so storage kinds on automatic replication keep ${copies}.`;
  }
  return { selection, replication };
}

// formatCount writes a count as people read it: 10,000.
export function formatCount(n) {
  return Number(n).toLocaleString('en-US');
}
