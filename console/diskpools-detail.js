// DiskPool detail: phase, the pool's disks as the inventory sees them, and
// the cluster's raw capacity.
import {
  RESOURCES, sdk, mount, heading, hint, deflist, table, badge, link, formatBytes, navigateToDetail, openSheet,
  actions, button, card, capacitySection, startPage, deletionNote,
} from './_shared.js';

startPage(render);

async function render(root, ctx) {
  const fundament = sdk();
  const [pool, { items: disks }] = await Promise.all([
    fundament.k8s.get({ ...RESOURCES.diskpools, name: ctx.resource.name }),
    fundament.k8s.list(RESOURCES.disks),
  ]);
  const s = pool.status || {};
  const known = new Map(disks.map((d) => [d.metadata.name, d]));
  const listed = (pool.spec && pool.spec.disks) || [];
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
    card(
      heading('Disks', 2),
      table(diskColumns(pool.metadata.name), listed.map((name) => ({ name, disk: known.get(name) })), { empty: 'This pool lists no disks.', rowKey: (r) => r.name })),
    await capacitySection(),
    deletionNote(`kubectl delete diskpool ${pool.metadata.name}`, [
      'Its disks leave the CephCluster\'s device list (those no other pool lists), but their OSDs keep running, and keep their data, until they are purged from Ceph: Rook removes an OSD only when asked. To take a disk out of Ceph safely, retire it from its page (Retire) before deleting the pool.',
      'The Disks stay in the inventory, and every storage kind stays: the data on these OSDs is still there meanwhile, and Ceph may rebalance it.',
    ]));
}

function diskColumns(poolName) {
  const st = (row) => (row.disk && row.disk.status) || {};
  return [
    { label: 'Disk', cell: (row) => (row.disk ? link(row.name, () => navigateToDetail('Disk', row.name)) : row.name) },
    { label: 'Node', cell: (row) => st(row).nodeName },
    { label: 'Path', cell: (row) => st(row).stablePath || st(row).path },
    { label: 'Size', cell: (row) => formatBytes(st(row).size) },
    { label: 'State', cell: (row) => (row.disk ? badge(st(row).state) : badge('Missing')) },
    { label: 'Note', cell: (row) => diskNote(row, poolName) },
  ];
}

function diskNote(row, poolName) {
  if (!row.disk) return 'No such disk in the inventory; skipped.';
  const claimedBy = row.disk.status && row.disk.status.claimedBy;
  if (claimedBy && claimedBy !== poolName) return `Claimed by the older pool ${claimedBy}; skipped here.`;
  return '';
}
