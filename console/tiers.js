// Tiers: the disks the DiskPools give Ceph, by device class, and the
// replication a consumer gets on one, as the plugin decides them (tiers.go:
// TiersOf, ClassCopies, TierReplication, MetadataReplication). A Disk's
// status.type is the device class its OSD has in Ceph; a consumer's
// spec.deviceClass puts its pools on the OSDs of that class only, and its
// replicas are sized on the hosts with disks of it, never fewer than it
// asks or has.
//
// The console knows the union from the Disks alone: a disk is in it when a
// DiskPool claims it (status.claimedBy) and no DiskRetirement took it out
// of Ceph (its retired annotation). The plugin also leaves out a disk that
// is neither available nor in the CephCluster yet; the console cannot tell
// those apart, and counts them.
//
// Pure: Disks in, numbers and sentences out; no DOM, no calls.
import { quantityToBytes, formatBytes } from './_shared.js';
import { effectiveReplicas, failureDomain } from './budget.js';

// DEVICE_CLASSES are the classes the plugin gives OSDs, fastest first
// (tiers.go's deviceClasses): the order the sheets and the overview list
// them in, and the order metadata looks for its class in.
export const DEVICE_CLASSES = ['nvme', 'ssd', 'hdd'];

// The annotation a DiskRetirement leaves on a retired disk
// (v1alpha1.RetiredAnnotation): its OSD is out of Ceph.
const RETIRED_ANNOTATION = 'ceph.fundament.io/retired';

// inUnion says whether a Disk is among those the DiskPools give Ceph.
export function inUnion(disk) {
  const s = disk.status || {};
  const annotations = (disk.metadata && disk.metadata.annotations) || {};
  return Boolean(s.claimedBy) && !annotations[RETIRED_ANNOTATION];
}

// tiersOf sums the union's disks by class: all is every disk of the union
// (where a consumer without a class is placed), present the classes that
// have disks, fastest first. A tier is {deviceClass, nodes, disks,
// rawBytes}; nodes is how many hosts have disks of it, what replication on
// it is sized against. A disk without a known type counts in all only.
export function tiersOf(disks) {
  const blank = (deviceClass) => ({ deviceClass, nodes: 0, disks: 0, rawBytes: 0 });
  const all = blank('');
  const byClass = new Map(DEVICE_CLASSES.map((c) => [c, blank(c)]));
  const hosts = new Map();
  const add = (tier, disk) => {
    const s = disk.status || {};
    if (!hosts.has(tier)) hosts.set(tier, new Set());
    hosts.get(tier).add(s.nodeName || '');
    tier.nodes = hosts.get(tier).size;
    tier.disks += 1;
    const size = quantityToBytes(s.size);
    if (size > 0) tier.rawBytes += size;
  };
  for (const disk of disks) {
    if (!inUnion(disk)) continue;
    add(all, disk);
    const tier = byClass.get(String((disk.status || {}).type || '').toLowerCase());
    if (tier) add(tier, disk);
  }
  return { all, present: DEVICE_CLASSES.map((c) => byClass.get(c)).filter((t) => t.disks > 0) };
}

// tierOf is the tier of deviceClass ('' is every disk); a class without
// disks is a tier of none.
export function tierOf(tiers, deviceClass) {
  if (!deviceClass) return tiers.all;
  return tiers.present.find((t) => t.deviceClass === deviceClass) || { deviceClass, nodes: 0, disks: 0, rawBytes: 0 };
}

// MAX_REPLICAS caps automatic sizing (replication.go maxReplicas).
const MAX_REPLICAS = 3;

// classCopies is how many copies a pool on a device class keeps over nodes
// hosts with disks of it, have being the copies it has now (0: none yet),
// as tiers.go's ClassCopies decides: {copies, refused}. A class never
// lowers a consumer's copies: an explicit requested count is kept as asked
// (one copy only when 1 is asked), and automatic, min(3, nodes), goes below
// neither 2 nor have. refused is '' when the nodes hold the copies one per
// node, else why they are what they are: 'asked', 'held' (automatic, and
// the pool has them) or 'minimum' (automatic keeps at least 2 on a
// class); the plugin then refuses the consumer (TooFewNodesOfClass) and
// its pools keep what they have.
export function classCopies(requested, have, nodes) {
  let copies = Math.min(MAX_REPLICAS, nodes);
  let why = 'minimum';
  if (requested !== null && requested !== undefined) {
    copies = Math.max(1, Math.min(requested, MAX_REPLICAS));
    why = 'asked';
  } else {
    const floor = Math.max(2, Math.min(have || 0, MAX_REPLICAS));
    if (copies < floor) {
      copies = floor;
      if (have >= 2) why = 'held';
    }
  }
  return { copies, refused: copies > nodes ? why : '' };
}

// classRefusalSentence says why the plugin refuses to place what on
// deviceClass, whose disks are on nodes hosts (r: a refused classCopies),
// in the words of its TooFewNodesOfClass message.
export function classRefusalSentence(what, deviceClass, nodes, r) {
  const copies = plural(r.copies, 'copy', 'copies');
  const more = plural(r.copies - nodes, 'more node', 'more nodes');
  let keeps = `${what} keeps ${copies} (replicas: ${r.copies})`;
  let remedy = 'or choose another tier';
  if (r.refused === 'held') {
    keeps = `${what} keeps the ${copies} it has (replicas automatic)`;
    remedy = `choose another tier, or set replicas to ${nodes}`;
  } else if (r.refused === 'minimum') {
    keeps = `${what} keeps at least ${copies} on a tier (replicas automatic)`;
    remedy = `choose another tier, or set replicas to ${nodes}`;
  }
  return `✖ Device class ${deviceClass} has disks on only ${plural(nodes, 'node', 'nodes')}; ${keeps}, one per node. `
    + `The plugin refuses that (TooFewNodesOfClass) and nothing moves: add ${deviceClass} disks on ${more}, ${remedy}.`;
}

// tierReplication is what requested replicas (null: automatic) give on
// deviceClass, have being the copies the pool has now: {size,
// failureDomain, nodes}. Without a class the size is clamped to the hosts;
// on one it is classCopies'. null when the plugin refuses it: the class
// has no disks (NoDisksOfClass), or too few hosts for the copies
// (TooFewNodesOfClass).
export function tierReplication(requested, deviceClass, tiers, have = 0) {
  const { nodes } = tierOf(tiers, deviceClass);
  if (!(nodes >= 1)) return null;
  if (!deviceClass) {
    const size = effectiveReplicas(requested, nodes);
    return { size, failureDomain: failureDomain(size, nodes), nodes };
  }
  const { copies, refused } = classCopies(requested, have, nodes);
  if (refused) return null;
  return { size: copies, failureDomain: failureDomain(copies, nodes), nodes };
}

// metadataClass is the class a FileStorage's metadata pool goes to, new
// (nothing held): the one it names; without a data class, the data's
// (every OSD); else the fastest class present whose hosts keep at least
// the data's copies as far apart, and the data's own class when none does
// (MetadataReplication). Where the plugin would refuse the consumer, the
// class it names, or its data's.
export function metadataClass(dataClass, explicit, requested, tiers) {
  const spec = { replicas: requested, deviceClass: dataClass, metadataDeviceClass: explicit };
  const placed = placeMetadata('FileStorage', spec, {}, tiers);
  return placed ? placed.metadataClass : explicit || dataClass;
}

// sharedMetadataClass is the class a new ObjectStorage's metadata pools go
// to: every store's are sized as automatic over every host says, and share
// .rgw.root, so a store with a data class puts them on the fastest class
// present whose hosts hold that many copies, else on every OSD; a store
// without one keeps them on every OSD (SharedMetadataReplication).
export function sharedMetadataClass(dataClass, tiers) {
  const placed = placeMetadata('ObjectStorage', { deviceClass: dataClass }, {}, tiers);
  return placed ? placed.metadataClass : '';
}

// placeMetadata is where the plugin places the metadata pools of a
// FileStorage or an ObjectStorage (kind) whose spec asks spec ({replicas,
// deviceClass, metadataDeviceClass}) over tiers, held being the copies its
// pools keep now ({replicas, metadataReplicas}, its status's; absent:
// none yet), which a class never lowers: its Place (consumer_kinds.go)
// with MetadataReplication or SharedMetadataReplication (tiers.go), step
// by step. {metadataClass, metadataReplicas}, or null when the plugin
// refuses the consumer (a class without disks, or on too few hosts for
// the copies): then nothing is written, and its pools stay where they
// are. testdata/metadata-class-cases.json holds the cases both decide.
export function placeMetadata(kind, spec, held, tiers) {
  const requested = spec.replicas ?? null;
  const dataClass = spec.deviceClass || '';
  const data = tierReplication(requested, dataClass, tiers, held.replicas || 0);
  if (!data) return null;
  const on = (deviceClass, r) => ({ metadataClass: deviceClass, metadataReplicas: r.size });
  if (kind === 'ObjectStorage') {
    const auto = tierReplication(null, '', tiers);
    if (!dataClass) return on('', auto);
    for (const tier of tiers.present) {
      const r = tierReplication(auto.size, tier.deviceClass, tiers);
      if (r && keepsCopies(r, auto)) return on(tier.deviceClass, r);
    }
    return on('', auto);
  }
  const have = held.metadataReplicas || 0;
  const onClass = (deviceClass) => {
    const r = tierReplication(requested, deviceClass, tiers, have);
    return r ? on(deviceClass, r) : null;
  };
  const explicit = spec.metadataDeviceClass || '';
  if (explicit) return onClass(explicit);
  if (!dataClass) return on('', data);
  for (const tier of tiers.present) {
    const r = tierReplication(requested, tier.deviceClass, tiers, have);
    if (r && keepsCopies(r, data)) return on(tier.deviceClass, r);
  }
  // The data's class was among those tried: refused when it cannot hold
  // the copies the metadata keeps.
  return onClass(dataClass);
}

// METADATA_KINDS are the kinds whose metadata pools a class can move
// apart from their data.
const METADATA_KINDS = ['FileStorage', 'ObjectStorage'];

// metadataMoves are the consumers whose metadata pools an edit of the
// DiskPools moves to another class: for each FileStorage and ObjectStorage
// of consumers ([{kind, object}]) that has pools, where the plugin places
// its metadata over the union's tiers before the edit and after it
// (placeMetadata, held as its status says); a placement the plugin would
// refuse keeps them where its status says they are. [{kind, name, from,
// to}], by kind then name; classes are '' for every OSD.
export function metadataMoves(consumers, before, after) {
  const moves = [];
  for (const { kind, object } of consumers) {
    const s = object.status || {};
    if (!METADATA_KINDS.includes(kind) || !(s.replicas >= 1) || (object.metadata && object.metadata.deletionTimestamp)) continue;
    const held = { replicas: s.replicas, metadataReplicas: s.metadataReplicas || s.replicas };
    const where = (tiers) => {
      const placed = placeMetadata(kind, object.spec || {}, held, tiers);
      return placed ? placed.metadataClass : s.metadataDeviceClass || '';
    };
    const from = where(before);
    const to = where(after);
    if (from !== to) moves.push({ kind, name: object.metadata.name, from, to });
  }
  return moves.sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}

// unionAfterEdit is the disks as they will be once pool poolName lists
// selected (its spec.disks after the edit; a new pool's name may be
// empty), otherLists the names the other DiskPools list: a disk this pool
// claims and drops goes to no pool unless another lists it, and a disk of
// the selection no pool claims becomes this pool's. tiersOf it is the
// union after the edit.
export function unionAfterEdit(disks, poolName, selected, otherLists) {
  const mine = new Set(selected);
  const others = new Set(otherLists);
  const pool = poolName || '(this pool)';
  return disks.map((disk) => {
    const s = disk.status || {};
    const claimedBy = s.claimedBy || '';
    let next = claimedBy;
    if (claimedBy === '' || claimedBy === poolName) {
      if (mine.has(disk.metadata.name)) next = pool;
      else if (claimedBy !== '' && !others.has(disk.metadata.name)) next = '';
    }
    return next === claimedBy ? disk : { ...disk, status: { ...s, claimedBy: next } };
  });
}

// placementOf is where the plugin places the pools of a consumer of kind
// whose spec asks spec ({replicas, deviceClass, metadataDeviceClass}), as
// its Place does: the place budget.js counts ({replicas, failureDomain,
// deviceClass, metadataReplicas, metadataClass, placed}). The data pool is
// sized on its class's hosts, or without one on nodes, the nodes listing
// devices in the CephCluster (as the sheets size every disk); a
// FileStorage's metadata pool on its class's (MetadataReplication); an
// object store's metadata pools at the automatic size on their shared
// class (SharedMetadataReplication); a BlockStorage has none. A class it
// names without disks places nothing (NoDisksOfClass): the plugin then
// counts its pools unplaced, at one copy, all on its data class
// (consumer_kinds.go Budget); so does a class on too few hosts for the
// copies asked (TooFewNodesOfClass; placed new, so nothing is held).
export function placementOf(kind, spec, tiers, nodes) {
  const requested = spec.replicas ?? null;
  const deviceClass = spec.deviceClass || '';
  const explicit = kind === 'FileStorage' ? spec.metadataDeviceClass || '' : '';
  const hosts = (c) => (c ? tierOf(tiers, c).nodes : nodes);
  const copies = (c) => (c ? classCopies(requested, 0, hosts(c)) : { copies: effectiveReplicas(requested, nodes), refused: '' });
  const refused = (c) => c && (!(hosts(c) >= 1) || copies(c).refused);
  if (refused(deviceClass) || refused(explicit)) {
    return { replicas: 1, failureDomain: '', deviceClass, metadataReplicas: 1, metadataClass: deviceClass, placed: false };
  }
  const replicas = copies(deviceClass).copies;
  const place = { replicas, failureDomain: failureDomain(replicas, hosts(deviceClass)), deviceClass, metadataReplicas: replicas, metadataClass: deviceClass, placed: true };
  if (kind === 'FileStorage') {
    const metaClass = metadataClass(deviceClass, explicit, requested, tiers);
    return { ...place, metadataClass: metaClass, metadataReplicas: copies(metaClass).copies };
  }
  if (kind === 'ObjectStorage') {
    return { ...place, metadataClass: sharedMetadataClass(deviceClass, tiers), metadataReplicas: effectiveReplicas(null, nodes) };
  }
  return place;
}

// keepsCopies says whether r keeps at least want's copies, as far apart.
function keepsCopies(r, want) {
  return r.size >= want.size && (r.failureDomain === want.failureDomain || want.failureDomain === 'osd');
}

// tierLabel names a tier in a select: its hosts, raw capacity and the
// most copies it allows, e.g. "ssd — 2 hosts, 1.8 TiB raw, up to 2
// copies across hosts".
export function tierLabel(tier) {
  const most = effectiveReplicas(null, tier.nodes);
  const copies = tier.nodes >= 2 ? `up to ${most} copies across hosts` : '1 copy, on its one host, with replicas 1 only';
  return `${tier.deviceClass} — ${plural(tier.nodes, 'host', 'hosts')}, ${formatBytes(tier.rawBytes)} raw, ${copies}`;
}

// classOSDs names the OSDs of a class in a sentence ('' is every OSD).
export function classOSDs(deviceClass) {
  return deviceClass ? `the ${deviceClass} OSDs` : 'every OSD';
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}
