// Disk detail: everything discovery knows about one device, and who claims it.
import {
  RESOURCES, sdk, mount, heading, hint, deflist, badge, formatBytes, card, link, navigateToDetail, startPage,
} from './_shared.js';

startPage(render);

async function render(root, ctx) {
  const disk = await sdk().k8s.get({ ...RESOURCES.disks, name: ctx.resource.name });
  const s = disk.status || {};
  mount(root,
    heading(`Disk ${disk.metadata.name}`, 1),
    card(
      heading('State', 2),
      deflist([
        ['State', badge(s.state)],
        ['Reason', s.reason],
        ['Claimed by', s.claimedBy ? link(s.claimedBy, () => navigateToDetail('DiskPool', s.claimedBy)) : 'No disk pool'],
        ['Last seen', s.lastSeenTime],
      ])),
    card(
      heading('Device', 2),
      deflist([
        ['Node', s.nodeName],
        ['Path', s.path],
        ['Stable path', s.stablePath],
        ['Size', formatBytes(s.size)],
        ['Type', s.type],
        ['Rotational', s.rotational === undefined ? '' : (s.rotational ? 'Yes' : 'No')],
        ['Model', s.model],
        ['Serial', s.serial],
        ['WWN', s.wwn],
        ['Filesystem', s.filesystem],
        ['Available to Ceph', s.available === undefined ? '' : (s.available ? 'Yes' : 'No')],
      ]),
      hint('The stable path (/dev/disk/by-id/…) is what goes into the CephCluster: kernel names such as /dev/sdb can change on reboot.')));
}
