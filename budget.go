package main

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// Ceph's budgets, which the API server knows nothing about (issue 19).
// Every consumer becomes Ceph pools; each pool takes a CRUSH rule and
// placement groups, and Ceph refuses what would exceed its limits.
const (
	// CephMaxCrushRules is how many CRUSH rules a Ceph cluster holds: rule
	// IDs are one byte; Ceph refuses the 257th ("failed to add rule 256
	// because (28) No space left on device", Rook issue 10805).
	CephMaxCrushRules = 256
	// CephDefaultMaxPGPerOSD is mon_max_pg_per_osd's default. Past it, on
	// average over the OSDs, Ceph's manager reports TOO_MANY_PGS
	// (HEALTH_WARN) and creates the pool all the same: the monitors' own
	// check (OSDMonitor::check_pg_num) counts only the PGs on the new pool's
	// CRUSH rule, and Rook gives every pool a rule of its own, so they never
	// refuse one of ours for the total (seen on Ceph 18.2.7: pools past 750
	// PG copies on 2 OSDs were created; docs/rook-contract.md).
	CephDefaultMaxPGPerOSD = 250
	// CephDefaultHardRatio is osd_max_pg_per_osd_hard_ratio's default: an
	// OSD that would hold more than mon_max_pg_per_osd times it withholds
	// the PGs past it, which stay inactive ("pending on creation", no I/O to
	// their objects; seen on Ceph 18.2.7 at 784 on an OSD). That is where
	// Ceph really refuses.
	CephDefaultHardRatio = 3
	// CephDefaultTargetPGPerOSD is mon_target_pg_per_osd's default: what
	// Ceph's PG autoscaler (on for every pool Rook makes) grows the pools
	// under a CRUSH root toward, PG copies per OSD, in proportion to the
	// data each holds.
	CephDefaultTargetPGPerOSD = 100
	// cephDefaultPoolPGs is osd_pool_default_pg_num's default, which Rook
	// v1.18 leaves Ceph to choose (pkg/daemon/ceph/client/command.go
	// DefaultPGCount = "0"; CreatePool in pool.go).
	cephDefaultPoolPGs = 32
	// rgwMetadataPoolPGs is what Rook gives every object store metadata pool
	// (pkg/operator/ceph/object/objectstore.go rgwRadosPoolPgNum).
	rgwMetadataPoolPGs = 8
	// rgwMetadataPools is how many metadata pools an object store has of
	// its own (objectstore.go metadataPools: control, meta, log,
	// buckets.index, buckets.non-ec, otp); .rgw.root spans every object
	// store (objectstore.go poolName) and is counted once.
	rgwMetadataPools = 6
)

// CephPools is what a set of consumers asks of Ceph.
type CephPools struct {
	// Pools and CrushRules: Rook v1.18 gives a pool a CRUSH rule named
	// after it (pkg/daemon/ceph/client/pool.go createReplicatedPoolForApp)
	// and one <pool>_<domain> for each failure domain it has had
	// (updatePoolCrushRule; CrushRulesPerPool).
	Pools, CrushRules int
	// PGReplicas is the sum over pools of pg_num × size at creation (their
	// floors: the autoscaler grows them, AutoscalerGrowth), the PG copies
	// Ceph spreads over the OSDs.
	PGReplicas int
	// byClass is PGReplicas by the device class of the pools' CRUSH rules:
	// Ceph spreads a class's copies over that class's OSDs only.
	byClass pgsByClass
}

// pgsByClass counts PG copies by device class: index 0 for pools on every
// OSD, then deviceClasses' order.
type pgsByClass [4]int

func (p pgsByClass) of(class cephv1alpha1.DiskType) int { return p[classIndex(class)+1] }

func (p pgsByClass) minus(q pgsByClass) pgsByClass {
	for i := range p {
		p[i] -= q[i]
	}
	return p
}

// pgsOn is n PG copies on class.
func pgsOn(class cephv1alpha1.DiskType, n int) pgsByClass {
	var p pgsByClass
	p[classIndex(class)+1] = n
	return p
}

func (p CephPools) plus(q CephPools) CephPools {
	sum := CephPools{Pools: p.Pools + q.Pools, CrushRules: p.CrushRules + q.CrushRules, PGReplicas: p.PGReplicas + q.PGReplicas}
	for i := range sum.byClass {
		sum.byClass[i] = p.byClass[i] + q.byClass[i]
	}
	return sum
}

// pools is n pools of pgs PGs at size copies on class, on rules CRUSH rules.
func pools(n, rules, pgs, size int, class cephv1alpha1.DiskType) CephPools {
	return CephPools{Pools: n, CrushRules: rules, PGReplicas: n * pgs * size, byClass: pgsOn(class, n*pgs*size)}
}

// Use is p as a consumer's status reports it.
func (p CephPools) Use() *cephv1alpha1.CephBudgetUse {
	return &cephv1alpha1.CephBudgetUse{Pools: int32(p.Pools), CrushRules: int32(p.CrushRules), PGCopies: int32(p.PGReplicas)}
}

// ConsumerBudget describes one consumer for the budget: its kind, name and
// replica count, and the placements its pools have had.
type ConsumerBudget struct {
	Kind, Name string
	Size       int32
	// DeviceClass and MetadataClass are the device classes of its data and
	// metadata pools ("": every OSD).
	DeviceClass, MetadataClass cephv1alpha1.DiskType
	// FailureDomains is every placement its pools have had (PoolPlacement:
	// a failure domain, with the device class when there is one), the one
	// they were created with first (FailureDomainsAnnotation); empty for a
	// consumer whose pools do not exist yet.
	FailureDomains []string
	// MetadataSize and MetadataFailureDomains are an ObjectStorage's
	// metadata pools' (and .rgw.root's): they replicate as automatic sizing
	// says whatever Size is (RenderObjectStore), with their own history
	// (MetadataFailureDomainsAnnotation). Zero and empty mean as Size and
	// FailureDomains.
	MetadataSize           int32
	MetadataFailureDomains []string
}

// metadata is the replica count and failure domain history of the
// consumer's metadata pools (an ObjectStorage's; see MetadataSize).
func (c ConsumerBudget) metadata() (size int, domains []string) {
	size, domains = int(max(c.Size, 1)), c.FailureDomains
	if c.MetadataSize > 0 {
		size = int(c.MetadataSize)
	}
	if len(c.MetadataFailureDomains) > 0 {
		domains = c.MetadataFailureDomains
	}
	return size, domains
}

// PoolPlacement is a pool's entry in a placement history: its failure
// domain, and "~" and its device class when it has one, as Ceph names a
// class's shadow tree (default~ssd).
func PoolPlacement(domain string, class cephv1alpha1.DiskType) string {
	if class == "" {
		return domain
	}
	return domain + "~" + string(class)
}

// CrushRulesPerPool is how many CRUSH rules a pool holds after the
// placements it has had (PoolPlacement; nil: a pool not made yet, counted
// as one without a class).
// Rook v1.18 creates the pool on a rule named after it
// (createReplicatedPoolForApp), then, with enableCrushUpdates, moves it at
// once to <pool>_<domain>: extractPoolDetails reads a class-less rule's
// device class as its root, "default", which differs from the pool's ""
// (seen on real Ceph: docs/rook-contract.md, finding 3). Each later change
// of domain moves it to <pool>_<domain>, made when it does not exist yet,
// and no rule is removed while the pool lives (updatePoolCrushRule). A
// device class names the rule <pool>_<domain>_<class>; but a pool created
// with a class stays on the rule named after it, whose take step
// (default~<class>) extractPoolDetails reads as that class. So: the rule
// named after the pool, and one per distinct placement but a first one
// with a class.
func CrushRulesPerPool(placements []string) int {
	if len(placements) == 0 {
		return 2
	}
	distinct := map[string]bool{}
	for i, p := range placements {
		if i == 0 && strings.Contains(p, "~") {
			continue // on the rule named after the pool
		}
		distinct[p] = true
	}
	return 1 + len(distinct)
}

// NextFailureDomains is the history recorded after the plugin writes want
// to a pool whose history is recorded (comma-separated; empty for a pool
// written before the record existed, whose history starts with current).
func NextFailureDomains(recorded, current, want string) string {
	var history []string
	if recorded != "" {
		history = strings.Split(recorded, ",")
	} else if current != "" {
		history = []string{current}
	}
	if want != "" && (len(history) == 0 || history[len(history)-1] != want) {
		history = append(history, want)
	}
	return strings.Join(history, ",")
}

// PoolsOf is what one consumer's Rook object makes in Ceph (the shared
// .rgw.root not included: see SharedPools).
func PoolsOf(c ConsumerBudget) CephPools {
	size := int(max(c.Size, 1))
	data := pools(1, CrushRulesPerPool(c.FailureDomains), cephDefaultPoolPGs, size, c.DeviceClass)
	metaSize, metaDomains := c.metadata()
	switch c.Kind {
	case "BlockStorage": // one CephBlockPool
		return data
	case "FileStorage": // a CephFilesystem's metadata and data pools
		return data.plus(pools(1, CrushRulesPerPool(metaDomains), cephDefaultPoolPGs, metaSize, c.MetadataClass))
	case "ObjectStorage": // six metadata pools, sized apart, and the data pool
		return data.plus(pools(rgwMetadataPools, rgwMetadataPools*CrushRulesPerPool(metaDomains), rgwMetadataPoolPGs, metaSize, c.MetadataClass))
	}
	return CephPools{}
}

// SharedPools is what the consumers share: Ceph's default rule
// (replicated_rule, always there) and the .mgr pool on it (1 PG, size 3)
// once Ceph's manager makes it (counted before it does: e2e's cluster had
// none), and .rgw.root once any object store exists (Rook's metadata PG
// count at the stores' metadata size, made as their metadata pools are;
// its rules: rgwRootRules).
func SharedPools(consumers []ConsumerBudget) CephPools {
	shared := pools(1, 1, 1, 3, "") // .mgr: 1 PG, size 3, on replicated_rule
	rootSize := 0
	var rootClass cephv1alpha1.DiskType
	for _, c := range consumers {
		if c.Kind == "ObjectStorage" {
			size, _ := c.metadata()
			rootSize = max(rootSize, size) // every store's is the automatic size
			if c.MetadataClass != "" {
				rootClass = c.MetadataClass // every store with one agrees
			}
		}
	}
	if rootSize == 0 {
		return shared
	}
	// .rgw.root follows the store Rook reconciled last; counted on the
	// class, the smaller set of OSDs it may be on.
	return shared.plus(pools(1, rgwRootRules(consumers), rgwMetadataPoolPGs, rootSize, rootClass))
}

// rgwRootRules is how many CRUSH rules .rgw.root holds: Rook applies each
// object store's metadata pool spec to it at every reconcile of the store
// (objectstore.go CreateObjectStorePools: createSimilarPools over the
// metadata pools and rootPool), so it has had every failure domain any
// store's metadata pools have had, and keeps a rule for each like any
// pool (CrushRulesPerPool). Seen on real Ceph: three nodes joining moved
// .rgw.root from .rgw.root_osd to .rgw.root_host with the store's pools.
func rgwRootRules(consumers []ConsumerBudget) int {
	var domains []string
	for _, c := range consumers {
		if c.Kind == "ObjectStorage" {
			_, metaDomains := c.metadata()
			domains = append(domains, metaDomains...)
		}
	}
	return CrushRulesPerPool(domains)
}

// TotalPools is what consumers ask of Ceph together, the shared pools
// included.
func TotalPools(consumers []ConsumerBudget) CephPools {
	total := SharedPools(consumers)
	for _, c := range consumers {
		total = total.plus(PoolsOf(c))
	}
	return total
}

// AutoscalerGrowth is the most PG copies Ceph's PG autoscaler adds, on
// osds OSDs, to pools counted at their pg_num at creation (their floors):
// it shares targetPerOSD × osds PG copies among the pools under the CRUSH
// root by the data each holds, takes a pool's pg_num to the nearest power
// of two of its share over its size (at most 4/3 of the share), and never
// below its floor (mgr/pg_autoscaler _calc_final_pg_target). So the pools
// end at most their floors plus 4/3 of the target, as when one pool holds
// all the data: a bound, not any one cluster's figure. Rounded up.
func AutoscalerGrowth(osds, targetPerOSD int) int {
	return (4*targetPerOSD*osds + 2) / 3
}

// BudgetLimits are the limits checked; an operator who raised
// mon_max_pg_per_osd says so in configuration.
type BudgetLimits struct {
	CrushRules int
	// MaxPGsPerOSD is mon_max_pg_per_osd: past it on average Ceph warns.
	MaxPGsPerOSD int
	// HardRatio is osd_max_pg_per_osd_hard_ratio: an OSD withholds the
	// PGs past MaxPGsPerOSD times it.
	HardRatio float64
	// TargetPGsPerOSD is mon_target_pg_per_osd, the autoscaler's aim.
	TargetPGsPerOSD int
}

// CephBudgetLimits are Ceph's defaults with mon_max_pg_per_osd as the
// operator set it.
func CephBudgetLimits(maxPGsPerOSD int) BudgetLimits {
	return BudgetLimits{CrushRules: CephMaxCrushRules, MaxPGsPerOSD: maxPGsPerOSD, HardRatio: CephDefaultHardRatio, TargetPGsPerOSD: CephDefaultTargetPGPerOSD}
}

// hardPGsPerOSD is where an OSD withholds PGs: Ceph's OSD::maybe_wait_for_max_pg
// compares against mon_max_pg_per_osd × osd_max_pg_per_osd_hard_ratio.
func (l BudgetLimits) hardPGsPerOSD() int {
	return int(math.Floor(float64(l.MaxPGsPerOSD) * l.HardRatio))
}

// BudgetVerdict is what Ceph makes of a newcomer beside the consumers
// before it.
type BudgetVerdict struct {
	// Budget names what a newcomer Ceph would not take overflows: "CRUSH
	// rules" or "placement groups per OSD"; empty when Ceph takes it.
	Budget string
	// Message says why Ceph would not take it.
	Message string
	// Warning, for a newcomer Ceph takes, says what Ceph will warn of
	// (TOO_MANY_PGS); empty when nothing.
	Warning string
}

// Refused says the newcomer does not fit.
func (v BudgetVerdict) Refused() bool { return v.Budget != "" }

// CheckBudget decides what Ceph makes of newcomer beside existing (the
// consumers that keep their place: older ones) on osds OSDs. Existing
// consumers are never affected: a newcomer that does not fit is refused,
// as a younger pool's contested disk is. It is refused where Ceph refuses:
// past 256 CRUSH rules, and where its pools, once the autoscaler has grown
// them, would put PGs past the OSDs' hard limit (inactive PGs, no I/O). A
// newcomer that only brings Ceph past mon_max_pg_per_osd is taken with a
// warning, as Ceph takes its pools.
//
// osds is every OSD; tiers says how many are of each class, where the
// pools on a class place their PGs: each OSD of a class holds its share of
// the class's pools and of the pools on every OSD, and the most loaded
// class is checked.
func CheckBudget(existing []ConsumerBudget, newcomer ConsumerBudget, osds int, tiers Tiers, limits BudgetLimits) BudgetVerdict {
	used := TotalPools(existing)
	all := TotalPools(append(slices.Clone(existing), newcomer))
	if all.CrushRules > limits.CrushRules {
		return BudgetVerdict{Budget: "CRUSH rules", Message: fmt.Sprintf(
			"%s %s needs %d CRUSH rules; %d of Ceph's %d are used (%s), %d left: delete a consumer to make room",
			newcomer.Kind, newcomer.Name, all.CrushRules-used.CrushRules, used.CrushRules, limits.CrushRules, usedBy(existing), max(limits.CrushRules-used.CrushRules, 0))}
	}
	if osds < 1 {
		return BudgetVerdict{} // nothing to place on yet: the consumer waits for disks
	}
	load := busiestOSDs(all.byClass, all.byClass.minus(used.byClass), osds, tiers)
	now := load.pgs / load.osds
	steady := (load.pgs + AutoscalerGrowth(load.osds, limits.TargetPGsPerOSD)) / load.osds
	brings := fmt.Sprintf("%s %s would bring placement groups to %d per OSD over %s (it adds %d PG copies to %d), up to %d once Ceph's autoscaler grows the pools toward mon_target_pg_per_osd (%d)",
		newcomer.Kind, newcomer.Name, now, load.describe(), all.PGReplicas-used.PGReplicas, used.PGReplicas, steady, limits.TargetPGsPerOSD)
	if hard := limits.hardPGsPerOSD(); steady > hard {
		return BudgetVerdict{Budget: "placement groups per OSD", Message: fmt.Sprintf(
			"%s; an OSD withholds PGs past %d (mon_max_pg_per_osd %d × osd_max_pg_per_osd_hard_ratio %g) and they stay inactive: add disks, or delete a consumer",
			brings, hard, limits.MaxPGsPerOSD, limits.HardRatio)}
	}
	if steady > limits.MaxPGsPerOSD {
		return BudgetVerdict{Warning: fmt.Sprintf(
			"%s; past %d (mon_max_pg_per_osd) Ceph reports TOO_MANY_PGS (HEALTH_WARN) but makes the pools: add disks to clear it",
			strings.Replace(brings, " would bring ", " brings ", 1), limits.MaxPGsPerOSD)}
	}
	return BudgetVerdict{}
}

// classLoad is the PG copies a set of OSDs would hold as if alone: the
// pools on their class whole, and the pools on every OSD in proportion.
type classLoad struct {
	class cephv1alpha1.DiskType
	osds  int
	pgs   int
}

func (l classLoad) describe() string {
	if l.class == "" {
		return message.Plural(l.osds, "OSD")
	}
	return message.Plural(l.osds, string(l.class)+" OSD")
}

// busiestOSDs is, of the OSDs the newcomer's PG copies (added) land on,
// those that hold the most PG copies each (of pgs): the pools on every OSD
// spread over all osds, each class's pools over that class's OSDs (tiers).
// With no pools on a class, every OSD alike.
func busiestOSDs(pgs, added pgsByClass, osds int, tiers Tiers) classLoad {
	busiest := classLoad{osds: osds, pgs: pgs.of("")}
	everywhere := added.of("") > 0
	if !everywhere {
		busiest.pgs = -1 // not the newcomer's: any class of its beats it
	}
	for _, tier := range tiers.Present() {
		onClass := pgs.of(tier.Class)
		if onClass == 0 || !everywhere && added.of(tier.Class) == 0 {
			continue
		}
		// Scaled to the class's OSDs: the shared pools' share plus its own.
		load := classLoad{class: tier.Class, osds: tier.OSDs, pgs: pgs.of("")*tier.OSDs/osds + onClass}
		if load.pgs*busiest.osds > busiest.pgs*load.osds {
			busiest = load
		}
	}
	if busiest.pgs < 0 { // its class has no OSDs: nothing of its is placed yet
		return classLoad{osds: osds, pgs: pgs.of("")}
	}
	return busiest
}

// usedBy names the consumer kinds the rules go to, largest first.
func usedBy(consumers []ConsumerBudget) string {
	rules := map[string]int{}
	for _, c := range consumers {
		rules[c.Kind] += PoolsOf(c).CrushRules
	}
	kinds := make([]string, 0, len(rules))
	for k := range rules {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if rules[kinds[i]] != rules[kinds[j]] {
			return rules[kinds[i]] > rules[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := []string{"1 by Ceph's .mgr pool"}
	if rules["ObjectStorage"] > 0 {
		parts = append(parts, fmt.Sprintf("%d by .rgw.root", rgwRootRules(consumers)))
	}
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d by %ss", rules[k], k))
	}
	return strings.Join(parts, ", ")
}
