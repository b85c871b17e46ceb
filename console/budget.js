// Ceph's budgets and the usable capacity a replica count gives, as the
// consumer sheets show them before anything is saved (issue 19). The rules
// are the plugin's own (budget.go, capacity.go, replication.go), so what a
// sheet predicts is what the plugin decides: a newcomer that does not fit is
// refused (Degraded, OverBudget) and nothing is made in Ceph; one that brings
// Ceph past mon_max_pg_per_osd is made, with Ceph's warning.
//
// Pure: API objects and numbers in, numbers and sentences out; no DOM, no
// calls. The pages gather the objects and render the answers.
import { quantityToBytes, formatBytes } from './_shared.js';

// What one consumer of each kind makes in Ceph, per budget.go's PoolsOf:
// its pools (the data pool first; CRUSH rules: crushRulesPerPool), and
// pg_num × replicas placement group copies (32 per pool, Ceph's default):
// its data pool's pgsPerReplica × its replicas, its metadata pools'
// metadataPgsPerReplica × theirs. A FileStorage's metadata pool is sized
// on its own class's hosts (MetadataReplication); an object store's 6
// metadata pools (8 PGs each, Rook's) replicate at the automatic size
// whatever the store asks (objectstore.go RenderObjectStore;
// METADATA_AT_AUTOMATIC); tiers.js placementOf says both. A Go test reads
// these lines to check them against budget.go: keep one kind per line.
export const POOLS_PER_KIND = {
  BlockStorage: { pools: 1, pgsPerReplica: 32, metadataPgsPerReplica: 0 },
  FileStorage: { pools: 2, pgsPerReplica: 32, metadataPgsPerReplica: 32 },
  ObjectStorage: { pools: 7, pgsPerReplica: 32, metadataPgsPerReplica: 48 },
};
// METADATA_AT_AUTOMATIC are the kinds whose metadata pools are sized
// apart from what the consumer asks: at the automatic size.
const METADATA_AT_AUTOMATIC = new Set(['ObjectStorage']);
// CRUSH rule IDs are one byte: Ceph refuses the 257th rule.
export const CEPH_MAX_CRUSH_RULES = 256;
// mon_max_pg_per_osd's default (the plugin's FUNP_CEPH_MAX_PG_PER_OSD when
// an operator raised it, which the console cannot read): past it per OSD
// Ceph warns (TOO_MANY_PGS) and makes the pools all the same.
export const CEPH_DEFAULT_MAX_PG_PER_OSD = 250;
// osd_max_pg_per_osd_hard_ratio's default: an OSD withholds the PGs past
// mon_max_pg_per_osd times it, which stay inactive. Where Ceph refuses.
export const CEPH_DEFAULT_HARD_RATIO = 3;
// mon_target_pg_per_osd's default: what the PG autoscaler grows the pools
// toward; budget.go's AutoscalerGrowth adds at most 4/3 of it per OSD.
export const CEPH_DEFAULT_TARGET_PG_PER_OSD = 100;
// mon_osd_full_ratio's default: Ceph stops writes once an OSD is this full.
export const CEPH_DEFAULT_FULL_RATIO = 0.95;
// Ceph's .mgr pool: 1 PG, size 3, on Ceph's default rule; always there.
export const MGR_PG_COPIES = 3;
// .rgw.root, which every object store shares: 8 PGs at the automatic size
// (the stores' metadata pools'), once any ObjectStorage exists
// (sharedCost).
export const RGW_ROOT_PGS_PER_REPLICA = 8;

// CRUSH_RULES_PER_NEW_POOL is how many CRUSH rules a pool will hold when
// nothing says how it is placed (budget.go's CrushRulesPerPool(nil)): Rook
// creates it on a rule named after it and moves it at once to
// <pool>_<domain>. A pool that exists is counted from its consumer's
// status.cephBudget instead.
export const CRUSH_RULES_PER_NEW_POOL = 2;

// crushRulesPerPool is budget.go's CrushRulesPerPool: how many CRUSH rules a
// pool holds after the placements it has had (a failure domain, with "~"
// and the device class when there is one; none: counted as a pool without
// a class). Rook moves a pool made without a class at once off the rule
// named after it; one made on a class stays on it, its take step naming
// the class. Each other placement had is one rule more, none removed.
export function crushRulesPerPool(placements) {
  if (placements.length === 0) return CRUSH_RULES_PER_NEW_POOL;
  return 1 + new Set(placements.filter((p, i) => i > 0 || !p.includes('~'))).size;
}

// classPlacement is a pool's placement as the console counts its rules:
// budget.go's PoolPlacement without the failure domain. A history of one
// placement counts the same whatever its domain, and every object store's
// metadata pools have the same domain (SharedMetadataReplication sizes
// them all as automatic over every node), so what .rgw.root gains from the
// stores differs by class only; editedConsumer counts a moved domain.
function classPlacement(deviceClass) {
  return deviceClass ? `~${deviceClass}` : '';
}

// Replica sizing as replication.go's ComputeReplication does it.
const MAX_REPLICAS = 3;

// Failure domains (replication.go): host once there are two copies on two
// nodes, osd otherwise. Only two exist, so a pool that has had no class
// holds at most 3 rules.
const DOMAIN_HOST = 'host';
const DOMAIN_OSD = 'osd';

// effectiveReplicas is the copies Ceph keeps for a requested count (null:
// automatic, min(3, nodes)) on nodes nodes; an explicit count above the
// nodes is clamped to them. With no node known it is the request, or 3.
export function effectiveReplicas(requested, nodes) {
  if (!(nodes >= 1)) return requested === null || requested === undefined ? MAX_REPLICAS : Math.max(requested, 1);
  if (requested === null || requested === undefined) return Math.min(MAX_REPLICAS, nodes);
  return Math.max(1, Math.min(requested, MAX_REPLICAS, nodes));
}

// failureDomain is the CRUSH failure domain the plugin gives size copies on
// nodes nodes.
export function failureDomain(size, nodes) {
  return size >= 2 && nodes >= 2 ? DOMAIN_HOST : DOMAIN_OSD;
}

// A place is where the plugin puts a consumer's pools (tiers.js
// placementOf, as budget.go's ConsumerBudget has it): {replicas,
// failureDomain, deviceClass, metadataReplicas, metadataClass, placed};
// classes are '' for every OSD. placed is false when a class it names has
// no disks: the plugin makes nothing (NoDisksOfClass) and counts its pools
// with no placement.

// kindCost is what one consumer of kind makes in Ceph placed at place, its
// pools not made yet, the shared pools not included (sharedCost): each
// pool is made with its one placement (consumer_kinds.go budgetOf), so
// takes 1 CRUSH rule on a class and 2 without; its PG copies are counted
// on the classes of their pools.
export function kindCost(kind, place) {
  const { pools, pgsPerReplica, metadataPgsPerReplica } = POOLS_PER_KIND[kind];
  const rules = (deviceClass) => crushRulesPerPool(place.placed ? [classPlacement(deviceClass)] : []);
  const data = pgsPerReplica * Math.max(place.replicas, 1);
  const metadata = metadataPgsPerReplica * Math.max(place.metadataReplicas, 1);
  return {
    pools,
    crushRules: rules(place.deviceClass) + (pools - 1) * rules(place.metadataClass),
    pgCopies: data + metadata,
    byClass: sumByClass(onClass(place.deviceClass, data), onClass(place.metadataClass, metadata)),
  };
}

// plannedConsumer is a consumer for the budget whose pools are not made
// yet, placed at place: a sheet's subject, or an existing consumer without
// status.cephBudget. metadataPlacements are the placements its metadata
// pools have had, which .rgw.root takes from an object store's.
export function plannedConsumer(kind, name, created, place) {
  return {
    kind, name, created, place, use: kindCost(kind, place), measured: false, deleting: false,
    metadataPlacements: place.placed ? [classPlacement(place.metadataClass)] : [],
  };
}

// existingConsumer describes an existing consumer object of kind for the
// budget. Once placed (status.replicas), status says where its pools are:
// its copies, failure domain and classes; before, they go where place
// says, where the plugin places its spec (tiers.js placementOf). It uses
// what its status.cephBudget says (its Rook object exists), its PG copies
// on the classes of their pools; else its kind's cost there, as the plugin
// counts a consumer that has not made its Rook object yet.
export function existingConsumer(kind, object, place) {
  const status = object.status || {};
  const consumer = plannedConsumer(kind, object.metadata.name, object.metadata.creationTimestamp || '', status.replicas ? placedBy(kind, status, place) : place);
  const deleting = Boolean(object.metadata.deletionTimestamp);
  if (!status.cephBudget) return { ...consumer, deleting };
  return { ...consumer, use: measuredUse(kind, status.cephBudget, consumer.place), measured: true, deleting };
}

// placedBy is the place status reports; the copies of metadata pools it
// does not report are place's, but a FileStorage's on its data's class,
// which has the data's (MetadataReplication sizes both on that tier). A
// BlockStorage's status names no metadata class: it has no metadata pools.
function placedBy(kind, status, place) {
  const deviceClass = status.deviceClass || '';
  const metadataClass = POOLS_PER_KIND[kind].pools > 1 ? status.metadataDeviceClass || '' : deviceClass;
  const followsData = !metadataSizedApart(kind) && metadataClass === deviceClass;
  return {
    ...place, replicas: status.replicas, failureDomain: status.failureDomain || '', deviceClass, metadataClass, placed: true,
    metadataReplicas: followsData ? status.replicas : place.metadataReplicas,
  };
}

// measuredUse is a status.cephBudget with its PG copies by class: its data
// pool's (pg_num × its replicas) on its class, the rest, its metadata
// pools', on theirs.
function measuredUse(kind, budget, place) {
  const data = Math.min(budget.pgCopies, POOLS_PER_KIND[kind].pgsPerReplica * Math.max(place.replicas, 1));
  return {
    pools: budget.pools, crushRules: budget.crushRules, pgCopies: budget.pgCopies,
    byClass: sumByClass(onClass(place.deviceClass, data), onClass(place.metadataClass, budget.pgCopies - data)),
  };
}

// olderFirst orders consumers as the plugin does (claims.go): the older
// keeps its place, ties on name; one not created yet (no creation time)
// comes last.
export function olderFirst(a, b) {
  const ta = a.created || '\uffff';
  const tb = b.created || '\uffff';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.name.localeCompare(b.name);
}

// sharedCost is what consumers share: .mgr always (on every OSD), and
// .rgw.root once there is an object store, at the stores' metadata size, on
// the class their metadata pools have when they have one (every store
// with one agrees), with a rule for each placement their metadata pools
// have had (budget.go SharedPools, rgwRootRules: Rook applies each store's
// metadata pool spec to it).
export function sharedCost(consumers) {
  const shared = { pools: 1, crushRules: 1, pgCopies: MGR_PG_COPIES, byClass: onClass('', MGR_PG_COPIES) };
  const stores = consumers.filter((c) => c.kind === 'ObjectStorage');
  if (stores.length === 0) return shared;
  const size = Math.max(...stores.map((c) => c.place.metadataReplicas || c.place.replicas || 1));
  const rootClass = stores.reduce((found, c) => c.place.metadataClass || found, '');
  const pgCopies = RGW_ROOT_PGS_PER_REPLICA * size;
  const rules = crushRulesPerPool(stores.flatMap((c) => c.metadataPlacements));
  return plus(shared, { pools: 1, crushRules: rules, pgCopies, byClass: onClass(rootClass, pgCopies) });
}

// totalUse is what consumers ask of Ceph together, the shared pools included.
export function totalUse(consumers) {
  return consumers.reduce((sum, c) => plus(sum, c.use), sharedCost(consumers));
}

function plus(a, b) {
  return { pools: a.pools + b.pools, crushRules: a.crushRules + b.crushRules, pgCopies: a.pgCopies + b.pgCopies, byClass: sumByClass(a.byClass, b.byClass) };
}

// byClass counts PG copies by the device class of their pools' CRUSH rules,
// '' for pools on every OSD (budget.go's pgsByClass): Ceph spreads a
// class's copies over that class's OSDs only.
function onClass(deviceClass, pgCopies) {
  return pgCopies > 0 ? { [deviceClass]: pgCopies } : {};
}

function sumByClass(a, b, sign = 1) {
  const sum = { ...a };
  for (const [deviceClass, n] of Object.entries(b)) sum[deviceClass] = (sum[deviceClass] || 0) + sign * n;
  return sum;
}

// checkBudget decides whether subject fits beside others on osds OSDs, as
// budget.go's CheckBudget. subject and others are plannedConsumer or
// existingConsumer answers (others: the consumers that keep their place);
// tiers is tiers.js's tiersOf, how many OSDs (disks) each class has. For an
// edit, current is the subject as it is today, so it is counted once:
// before is others with current, after others with subject. The answer:
// what is used before and after, what the subject takes (after − others:
// the shared .rgw.root included when it brings it), the rules left after
// (0 once passed), and placement groups per OSD on the OSDs the subject's
// pools land on that hold the most each (busiestOSDs, named in over: "2
// ssd OSDs"), before and after and at most once the autoscaler has grown
// the pools (null with no OSD: nothing to place on, nothing to check);
// refusal ({budget, reason}: CRUSH rules, or PGs past the OSDs' hard limit
// once grown) or null, and warning (past mon_max_pg_per_osd once grown:
// Ceph's TOO_MANY_PGS) or null.
export function checkBudget({
  others, subject, current = null, osds, tiers = { present: [] },
  maxCrushRules = CEPH_MAX_CRUSH_RULES, maxPGsPerOSD = CEPH_DEFAULT_MAX_PG_PER_OSD,
  hardRatio = CEPH_DEFAULT_HARD_RATIO, targetPGsPerOSD = CEPH_DEFAULT_TARGET_PG_PER_OSD,
}) {
  const live = others.filter((c) => !c.deleting);
  const without = totalUse(live);
  const before = current ? totalUse([...live, current]) : without;
  const after = totalUse([...live, subject]);
  const takes = { crushRules: after.crushRules - without.crushRules, pgCopies: after.pgCopies - without.pgCopies };
  const load = osds >= 1 ? busiestOSDs(after.byClass, sumByClass(after.byClass, without.byClass, -1), osds, tiers) : null;
  const pgs = load
    ? {
      over: osdsNamed(load),
      pgPerOSD: Math.floor(load.pgs / load.osds),
      pgPerOSDGrown: Math.floor((load.pgs + autoscalerGrowth(load.osds, targetPGsPerOSD)) / load.osds),
      pgPerOSDBefore: Math.floor(loadOn(before.byClass, load.deviceClass, load.osds, osds) / load.osds),
    }
    : { over: null, pgPerOSD: null, pgPerOSDGrown: null, pgPerOSDBefore: null };
  const hardPGsPerOSD = Math.floor(maxPGsPerOSD * hardRatio);
  const reaches = `placement groups would reach ${pgs.pgPerOSD} per OSD over ${pgs.over} (it adds ${takes.pgCopies} PG copies to ${without.pgCopies}), up to ${pgs.pgPerOSDGrown} once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (${targetPGsPerOSD})`;
  let refusal = null;
  let warning = null;
  if (after.crushRules > maxCrushRules) {
    refusal = {
      budget: 'CRUSH rules',
      reason: `it needs ${takes.crushRules} CRUSH rules; ${without.crushRules} of Ceph's ${maxCrushRules} are used, ${Math.max(maxCrushRules - without.crushRules, 0)} left.`,
    };
  } else if (load && pgs.pgPerOSDGrown > hardPGsPerOSD) {
    refusal = {
      budget: 'placement groups per OSD',
      reason: `${reaches}; an OSD withholds PGs past ${hardPGsPerOSD} (mon_max_pg_per_osd ${maxPGsPerOSD} × osd_max_pg_per_osd_hard_ratio ${hardRatio}) and they stay inactive.`,
    };
  } else if (load && pgs.pgPerOSDGrown > maxPGsPerOSD) {
    warning = `${reaches}; past ${maxPGsPerOSD} (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS (HEALTH_WARN) but makes the pools.`;
  }
  return {
    before, after, takes, maxCrushRules, maxPGsPerOSD, hardPGsPerOSD,
    rulesLeft: Math.max(maxCrushRules - after.crushRules, 0),
    ...pgs,
    refusal,
    warning,
  };
}

// busiestOSDs is budget.go's busiestOSDs: of the OSDs the newcomer's PG
// copies (added, by class) land on, those that hold the most PG copies
// each (of pgs, by class), {deviceClass, osds, pgs}. Pools without a class
// spread over all osds; a class's pools over that class's OSDs (tiers),
// which also hold their share of the former. With the newcomer on no
// class that has OSDs yet, every OSD.
function busiestOSDs(pgs, added, osds, tiers) {
  const everywhere = (added[''] || 0) > 0;
  let busiest = { deviceClass: '', osds, pgs: everywhere ? loadOn(pgs, '', osds, osds) : -1 };
  for (const tier of tiers.present) {
    const { deviceClass, disks } = tier;
    if (!(pgs[deviceClass] > 0) || (!everywhere && !(added[deviceClass] > 0))) continue;
    const load = { deviceClass, osds: disks, pgs: loadOn(pgs, deviceClass, disks, osds) };
    if (load.pgs * busiest.osds > busiest.pgs * load.osds) busiest = load;
  }
  return busiest.pgs < 0 ? { deviceClass: '', osds, pgs: loadOn(pgs, '', osds, osds) } : busiest;
}

// loadOn is the PG copies (of pgs, by class) on the classOSDs OSDs of
// deviceClass ('' every OSD, of osds): its pools' whole, and the pools on
// every OSD in proportion.
function loadOn(pgs, deviceClass, classOSDs, osds) {
  const everywhere = pgs[''] || 0;
  return deviceClass ? Math.floor((everywhere * classOSDs) / osds) + (pgs[deviceClass] || 0) : everywhere;
}

// osdsNamed names the OSDs a load is on, as budget.go's classLoad.describe.
function osdsNamed({ deviceClass, osds }) {
  const osd = deviceClass ? `${deviceClass} OSD` : 'OSD';
  return plural(osds, osd, `${osd}s`);
}

// autoscalerGrowth is budget.go's AutoscalerGrowth: the most PG copies
// Ceph's autoscaler adds on osds OSDs, 4/3 of targetPGsPerOSD each,
// rounded up.
export function autoscalerGrowth(osds, targetPGsPerOSD) {
  return Math.floor((4 * targetPGsPerOSD * osds + 2) / 3);
}

// metadataSizedApart says whether a kind's metadata pools replicate at the
// automatic size whatever its consumers ask (an object store's): an edit of
// its replicas moves only its data pool.
export function metadataSizedApart(kind) {
  return METADATA_AT_AUTOMATIC.has(kind);
}

// editedConsumer is an existing consumer with Rook pools (measured) as an
// edit places it (place): its PG copies at the new copies on the new
// classes, and a CRUSH rule more for each pool moved to a placement it has
// not had: Rook v1.18 moves a pool to <pool>_<domain>, or
// <pool>_<domain>_<class>, made when missing, and removes no rule (the
// rule named after the pool and one per placement had, budget.go
// CrushRulesPerPool). The console does not read the placements a pool has
// had (annotations on its Rook object), so a move counts a rule, but where
// it can tell: with the two domains and no class a pool holds at most 3,
// so one at 3 has had both.
//
// A data pool moves with its failure domain or class; metadata pools with
// their class, and a FileStorage's with the data's domain too (an object
// store's keep the automatic size and domain whatever it asks).
export function editedConsumer(existing, place) {
  const { kind, use, place: was } = existing;
  const movesDomain = was.failureDomain !== '' && place.failureDomain !== was.failureDomain;
  const metadataPools = use.pools - 1;
  const dataMoves = movesDomain || place.deviceClass !== was.deviceClass;
  const metadataMoves = metadataPools > 0 && ((movesDomain && !metadataSizedApart(kind)) || place.metadataClass !== was.metadataClass);
  const classless = !(was.deviceClass || place.deviceClass || was.metadataClass || place.metadataClass);
  const hadEvery = classless && use.crushRules >= 3 * use.pools;
  const moved = hadEvery ? 0 : (dataMoves ? 1 : 0) + (metadataMoves ? metadataPools : 0);
  const next = classPlacement(place.metadataClass);
  const had = existing.metadataPlacements;
  return {
    ...existing,
    place,
    use: { ...kindCost(kind, place), pools: use.pools, crushRules: use.crushRules + moved },
    movesDomain,
    metadataPlacements: had[had.length - 1] === next ? had : [...had, next],
  };
}

// clusterDevices reads a CephCluster's spec.storage.nodes: OSDs (one per
// listed device, as the plugin counts them) and the nodes listing any.
export function clusterDevices(cluster) {
  const nodes = (cluster && cluster.spec && cluster.spec.storage && cluster.spec.storage.nodes) || [];
  const devices = new Set();
  const withDevices = new Set();
  for (const node of Array.isArray(nodes) ? nodes : []) {
    const name = node && node.name;
    for (const device of (node && Array.isArray(node.devices) ? node.devices : [])) {
      if (name && device && device.name) {
        devices.add(`${name}\u0000${device.name}`);
        withDevices.add(name);
      }
    }
  }
  return { osds: devices.size, nodes: withDevices.size };
}

// fullRatio is the CephCluster's spec.storage.fullRatio, or Ceph's default.
export function fullRatio(cluster) {
  const ratio = cluster && cluster.spec && cluster.spec.storage && cluster.spec.storage.fullRatio;
  return typeof ratio === 'number' && ratio > 0 && ratio <= 1 ? ratio : CEPH_DEFAULT_FULL_RATIO;
}

// rawCapacity is the shared OSD set's raw bytes: what Ceph reports
// (status.ceph.capacity.bytesTotal) once it does, else the summed
// status.rawCapacity of the DiskPools (those feeding the cluster when one
// is known). source is 'Ceph' or 'Disks'; bytes 0 when nothing says.
export function rawCapacity(cluster, pools, ref = null) {
  const reported = cluster && cluster.status && cluster.status.ceph && cluster.status.ceph.capacity && cluster.status.ceph.capacity.bytesTotal;
  if (reported > 0) return { bytes: reported, source: 'Ceph' };
  let bytes = 0;
  for (const pool of pools) {
    const s = pool.status || {};
    if (ref && !(s.cephCluster && s.cephCluster.namespace === ref.namespace && s.cephCluster.name === ref.name)) continue;
    const size = quantityToBytes(s.rawCapacity);
    if (size > 0) bytes += size;
  }
  return { bytes, source: 'Disks' };
}

// usableBytes is what replicas copies leave of raw bytes before Ceph stops
// writes: floor(raw × ratio / replicas), as capacity.go computes it.
export function usableBytes(raw, ratio, replicas) {
  return Math.floor((raw * ratio) / Math.max(replicas, 1));
}

// replicaChoices is what 1, 2 and 3 requested replicas give on nodes
// nodes: [{requested, copies, usableBytes}] (copies < requested: clamped).
export function replicaChoices(raw, ratio, nodes) {
  return [1, 2, 3].map((requested) => {
    const copies = effectiveReplicas(requested, nodes);
    return { requested, copies, usableBytes: usableBytes(raw, ratio, copies) };
  });
}

// budgetSentences words a checkBudget answer for subject (its kind and the
// use of its own pools): the CRUSH rules, the placement groups, the refusal
// (null when it fits) and Ceph's warning (null when none). counted says the
// subject's pools exist (an edit of a consumer with status.cephBudget): it
// is among what is used, and the plugin does not refuse it.
export function budgetSentences(subject, answer, { counted = false } = {}) {
  const { before, after, takes, maxCrushRules, maxPGsPerOSD, hardPGsPerOSD, over, pgPerOSD, pgPerOSDGrown, pgPerOSDBefore, refusal, warning } = answer;
  const shared = takes.crushRules - subject.use.crushRules;
  const split = shared > 0
    ? ` (${subject.use.crushRules} for its pools, ${shared} for .rgw.root, which every ObjectStorage shares)`
    : '';
  const rules = counted
    ? `This ${subject.kind} uses ${takes.crushRules} of Ceph's ${maxCrushRules} CRUSH rules${split}; ${after.crushRules} used with it, ${answer.rulesLeft} left.`
    : `This ${subject.kind} uses ${takes.crushRules} of Ceph's ${maxCrushRules} CRUSH rules${split}; ${before.crushRules} used, ${answer.rulesLeft} left after it.`;
  let pgs = 'Placement groups cannot be checked until disks are in the cluster: the CephCluster lists no device yet.';
  if (pgPerOSD !== null) {
    const today = counted && pgPerOSDBefore !== pgPerOSD ? ` (${pgPerOSDBefore} today)` : '';
    pgs = `Placement groups: ${pgPerOSD} copies per OSD over ${over} ${counted ? 'with it' : 'after it'}${today}, up to ${pgPerOSDGrown} once Ceph's autoscaler grows the pools; Ceph warns past ${maxPGsPerOSD} (mon_max_pg_per_osd) and an OSD takes at most ${hardPGsPerOSD}.`;
  }
  let refused = null;
  if (refusal) {
    const what = counted
      ? 'The plugin keeps a consumer whose pools exist: Rook would make the change and Ceph would refuse it.'
      : 'The plugin will report it Degraded (OverBudget) and create nothing.';
    refused = `Ceph would refuse it: ${refusal.reason} ${what}`;
  }
  const warned = warning
    ? `Ceph will warn: ${warning} ${counted ? 'The plugin makes the change.' : 'The plugin makes it and says so in its CephWarning condition.'}`
    : null;
  return { rules, pgs, refused, warned };
}

// usableSentence is the usable capacity of copies copies.
export function usableSentence(raw, ratio, copies) {
  return `Usable: ${formatBytes(usableBytes(raw, ratio, copies))} of ${formatBytes(raw)} raw (${plural(copies, 'copy', 'copies')}, Ceph stops writes at ${Math.round(ratio * 100)}% full)`;
}

// capacitySummary words a consumer's status.capacity at its replicas.
export function capacitySummary(capacity, replicas) {
  if (!capacity || !capacity.usable) return '';
  const from = capacity.source === 'Ceph' ? "from Ceph's report" : 'from Disk sizes, before Ceph reports';
  const copies = replicas ? `${plural(replicas, 'copy', 'copies')}, ` : '';
  return `${capacity.usable} ${from} (${formatBytes(capacity.rawBytes)} raw, ${copies}Ceph stops writes at ${capacity.fullRatioPercent}% full)`;
}

// budgetSummary words a consumer's status.cephBudget.
export function budgetSummary(budget) {
  if (!budget) return '';
  return `${plural(budget.pools, 'pool', 'pools')}, ${plural(budget.crushRules, 'CRUSH rule', 'CRUSH rules')}, ${plural(budget.pgCopies, 'PG copy', 'PG copies')}`;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}
