// DiskRetirement list: every disk being, or having been, taken out of Ceph,
// following the retirements as the plugin moves them on.
import {
  RESOURCES, sdk, mount, heading, hint, table, badge, link, navigateToDetail, byName, startPage,
} from './_shared.js';
import { k8s, followsKind } from './live.js';
import { formatOSD } from './retirement-pages.js';

startPage(render, {
  follow: followsKind({
    list: (opts) => k8s.list(RESOURCES.diskretirements, opts),
    watch: (opts) => k8s.watch(RESOURCES.diskretirements, opts),
  }),
});

async function render(root) {
  const { items } = await sdk().k8s.list(RESOURCES.diskretirements);
  mount(root,
    heading('Disk retirements', 1),
    hint('A disk retirement takes one disk out of Ceph safely, in Ceph\'s own order: it asks Ceph whether the cluster can lose it, marks its OSD out while it runs, waits until Ceph says it is safe to destroy, stops and purges it, wipes the disk and only then takes the device out of the CephCluster. One runs at a time. Start one from a disk\'s page (Retire or Replace).'),
    table(columns, [...items].sort(byName), { empty: 'No disk retirements.', rowKey: (r) => r.metadata.name }),
    hint('kubectl delete diskretirement <name> cancels a retirement until its OSD is purged, giving back what it changed; after that it can no longer be cancelled.'));
}

const columns = [
  { label: 'Name', cell: (r) => link(r.metadata.name, () => navigateToDetail('DiskRetirement', r.metadata.name)) },
  { label: 'Phase', cell: (r) => badge(status(r).phase || 'Pending') },
  { label: 'Disk', cell: (r) => spec(r).disk },
  { label: 'Replacement', cell: (r) => spec(r).replacement },
  { label: 'OSD', cell: (r) => formatOSD(status(r).osdID) },
  { label: 'Node', cell: (r) => status(r).node },
  { label: 'Device', cell: (r) => status(r).device },
  { label: 'Message', cell: (r) => status(r).message },
];

function status(r) {
  return r.status || {};
}

function spec(r) {
  return r.spec || {};
}
