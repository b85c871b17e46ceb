// The overview: the first page of the plugin's menu, routed as the list page
// of Rook's CephCluster kind (definition.yaml), since the console routes
// pages per kind. What needs attention comes first, each with its reason;
// then the CephCluster's phase, health and raw capacity, the devices it
// lists by node and type, the pools' disks by device class (the tiers a
// storage kind can be placed on), and every pool, consumer and disk
// retirement by phase, each object linked to its page.
//
// It reads one list of each kind, Disks included, and counts: at 10,000
// Disks it renders per-node counts, never a row per disk, and every list of
// objects or problems stops at LIST_CAP with a count of the rest.
//
// An open overview follows changes: it reads again when a sheet reports a
// write (startPage's onResourcesChanged) and every REFRESH_MS while the page
// is visible. That polling is a stopgap, acceptable at this size (one list
// per kind every 10 s), until the page moves to the opt-in watch-based
// re-render of startPage; the DOM is only replaced when what it shows
// changed, so focus and screen readers are left alone in between.
import {
  RESOURCES, sdk, h, mount, heading, hint, text, deflist, table, badge, link, navigateToDetail, card, errorBox,
  capacityMeter, startPage, formatBytes,
} from './_shared.js';
import { tiersOf } from './tiers.js';

const REFRESH_MS = 10000;
const LIST_CAP = 50;

// The kinds shown by phase, in the menu's order of work.
const KINDS = [
  { kind: 'DiskPool', title: 'Disk pools', api: () => sdk().k8s.list(RESOURCES.diskpools), none: 'Pending' },
  { kind: 'BlockStorage', title: 'Block storage', api: () => sdk().k8s.list(RESOURCES.blockstorages), none: 'Pending' },
  { kind: 'FileStorage', title: 'File storage', api: () => sdk().k8s.list(RESOURCES.filestorages), none: 'Pending' },
  { kind: 'ObjectStorage', title: 'Object storage', api: () => sdk().k8s.list(RESOURCES.objectstorages), none: 'Pending' },
  { kind: 'DiskRetirement', title: 'Disk retirements', api: () => sdk().k8s.list(RESOURCES.diskretirements), none: 'Pending' },
];

// Retirement phases that are over: counted, not listed one by one.
const FINISHED_RETIREMENTS = new Set(['Retired', 'Cancelled']);

const DISK_TYPES = [['hdd', 'HDD'], ['ssd', 'SSD'], ['nvme', 'NVMe']];

let shown = null; // the signature of what the page shows now

startPage(show);
setInterval(() => {
  if (document.hidden || shown === null) return;
  const root = document.getElementById('app');
  show(root).catch((err) => {
    shown = null;
    mount(root, errorBox(err, 'Could not read the cluster'));
  });
}, REFRESH_MS);

// show reads everything and renders it, unless it shows that already;
// focus stays on the control it was on.
async function show(root) {
  const model = overviewModel(await readAll());
  const signature = JSON.stringify(model);
  if (signature === shown) return;
  shown = signature;
  const focus = focusKey(document.activeElement);
  mount(root, ...renderOverview(model));
  const again = focus && root.querySelector(focus);
  if (again) again.focus();
}

function focusKey(el) {
  if (!el || el === document.body) return null;
  for (const name of ['data-action', 'data-link']) {
    const value = el.getAttribute && el.getAttribute(name);
    if (value !== null && value !== undefined) return `[${name}="${CSS.escape(value)}"]`;
  }
  return null;
}

// readAll is one list of every kind the overview counts.
async function readAll() {
  const [disks, clusters, ...kinds] = await Promise.all([
    sdk().k8s.list(RESOURCES.disks),
    sdk().k8s.list(RESOURCES.cephclusters),
    ...KINDS.map((k) => k.api()),
  ]);
  const byKind = {};
  KINDS.forEach((k, i) => { byKind[k.kind] = kinds[i].items; });
  return { disks: disks.items, clusters: clusters.items, byKind };
}

// overviewModel is what the page shows, as plain data: computed from the
// lists alone, so that two reads that agree render nothing new.
export function overviewModel({ disks, clusters, byKind }) {
  const pools = (byKind.DiskPool || []).filter((p) => !p.metadata.deletionTimestamp);
  const disksByName = new Map(disks.map((d) => [d.metadata.name, d]));
  const cluster = chooseCluster(clusters, pools);
  const upgrade = upgradeFacts(cluster.object);
  const attention = [
    ...clusterProblems(cluster),
    ...upgradeProblems(upgrade),
    ...degradedObjects(byKind),
    ...diskProblems(pools, disksByName),
  ];
  return {
    attention: capByProblem(attention),
    cluster: clusterFacts(cluster),
    upgrade,
    devices: devicesByNode(cluster.object, disks),
    inventory: inventoryCounts(disks),
    tiers: tiersOf(disks),
    kinds: KINDS.map((k) => kindSummary(k, byKind[k.kind] || [])),
  };
}

// chooseCluster is the CephCluster the DiskPools feed (the one the first
// pool by name names in its status: the plugin's configured cluster), else
// the only CephCluster there is.
function chooseCluster(clusters, pools) {
  const ref = [...pools].sort(byName).map((p) => p.status && p.status.cephCluster).find(Boolean) || null;
  if (ref) {
    const object = clusters.find((c) => c.metadata.namespace === ref.namespace && c.metadata.name === ref.name) || null;
    return { ref, object, how: 'pools' };
  }
  if (clusters.length === 1) {
    const c = clusters[0];
    return { ref: { namespace: c.metadata.namespace, name: c.metadata.name }, object: c, how: 'only' };
  }
  return { ref: null, object: null, how: clusters.length === 0 ? 'none' : 'several', count: clusters.length };
}

function clusterFacts({ ref, object, how, count }) {
  if (!object) return { ref, how, count, found: false };
  const s = object.status || {};
  const ceph = s.ceph || {};
  return {
    ref, how, found: true,
    phase: s.phase || '',
    health: ceph.health || '',
    message: s.message || '',
    capacity: ceph.capacity && ceph.capacity.bytesTotal ? ceph.capacity : null,
    deleting: Boolean(object.metadata.deletionTimestamp),
  };
}

function clusterProblems({ ref, object, how, count }) {
  if (!object) {
    const reason = ref
      ? `The DiskPools feed CephCluster ${ref.namespace}/${ref.name}, which does not exist: nothing is stored until it is back (the plugin does not create it again).`
      : how === 'several'
        ? `${count} CephClusters exist and no DiskPool names one yet: create a DiskPool to feed the plugin's.`
        : 'There is no CephCluster: the plugin creates it when it installs Rook.';
    return [{ problem: 'No CephCluster', badge: 'Failed', subject: null, reason }];
  }
  const s = object.status || {};
  const ceph = s.ceph || {};
  const name = `${object.metadata.namespace}/${object.metadata.name}`;
  if (object.metadata.deletionTimestamp) {
    return [{ problem: 'CephCluster', badge: 'Degraded', subject: null, reason: `CephCluster ${name} is being deleted; once gone it is not created again.` }];
  }
  const problems = [];
  if (s.phase && s.phase !== 'Ready') {
    problems.push({ problem: 'CephCluster', badge: s.phase, subject: null, reason: `CephCluster ${name} is ${s.phase}${s.message ? `: ${s.message}` : '.'}` });
  }
  if (ceph.health && ceph.health !== 'HEALTH_OK') {
    const details = Object.entries(ceph.details || {}).map(([check, d]) => `${check}: ${(d && d.message) || ''}`);
    problems.push({
      problem: 'Ceph health', badge: ceph.health, subject: null,
      reason: `Ceph reports ${ceph.health}${details.length > 0 ? ` (${details.join('; ')})` : ''}.`,
    });
  }
  return problems;
}

// UPGRADE_ANNOTATION is where the plugin records on its CephCluster how an
// upgrade of Rook or Ceph stands (upgrade_controller.go): JSON with stage,
// step, from, to, done, total, pending and the failed checks.
const UPGRADE_ANNOTATION = 'ceph.fundament.io/upgrade';

// upgradeFacts reads the upgrade record: null when there is none.
export function upgradeFacts(object) {
  const raw = object && object.metadata.annotations && object.metadata.annotations[UPGRADE_ANNOTATION];
  if (!raw) return null;
  let s;
  try {
    s = JSON.parse(raw);
  } catch (e) {
    return { unreadable: e.message };
  }
  return {
    stage: s.stage || '', step: s.step || '', from: s.from || '', to: s.to || '',
    done: s.done || 0, total: s.total || 0, pending: s.pending || [],
    checks: (s.checks || []).filter((c) => !c.passed),
  };
}

function upgradeProblems(u) {
  if (!u || u.unreadable || u.stage !== 'Refused') return [];
  return [{
    problem: 'Upgrade refused', badge: 'Refused', subject: null,
    reason: `The upgrade of ${u.step} from ${u.from} to ${u.to} was refused and nothing changed: ${checkSentence(u.checks)} The plugin checks again each minute.`,
  }];
}

function checkSentence(checks) {
  return checks.map((c) => `${c.name}: ${c.message}`).join('; ') + '.';
}

// degradedObjects are the pools and consumers that cannot do their job, and
// the retirements that stopped or wait for an answer, each with its reason.
function degradedObjects(byKind) {
  const out = [];
  for (const k of KINDS) {
    for (const object of [...(byKind[k.kind] || [])].sort(byName)) {
      const phase = phaseOf(k, object);
      const problem = { Degraded: 'Degraded', Failed: 'Failed', Refused: 'Refused', Suspended: 'Awaiting confirmation' }[phase];
      if (!problem) continue;
      out.push({ problem, badge: phase, subject: { kind: k.kind, name: object.metadata.name }, reason: reasonOf(object) });
    }
  }
  return out;
}

// reasonOf is an object's status message, with the Ready condition's reason
// when the message does not already carry it.
function reasonOf(object) {
  const s = object.status || {};
  const ready = (s.conditions || []).find((c) => c.type === 'Ready' && c.status !== 'True');
  const message = s.message || (ready && ready.message) || '';
  if (ready && ready.reason && !message.includes(ready.reason)) return `${ready.reason}: ${message || 'no message'}`;
  return message || 'The plugin gives no reason yet.';
}

// diskProblems are the disks the pools list that cannot become OSDs: missing
// (no Disk of that name, or discovery no longer reports it) and contested
// (listed by several pools; the oldest keeps it, as the reconciler decides).
function diskProblems(pools, disksByName) {
  const listers = new Map(); // disk name -> pools listing it
  for (const pool of pools) {
    for (const name of new Set((pool.spec && pool.spec.disks) || [])) {
      if (!listers.has(name)) listers.set(name, []);
      listers.get(name).push(pool);
    }
  }
  const missing = [];
  const contested = [];
  for (const name of [...listers.keys()].sort()) {
    const byAge = listers.get(name).sort(olderFirst);
    const poolNames = byAge.map((p) => p.metadata.name);
    const disk = disksByName.get(name);
    const listed = `${poolNames.length === 1 ? 'Pool' : 'Pools'} ${joinNames(poolNames)} ${poolNames.length === 1 ? 'lists' : 'list'} it`;
    if (!disk) {
      missing.push({ problem: 'Missing disk', badge: 'Missing', subject: { kind: 'Disk', name, exists: false }, pools: poolNames,
        reason: `No Disk of that name exists: ${listed}, and skips it.` });
    } else if (disk.status && disk.status.state === 'Missing') {
      const st = disk.status;
      const where = [st.nodeName && `node ${st.nodeName}`, st.path].filter(Boolean).join(', ');
      missing.push({ problem: 'Missing disk', badge: 'Missing', subject: { kind: 'Disk', name }, pools: poolNames,
        reason: `Discovery no longer reports it${where ? ` (${where})` : ''}${st.lastSeenTime ? `, last seen ${st.lastSeenTime}` : ''}: ${listed}.` });
    }
    if (poolNames.length > 1) {
      const claimedBy = disk && disk.status && disk.status.claimedBy;
      const owner = poolNames.includes(claimedBy) ? claimedBy : poolNames[0];
      const skipping = poolNames.filter((n) => n !== owner);
      contested.push({ problem: 'Contested disk', badge: 'Contested', subject: { kind: 'Disk', name, exists: Boolean(disk) }, pools: poolNames,
        reason: `Listed by pools ${joinNames(poolNames)}: ${owner}, the older, keeps it; ${joinNames(skipping)} ${skipping.length === 1 ? 'skips' : 'skip'} it and ${skipping.length === 1 ? 'says' : 'say'} so in status.message.` });
    }
  }
  return [...missing, ...contested];
}

// capByProblem keeps at most LIST_CAP problems of each kind and counts the
// rest, so a node that took 1,000 disks with it shows 50 and a number.
function capByProblem(problems) {
  const seen = new Map();
  const out = [];
  for (const p of problems) {
    const n = (seen.get(p.problem) || 0) + 1;
    seen.set(p.problem, n);
    if (n <= LIST_CAP) out.push(p);
  }
  const more = [...seen].filter(([, n]) => n > LIST_CAP).map(([problem, n]) => ({ problem, more: n - LIST_CAP }));
  return { items: out, more, total: problems.length };
}

// devicesByNode counts the devices the CephCluster lists (the OSDs it asks
// Rook for) per node and disk type, the type read from the matching Disk.
function devicesByNode(cluster, disks) {
  const nodes = (cluster && cluster.spec && cluster.spec.storage && cluster.spec.storage.nodes) || [];
  const typeOf = new Map();
  for (const d of disks) {
    const st = d.status || {};
    if (!st.nodeName) continue;
    for (const path of [st.stablePath, st.path]) if (path) typeOf.set(`${st.nodeName}\u0000${path}`, st.type || '');
  }
  const rows = [];
  const total = { node: 'All nodes', hdd: 0, ssd: 0, nvme: 0, unknown: 0, devices: 0 };
  for (const node of [...nodes].sort((a, b) => String(a.name).localeCompare(String(b.name)))) {
    const row = { node: node.name, hdd: 0, ssd: 0, nvme: 0, unknown: 0, devices: 0 };
    for (const device of node.devices || []) {
      const name = String(device.name || '');
      const type = typeOf.get(`${node.name}\u0000${name}`) ?? typeOf.get(`${node.name}\u0000/dev/${name}`) ?? '';
      const key = ['hdd', 'ssd', 'nvme'].includes(type) ? type : 'unknown';
      row[key] += 1;
      row.devices += 1;
      total[key] += 1;
      total.devices += 1;
    }
    rows.push(row);
  }
  return { rows, total };
}

function inventoryCounts(disks) {
  const counts = { total: disks.length, Available: 0, InUse: 0, Missing: 0, hdd: 0, ssd: 0, nvme: 0 };
  for (const d of disks) {
    const st = d.status || {};
    if (['Available', 'InUse', 'Missing'].includes(st.state)) counts[st.state] += 1;
    if (['hdd', 'ssd', 'nvme'].includes(st.type)) counts[st.type] += 1;
  }
  return counts;
}

function kindSummary(k, objects) {
  const phases = new Map();
  const listed = [];
  for (const object of [...objects].sort(byName)) {
    const phase = phaseOf(k, object);
    phases.set(phase, (phases.get(phase) || 0) + 1);
    if (k.kind === 'DiskRetirement' && FINISHED_RETIREMENTS.has(phase)) continue;
    listed.push({ name: object.metadata.name, phase, message: (object.status && object.status.message) || '' });
  }
  return {
    kind: k.kind, title: k.title, total: objects.length,
    phases: [...phases].sort(([a], [b]) => a.localeCompare(b)),
    objects: listed.slice(0, LIST_CAP),
    unlisted: Math.max(0, listed.length - LIST_CAP),
    finished: k.kind === 'DiskRetirement' ? objects.length - listed.length : 0,
  };
}

function phaseOf(k, object) {
  return (object.status && object.status.phase) || k.none;
}

// renderOverview turns the model into the page's nodes.
function renderOverview(model) {
  return [
    heading('Ceph storage overview', 1),
    attentionSection(model.attention),
    clusterSection(model.cluster, model.devices, model.inventory),
    tiersSection(model.tiers),
    upgradeSection(model.upgrade),
    h('section', { class: 'plugin-card', attrs: { 'data-kinds': 'true', 'aria-labelledby': 'kinds-heading' } },
      h('h2', { class: 'plugin-heading', id: 'kinds-heading', text: 'Pools, storage and retirements by phase' }),
      model.kinds.map(kindSection)),
  ];
}

function attentionSection({ items, more, total }) {
  return h('section', { class: 'plugin-card', attrs: { 'data-attention': 'true', 'aria-labelledby': 'attention-heading' } },
    h('h2', { class: 'plugin-heading', id: 'attention-heading', text: total === 0 ? 'Needs attention' : `Needs attention (${total})` }),
    total === 0
      ? text('✔ Nothing needs attention: every pool and storage kind is working, and every disk the pools list is there and theirs.')
      : h('ul', { class: 'plugin-text', attrs: { 'data-attention-list': 'true' } }, items.map(attentionItem)),
    more.map(({ problem, more: n }) => hint(`And ${n} more: ${problem.toLowerCase()}.`)));
}

function attentionItem(item) {
  const subject = item.subject;
  const key = subject ? `${item.problem}:${subject.kind}/${subject.name}` : item.problem;
  return h('li', { attrs: { 'data-problem': key } },
    badge(item.badge), item.problem === item.badge ? null : [' ', h('strong', { text: item.problem })],
    subject ? [' ', subjectLink(subject)] : null,
    ': ', h('span', { attrs: { 'data-reason': 'true' }, text: item.reason }),
    item.pools ? [' ', h('span', { class: 'plugin-hint' }, 'Pools: ', item.pools.map((name, i) => [i > 0 ? ', ' : '', link(name, () => navigateToDetail('DiskPool', name))]))] : null);
}

function subjectLink(subject) {
  const label = `${subject.kind} ${subject.name}`;
  if (subject.exists === false) return h('span', { class: 'console-truncate', attrs: { title: label }, text: label });
  const el = link(subject.name, () => navigateToDetail(subject.kind, subject.name));
  el.setAttribute('aria-label', label);
  return el;
}

function clusterSection(cluster, devices, inventory) {
  return h('section', { class: 'plugin-card', attrs: { 'data-cluster': 'true', 'aria-labelledby': 'cluster-heading' } },
    h('h2', { class: 'plugin-heading', id: 'cluster-heading', text: 'Ceph cluster' }),
    cluster.found ? clusterStatus(cluster) : hint(cluster.ref
      ? `CephCluster ${cluster.ref.namespace}/${cluster.ref.name}, which the DiskPools feed, does not exist.`
      : 'No CephCluster to show yet.'),
    heading('Devices in the cluster', 3),
    devices.total.devices === 0
      ? hint('The CephCluster lists no device yet: a DiskPool adds its disks.')
      : [
        text(`${devices.total.devices} ${devices.total.devices === 1 ? 'device' : 'devices'} on ${devices.rows.length} ${devices.rows.length === 1 ? 'node' : 'nodes'}, each an OSD once Rook has made it one.`),
        table([
          { label: 'Node', cell: (r) => r.node },
          ...DISK_TYPES.map(([key, label]) => ({ label, cell: (r) => String(r[key]) })),
          { label: 'Unknown type', cell: (r) => String(r.unknown) },
          { label: 'Devices', cell: (r) => String(r.devices) },
        ], [...devices.rows, devices.total], { rowKey: (r) => r.node }),
      ],
    h('p', { class: 'plugin-text', attrs: { 'data-inventory': 'true' }, text: inventorySentence(inventory) }));
}

function clusterStatus(cluster) {
  return [
    deflist([
      ['CephCluster', `${cluster.ref.namespace}/${cluster.ref.name}`],
      ['Phase', badge(cluster.deleting ? 'Deleting' : cluster.phase || 'Unknown')],
      ['Health', badge(cluster.health || 'Unknown')],
      ['Message', cluster.message],
    ]),
    cluster.how === 'only' ? hint('No DiskPool names a CephCluster yet; this is the only one there is.') : null,
    heading('Raw capacity', 3),
    cluster.capacity
      ? [capacityMeter(cluster.capacity), hint('Raw capacity across every OSD, before replication; shared by every pool and storage kind.')]
      : hint('Ceph reports no capacity yet.'),
  ];
}

// tiersSection is the capacity by device class: for each class the
// DiskPools' disks have, its hosts, disks and raw capacity, and every disk
// together; what a storage kind with that tier is placed on and sized by.
function tiersSection(tiers) {
  return h('section', { class: 'plugin-card', attrs: { 'data-tiers': 'true', 'aria-labelledby': 'tiers-heading' } },
    h('h2', { class: 'plugin-heading', id: 'tiers-heading', text: 'Capacity by class' }),
    tiers.all.disks === 0
      ? hint('No DiskPool contributes disks yet: there is no class to place storage on.')
      : [
        table([
          { label: 'Class', cell: (t) => t.deviceClass || 'Every disk' },
          { label: 'Hosts', cell: (t) => String(t.nodes) },
          { label: 'Disks', cell: (t) => String(t.disks) },
          { label: 'Raw capacity', cell: (t) => formatBytes(t.rawBytes) },
        ], [...tiers.present, tiers.all], { rowKey: (t) => t.deviceClass || 'all' }),
        hint("Summed from the disks the DiskPools claim, retired ones left out: Ceph reports its capacity for every OSD together only. "
          + "A storage kind on a tier is placed on that class's OSDs alone: its copies spread over the class's hosts, and it stores at most their raw capacity, times Ceph's full ratio, divided by its copies."),
      ]);
}

// STAGE_SENTENCES say what each stage of an upgrade means for the operator.
const STAGE_SENTENCES = {
  Refused: 'The preflight refused this step and nothing changed. Fix what the checks say; the plugin checks again each minute.',
  Waiting: 'The step waits for the cluster to settle after the last change; it starts on its own.',
  Rolling: 'Rook restarts the daemons one at a time, asking Ceph before each OSD.',
  Done: 'The last upgrade is complete.',
};

// upgradeSection shows the upgrade record: shown only when there is one.
function upgradeSection(u) {
  if (!u) return null;
  const section = (...children) => h('section', { class: 'plugin-card', attrs: { 'data-upgrade': u.stage || 'unreadable', 'aria-labelledby': 'upgrade-heading' } },
    h('h2', { class: 'plugin-heading', id: 'upgrade-heading', text: 'Upgrade' }), ...children);
  if (u.unreadable) return section(hint(`The upgrade record on the CephCluster cannot be read: ${u.unreadable}.`));
  const counted = u.stage === 'Rolling' || u.stage === 'Done';
  const more = u.total - u.done - u.pending.length;
  return section(
    deflist([
      ['Step', `${u.step}: ${u.from || 'the running version'} → ${u.to}`],
      ['Stage', badge(u.stage)],
      counted ? ['Daemons', `${u.done} of ${u.total} on ${u.to}`] : null,
      u.pending.length > 0 ? ['Waiting for', `${u.pending.join(', ')}${more > 0 ? ` and ${more} more` : ''}`] : null,
    ]),
    counted && u.total > 0
      ? h('meter', { attrs: { min: 0, max: u.total, value: u.done, 'aria-label': `${u.done} of ${u.total} daemons upgraded`, 'data-upgrade-progress': 'true' } })
      : null,
    u.checks.length > 0
      ? h('ul', { class: 'plugin-text', attrs: { 'data-upgrade-checks': 'true' } },
        u.checks.map((c) => h('li', { attrs: { 'data-check': c.name } }, h('strong', { text: c.name }), `: ${c.message}`)))
      : null,
    hint(STAGE_SENTENCES[u.stage] || ''));
}

function inventorySentence(c) {
  if (c.total === 0) return 'Discovery has published no Disk yet.';
  const types = DISK_TYPES.map(([key, label]) => `${c[key]} ${label}`).join(', ');
  return `Discovery knows ${c.total} ${c.total === 1 ? 'disk' : 'disks'} (${types}): ${c.Available} available, ${c.InUse} in use, ${c.Missing} missing.`;
}

function kindSection(summary) {
  const id = `kind-${summary.kind}`;
  return h('section', { attrs: { 'data-kind': summary.kind, 'aria-labelledby': id } },
    h('h3', { class: 'plugin-heading', id, text: `${summary.title} (${summary.total})` }),
    summary.total === 0 ? hint(`No ${summary.title.toLowerCase()} yet.`) : null,
    summary.total === 0 ? null : h('p', { class: 'plugin-text', attrs: { 'data-phases': 'true' } },
      summary.phases.map(([phase, n], i) => [i > 0 ? ' ' : '', h('span', { attrs: { 'data-phase': phase } }, badge(phase), ` ${n}`)])),
    summary.objects.length === 0 ? null : table([
      { label: 'Name', cell: (o) => link(o.name, () => navigateToDetail(summary.kind, o.name)) },
      { label: 'Phase', cell: (o) => badge(o.phase) },
      { label: 'Message', cell: (o) => o.message },
    ], summary.objects, { rowKey: (o) => `${summary.kind}/${o.name}` }),
    summary.unlisted > 0 ? hint(`And ${summary.unlisted} more: see ${summary.title} in the menu.`) : null,
    summary.finished > 0 ? hint(`${summary.finished} finished (retired or cancelled): see Disk retirements in the menu.`) : null);
}

function joinNames(names) {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

function byName(a, b) {
  return a.metadata.name.localeCompare(b.metadata.name);
}

// olderFirst is the reconciler's precedence for a contested disk: the older
// pool, ties broken by name.
function olderFirst(a, b) {
  const ta = a.metadata.creationTimestamp || '';
  const tb = b.metadata.creationTimestamp || '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.metadata.name.localeCompare(b.metadata.name);
}
