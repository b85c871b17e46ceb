// Disk detail: everything discovery knows about one device, and who claims
// it; a disk a pool uses can be retired or replaced from here. The page
// follows the Disk: when discovery or a pool changes it, it is drawn again.
import {
  RESOURCES, sdk, mount, heading, hint, deflist, badge, formatBytes, card, link, navigateToDetail, openSheet,
  actions, button, startPage,
} from './_shared.js';
import { isRetired } from './retirement-pages.js';
import { k8s, followsKind } from './live.js';
import { diskType } from './disk-filter.js';

startPage(render, {
  follow: followsKind({
    list: (opts) => k8s.list(RESOURCES.disks, opts),
    watch: (opts) => k8s.watch(RESOURCES.disks, opts),
  }, { named: true }),
});

async function render(root, ctx) {
  const disk = await sdk().k8s.get({ ...RESOURCES.disks, name: ctx.resource.name });
  const s = disk.status || {};
  const retired = isRetired(disk);
  mount(root,
    heading(`Disk ${disk.metadata.name}`, 1),
    s.claimedBy && !retired ? retireActions(disk.metadata.name) : null,
    card(
      heading('State', 2),
      deflist([
        ['State', badge(s.state)],
        ['Reason', s.reason],
        ['Claimed by', s.claimedBy ? link(s.claimedBy, () => navigateToDetail('DiskPool', s.claimedBy)) : 'No disk pool'],
        ['Last seen', s.lastSeenTime],
        retired ? ['Retired', `Yes (${disk.metadata.annotations['ceph.fundament.io/retired']}): out of the CephCluster until the annotation ceph.fundament.io/retired is removed, after wiping the disk`] : null,
      ])),
    card(
      heading('Device', 2),
      deflist([
        ['Node', s.nodeName],
        ['Path', s.path],
        ['Stable path', s.stablePath],
        ['Size', formatBytes(s.size)],
        ['Type', diskType(s.type) || s.type],
        ['Rotational', s.rotational === undefined ? '' : (s.rotational ? 'Yes' : 'No')],
        ['Model', s.model],
        ['Serial', s.serial],
        ['WWN', s.wwn],
        ['Filesystem', s.filesystem],
        ['Available to Ceph', s.available === undefined ? '' : (s.available ? 'Yes' : 'No')],
      ]),
      hint('The stable path (/dev/disk/by-id/…) is what goes into the CephCluster: kernel names such as /dev/sdb can change on reboot.')));
}

// retireActions open the DiskRetirement sheet, which checks before it
// changes anything and asks for confirmation.
function retireActions(disk) {
  return [
    actions(
      button('Retire', () => openSheet({ kind: 'DiskRetirement', view: 'create', params: { disk } }), { name: 'retire', secondary: true }),
      button('Replace', () => openSheet({ kind: 'DiskRetirement', view: 'create', params: { disk, replace: true } }), { name: 'replace', secondary: true })),
    hint('Retire takes the disk\'s OSD out of Ceph safely; Replace first adds an available disk to the pool. Both check the cluster and ask you to confirm before anything is touched.'),
  ];
}
