// DiskPool detail: phase, the pool's disks as the inventory sees them, and
// the cluster's raw capacity. The page follows the pool itself (live.js's
// followsKind): when the plugin writes its status, it is drawn again.
//
// The pool's disks are found in the inventory, which may hold 10,000 Disks:
// they are listed in pages and then followed with a watch (live.js), as the
// Disks page does, so the table fills in while the pages arrive, says how
// far the list is, and keeps each disk's state current. The list is made
// once for the page; rendering again (after a sheet saved the pool, or the pool changed) reads
// the pool and draws from the disks already known.
import {
  RESOURCES, sdk, h, mount, heading, hint, deflist, table, badge, link, formatBytes, navigateToDetail, openSheet, oncePerFrame,
  actions, button, card, capacitySection, startPage, deletionNote, keepingFocus,
} from './_shared.js';
import { k8s, follow, followsKind, loadingSentence, followProblem } from './live.js';

startPage(render, {
  follow: followsKind({
    list: (opts) => k8s.list(RESOURCES.diskpools, opts),
    watch: (opts) => k8s.watch(RESOURCES.diskpools, opts),
  }, { named: true }),
});

// inventory is every Disk by name as the feed has them, how far the list
// is and what went wrong; section is the Disks section last rendered.
const inventory = { disks: new Map(), progress: null, complete: false, problem: null };
let section = null;
let feed = null;

async function render(root, ctx) {
  if (!feed) feed = followInventory();
  const pool = await sdk().k8s.get({ ...RESOURCES.diskpools, name: ctx.resource.name });
  const s = pool.status || {};
  const listed = (pool.spec && pool.spec.disks) || [];
  const disks = poolDisks(root, pool.metadata.name, listed);
  mount(root,
    heading(`Disk pool ${pool.metadata.name}`, 1),
    actions(button('Edit disks', () => openSheet({ kind: 'DiskPool', view: 'edit', name: pool.metadata.name }), { name: 'edit' })),
    card(
      heading('Status', 2),
      deflist([
        ['Phase', badge(s.phase)],
        ['Message', s.message],
        ['Disks in use', `${s.selectedDiskCount || 0} of ${listed.length}`],
        ['Raw capacity', formatBytes(s.rawCapacity)],
      ]),
      hint('Raw capacity is the summed size of this pool\'s disks, before replication; it is not usable space.')),
    card(heading('Disks', 2), disks.element),
    await capacitySection(),
    deletionNote(`kubectl delete diskpool ${pool.metadata.name}`, [
      'Its disks leave the CephCluster\'s device list (those no other pool lists), but their OSDs keep running, and keep their data, until they are purged from Ceph: Rook removes an OSD only when asked. To take a disk out of Ceph safely, retire it from its page (Retire) before deleting the pool.',
      'The Disks stay in the inventory, and every storage kind stays: the data on these OSDs is still there meanwhile, and Ceph may rebalance it.',
    ]));
  section = disks;
  section.draw();
}

// followInventory lists every Disk in pages and follows them. Pages and
// failures redraw the Disks section at once; watch events (discovery
// rescans a node in bursts) redraw it once a frame, and only when they
// changed a disk the pool lists.
function followInventory() {
  const draw = () => { if (section) section.draw(); };
  const drawSoon = oncePerFrame(draw);
  const handle = follow({
    list: (opts) => k8s.list(RESOURCES.disks, opts),
    watch: (opts) => k8s.watch(RESOURCES.disks, opts),
    onChange: (batch) => {
      for (const obj of batch.deleted) inventory.disks.delete(obj.metadata.name);
      for (const obj of batch.upserted) inventory.disks.set(obj.metadata.name, obj);
      const recovered = inventory.problem !== null;
      inventory.problem = null;
      if (batch.phase === 'watching') {
        const changed = [...batch.upserted, ...batch.deleted];
        if (recovered || (section && changed.some((obj) => section.lists(obj.metadata.name)))) drawSoon();
        return;
      }
      inventory.progress = batch.progress;
      if (batch.phase === 'listed') inventory.complete = true;
      draw();
    },
    onError: (err, info) => {
      inventory.problem = { err, info };
      draw();
    },
    onLive: () => {
      if (inventory.problem === null) return;
      inventory.problem = null;
      draw();
    },
  });
  window.addEventListener('pagehide', () => handle.stop(), { once: true });
  return handle;
}

// poolDisks is the Disks section of a pool listing the disks listed: how
// far the list is, what went wrong, and a row for every disk listed.
// Returns {element, draw(), lists(name)}.
function poolDisks(root, poolName, listed) {
  const names = new Set(listed);
  const progress = h('p', { class: 'plugin-hint', attrs: { 'data-role': 'load-progress', 'aria-live': 'polite' }, text: 'Loading disks…' });
  const problem = h('div', { attrs: { 'data-role': 'live-problem' } });
  const rows = h('div', { attrs: { 'data-role': 'pool-disks' } });
  // A watch event draws the table again under a focused disk link.
  const draw = () => keepingFocus(() => {
    const { disks, complete } = inventory;
    if (complete) progress.textContent = 'Kept up to date as discovery reports changes.';
    else if (inventory.progress) progress.textContent = loadingSentence('disks', inventory.progress);
    if (inventory.problem) problem.replaceChildren(followProblem(inventory.problem.err, inventory.problem.info, { listed: complete, noun: 'disks' }));
    else problem.replaceChildren();
    rows.replaceChildren(table(diskColumns(poolName, complete), listed.map((name) => ({ name, disk: disks.get(name) })), { empty: 'This pool lists no disks.', rowKey: (r) => r.name }));
    if (complete) root.dataset.loaded = 'complete';
  });
  return { element: [progress, problem, rows], draw, lists: (name) => names.has(name) };
}

// diskColumns describe a listed disk; until the list is complete, a disk not
// seen yet is still loading rather than missing.
function diskColumns(poolName, complete) {
  const st = (row) => (row.disk && row.disk.status) || {};
  return [
    { label: 'Disk', cell: (row) => (row.disk ? link(row.name, () => navigateToDetail('Disk', row.name)) : row.name) },
    { label: 'Node', cell: (row) => st(row).nodeName },
    { label: 'Path', cell: (row) => st(row).stablePath || st(row).path },
    { label: 'Size', cell: (row) => formatBytes(st(row).size) },
    { label: 'State', cell: (row) => (row.disk ? badge(st(row).state) : complete ? badge('Missing') : 'Loading…') },
    { label: 'Note', cell: (row) => diskNote(row, poolName, complete) },
  ];
}

function diskNote(row, poolName, complete) {
  if (!row.disk) return complete ? 'No such disk in the inventory; skipped.' : '';
  const claimedBy = row.disk.status && row.disk.status.claimedBy;
  if (claimedBy && claimedBy !== poolName) return `Claimed by the older pool ${claimedBy}; skipped here.`;
  return '';
}
