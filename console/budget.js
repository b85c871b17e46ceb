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
// its pools, each with CRUSH_RULES_PER_NEW_POOL rules, and pg_num ×
// replicas placement group copies (32 per pool, Ceph's default): its data
// pool's pgsPerReplica × its replicas, its metadata pools'
// metadataPgsPerReplica × theirs. A FileStorage's metadata pool keeps the
// data's copies (MetadataReplication: a tier changes its class, not its
// size); an object store's 6 metadata pools (8 PGs each, Rook's) replicate
// at the automatic size whatever the store asks (objectstore.go
// RenderObjectStore; METADATA_AT_AUTOMATIC). A Go test reads these lines
// to check them against budget.go: keep one kind per line.
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
// (the stores' metadata pools'), its rules as a new pool's, once any
// ObjectStorage exists.
export const RGW_ROOT_PGS_PER_REPLICA = 8;

// CRUSH_RULES_PER_NEW_POOL is how many CRUSH rules a pool not made yet will
// hold (budget.go's CrushRulesPerPool(nil)): Rook creates it on a rule
// named after it and moves it at once to <pool>_<domain>. A pool that
// exists is counted from its consumer's status.cephBudget instead.
export const CRUSH_RULES_PER_NEW_POOL = 2;

// Replica sizing as replication.go's ComputeReplication does it.
const MAX_REPLICAS = 3;

// Failure domains (replication.go): host once there are two copies on two
// nodes, osd otherwise. Only two exist, so a pool holds at most 3 rules.
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

// kindCost is what one consumer of kind with replicas copies makes in Ceph
// on nodes nodes (its metadata pools, if sized apart, at the automatic
// size there), the shared pools not included (sharedCost).
export function kindCost(kind, replicas, nodes) {
  const { pools, pgsPerReplica, metadataPgsPerReplica } = POOLS_PER_KIND[kind];
  const metadataSize = METADATA_AT_AUTOMATIC.has(kind) ? effectiveReplicas(null, nodes) : Math.max(replicas, 1);
  const pgCopies = pgsPerReplica * Math.max(replicas, 1) + metadataPgsPerReplica * metadataSize;
  return { pools, crushRules: pools * CRUSH_RULES_PER_NEW_POOL, pgCopies };
}

// existingConsumer describes an existing consumer object of kind for the
// budget: what its status.cephBudget says it uses (its Rook object exists),
// else its kind's cost at its status.replicas, or at what the plugin would
// size its spec to on nodes nodes (it counts a consumer that has not made
// its Rook object yet at that size too), or at 3 when nothing says.
export function existingConsumer(kind, object, nodes) {
  const spec = object.spec || {};
  const status = object.status || {};
  const replicas = status.replicas || effectiveReplicas(spec.replicas === undefined ? null : spec.replicas, nodes);
  const use = status.cephBudget
    ? { pools: status.cephBudget.pools, crushRules: status.cephBudget.crushRules, pgCopies: status.cephBudget.pgCopies }
    : kindCost(kind, replicas, nodes);
  return {
    kind, name: object.metadata.name, created: object.metadata.creationTimestamp || '',
    replicas, metadataReplicas: effectiveReplicas(null, nodes), use, measured: Boolean(status.cephBudget), failureDomain: status.failureDomain || '',
    deleting: Boolean(object.metadata.deletionTimestamp),
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

// sharedCost is what consumers share: .mgr always, and .rgw.root at the
// object stores' metadata size once there is one (budget.go SharedPools).
export function sharedCost(consumers) {
  const shared = { pools: 1, crushRules: 1, pgCopies: MGR_PG_COPIES };
  const stores = consumers.filter((c) => c.kind === 'ObjectStorage');
  if (stores.length === 0) return shared;
  const size = Math.max(...stores.map((c) => c.metadataReplicas || c.replicas || 1));
  return plus(shared, { pools: 1, crushRules: CRUSH_RULES_PER_NEW_POOL, pgCopies: RGW_ROOT_PGS_PER_REPLICA * size });
}

// totalUse is what consumers ask of Ceph together, the shared pools included.
export function totalUse(consumers) {
  return consumers.reduce((sum, c) => plus(sum, c.use), sharedCost(consumers));
}

function plus(a, b) {
  return { pools: a.pools + b.pools, crushRules: a.crushRules + b.crushRules, pgCopies: a.pgCopies + b.pgCopies };
}

// checkBudget decides whether subject fits beside others on osds OSDs.
// subject is {kind, name, replicas, use} (and created, for an existing
// one); others are existingConsumer answers, the consumers that keep their
// place. For an edit, current is the subject as it is today, so it is
// counted once: before is others with current, after others with subject.
// The answer: what is used before and after, what the subject takes
// (after − others: the shared .rgw.root included when it brings it), the
// rules left after (0 once passed), PG copies per OSD before and after and
// at most once the autoscaler has grown the pools (null with no OSD:
// nothing to place on, nothing to check), refusal ({budget, reason}: CRUSH
// rules, or PGs past the OSDs' hard limit once grown, as budget.go's
// CheckBudget) or null, and warning (past mon_max_pg_per_osd once grown:
// Ceph's TOO_MANY_PGS) or null.
export function checkBudget({
  others, subject, current = null, osds,
  maxCrushRules = CEPH_MAX_CRUSH_RULES, maxPGsPerOSD = CEPH_DEFAULT_MAX_PG_PER_OSD,
  hardRatio = CEPH_DEFAULT_HARD_RATIO, targetPGsPerOSD = CEPH_DEFAULT_TARGET_PG_PER_OSD,
}) {
  const live = others.filter((c) => !c.deleting);
  const without = totalUse(live);
  const before = current ? totalUse([...live, current]) : without;
  const after = totalUse([...live, subject]);
  const takes = { crushRules: after.crushRules - without.crushRules, pgCopies: after.pgCopies - without.pgCopies };
  const pgPerOSD = osds >= 1 ? Math.floor(after.pgCopies / osds) : null;
  const pgPerOSDGrown = osds >= 1 ? Math.floor((after.pgCopies + autoscalerGrowth(osds, targetPGsPerOSD)) / osds) : null;
  const hardPGsPerOSD = Math.floor(maxPGsPerOSD * hardRatio);
  const reaches = `placement groups would reach ${pgPerOSD} per OSD over ${osds} ${osds === 1 ? 'OSD' : 'OSDs'} (it adds ${takes.pgCopies} PG copies to ${without.pgCopies}), up to ${pgPerOSDGrown} once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (${targetPGsPerOSD})`;
  let refusal = null;
  let warning = null;
  if (after.crushRules > maxCrushRules) {
    refusal = {
      budget: 'CRUSH rules',
      reason: `it needs ${takes.crushRules} CRUSH rules; ${without.crushRules} of Ceph's ${maxCrushRules} are used, ${Math.max(maxCrushRules - without.crushRules, 0)} left.`,
    };
  } else if (pgPerOSDGrown !== null && pgPerOSDGrown > hardPGsPerOSD) {
    refusal = {
      budget: 'placement groups per OSD',
      reason: `${reaches}; an OSD withholds PGs past ${hardPGsPerOSD} (mon_max_pg_per_osd ${maxPGsPerOSD} × osd_max_pg_per_osd_hard_ratio ${hardRatio}) and they stay inactive.`,
    };
  } else if (pgPerOSDGrown !== null && pgPerOSDGrown > maxPGsPerOSD) {
    warning = `${reaches}; past ${maxPGsPerOSD} (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS (HEALTH_WARN) but makes the pools.`;
  }
  return {
    before, after, takes, osds, maxCrushRules, maxPGsPerOSD, hardPGsPerOSD,
    rulesLeft: Math.max(maxCrushRules - after.crushRules, 0),
    pgPerOSD,
    pgPerOSDGrown,
    pgPerOSDBefore: osds >= 1 ? Math.floor(before.pgCopies / osds) : null,
    refusal,
    warning,
  };
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

// editedUse is what an existing consumer with Rook pools uses at a new
// size: the same pools and rules, PG copies at the new size, and one more
// rule per pool when the failure domain moves to one it has not had (Rook
// v1.18 creates <pool>_<domain> and removes no rule: the rule named
// after the pool and one per domain had, budget.go CrushRulesPerPool; with
// two domains a pool holds at most 3, so fewer means the new one is new).
//
// An object store's edit moves only its data pool: its metadata pools keep
// the automatic size and domain whatever it asks.
//
// domainNodes are the nodes the data pool is placed on, when it is on a
// tier (the hosts with disks of its class); nodes, every node.
export function editedUse(existing, size, nodes, domainNodes = nodes) {
  const cost = kindCost(existing.kind, size, nodes);
  let { crushRules } = existing.use;
  const moved = existing.failureDomain !== '' && failureDomain(size, domainNodes) !== existing.failureDomain;
  const movingPools = metadataSizedApart(existing.kind) ? 1 : existing.use.pools;
  if (moved && crushRules < 3 * existing.use.pools) crushRules += movingPools;
  return { pools: existing.use.pools, crushRules, pgCopies: cost.pgCopies, movesDomain: moved };
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
  const { before, after, takes, maxCrushRules, maxPGsPerOSD, hardPGsPerOSD, osds, pgPerOSD, pgPerOSDGrown, pgPerOSDBefore, refusal, warning } = answer;
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
    pgs = `Placement groups: ${pgPerOSD} copies per OSD over ${osds} ${osds === 1 ? 'OSD' : 'OSDs'} ${counted ? 'with it' : 'after it'}${today}, up to ${pgPerOSDGrown} once Ceph's autoscaler grows the pools; Ceph warns past ${maxPGsPerOSD} (mon_max_pg_per_osd) and an OSD takes at most ${hardPGsPerOSD}.`;
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
