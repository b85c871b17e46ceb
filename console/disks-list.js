// Disk list: the discovered block devices, grouped by node so an operator can
// match them against lsblk on that machine.
import {
  RESOURCES, sdk, h, mount, heading, hint, table, badge, link, formatBytes, navigateToDetail, card, text, startPage,
} from './_shared.js';

startPage(render);

async function render(root) {
  const { items } = await sdk().k8s.list(RESOURCES.disks);
  const byNode = groupByNode(items);
  mount(root,
    heading('Disks', 1),
    hint('Block devices Rook discovered on the cluster nodes. Select them into a disk pool to turn them into OSDs.'),
    items.length === 0 ? text('No disks discovered yet.') : null,
    [...byNode.keys()].sort().map((node) => nodeSection(node, byNode.get(node))));
}

function groupByNode(disks) {
  const groups = new Map();
  for (const disk of disks) {
    const node = (disk.status && disk.status.nodeName) || '(unknown node)';
    if (!groups.has(node)) groups.set(node, []);
    groups.get(node).push(disk);
  }
  for (const list of groups.values()) list.sort(byPath);
  return groups;
}

function byPath(a, b) {
  const pa = (a.status && a.status.path) || a.metadata.name;
  const pb = (b.status && b.status.path) || b.metadata.name;
  return pa.localeCompare(pb, undefined, { numeric: true });
}

function nodeSection(node, disks) {
  return card(
    heading(`Node ${node}`, 2),
    table(diskColumns, disks, { rowKey: (d) => d.metadata.name }));
}

const diskColumns = [
  { label: 'Name', cell: (d) => link(d.metadata.name, () => navigateToDetail('Disk', d.metadata.name)) },
  { label: 'Path', cell: (d) => status(d).path },
  { label: 'Stable path', cell: (d) => status(d).stablePath },
  { label: 'Size', cell: (d) => formatBytes(status(d).size) },
  { label: 'Type', cell: (d) => status(d).type },
  { label: 'State', cell: (d) => stateCell(status(d)) },
  { label: 'Claimed by', cell: (d) => status(d).claimedBy },
];

function status(disk) {
  return disk.status || {};
}

function stateCell(s) {
  return h('span', {}, badge(s.state), s.reason ? h('span', { class: 'plugin-hint', text: ` — ${s.reason}` }) : null);
}
