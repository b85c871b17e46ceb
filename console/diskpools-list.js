// DiskPool list: each pool's disk contribution at a glance, following the
// pools as the plugin writes their status.
import {
  RESOURCES, sdk, mount, heading, hint, table, badge, link, formatBytes, navigateToDetail, openSheet, actions, button, byName, startPage,
} from './_shared.js';
import { k8s, followsKind } from './live.js';

startPage(render, {
  follow: followsKind({
    list: (opts) => k8s.list(RESOURCES.diskpools, opts),
    watch: (opts) => k8s.watch(RESOURCES.diskpools, opts),
  }),
});

async function render(root) {
  const { items } = await sdk().k8s.list(RESOURCES.diskpools);
  mount(root,
    heading('Disk pools', 1),
    hint('A disk pool contributes disks to the cluster\'s shared OSD set. Pools do not isolate storage: every storage kind spans every pool.'),
    actions(button('New disk pool', () => openSheet({ kind: 'DiskPool', view: 'create' }), { name: 'create' })),
    table(columns, [...items].sort(byName), { empty: 'No disk pools yet.', rowKey: (p) => p.metadata.name }));
}

const columns = [
  { label: 'Name', cell: (p) => link(p.metadata.name, () => navigateToDetail('DiskPool', p.metadata.name)) },
  { label: 'Phase', cell: (p) => badge(status(p).phase) },
  { label: 'Disks in use', cell: (p) => `${status(p).selectedDiskCount || 0} of ${((p.spec && p.spec.disks) || []).length}` },
  { label: 'Raw capacity', cell: (p) => formatBytes(status(p).rawCapacity) },
  { label: 'Message', cell: (p) => status(p).message },
];

function status(pool) {
  return pool.status || {};
}
