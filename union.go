package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
)

// ContestedDisk is a disk a pool lists but an older pool owns.
type ContestedDisk struct {
	Disk, Owner string
}

// UnusableDisk is a disk a pool owns that cannot join the CephCluster.
type UnusableDisk struct {
	Disk, Reason string
}

// PoolResolution is what one DiskPool's spec.disks resolved to.
type PoolResolution struct {
	Pool string
	// Generation is the pool's generation this resolution read.
	Generation int64
	// Selected are the Disks that feed the CephCluster, in spec order.
	Selected []*cephv1alpha1.Disk
	// Missing are listed names with no Disk object.
	Missing []string
	// Contested are listed disks an older pool owns.
	Contested []ContestedDisk
	// Unusable are owned disks that are neither available nor already in
	// the CephCluster.
	Unusable []UnusableDisk
	// Retired are owned disks a DiskRetirement took out of Ceph
	// (RetiredAnnotation): they stay out of the CephCluster until the
	// annotation is removed, although the pool still lists them.
	Retired []string
	// Undescribed are the Unusable disks discovery has not described yet:
	// a Disk is created, then its status written, and in between its name
	// says nothing about its device.
	Undescribed []string
	// RawCapacity is the summed size of Selected.
	RawCapacity resource.Quantity
}

// ResolvePool resolves a pool's spec.disks against the published Disks
// (by name), the claim owners (ClaimOwners) and the devices the CephCluster
// already lists (ClusterDevices).
//
// A disk is selected when the pool owns it and it is Available, or when its
// device is already in the CephCluster: discovery is a stale snapshot and an
// OSD is exactly what makes a selected disk stop looking empty, and a device
// that vanished keeps its place until the operator takes it out of the pool
// (removing a device never removes its OSD, so that must be deliberate).
func ResolvePool(pool *cephv1alpha1.DiskPool, disks map[string]*cephv1alpha1.Disk, owners map[string]string, inCluster map[DeviceID]bool) PoolResolution {
	res := PoolResolution{Pool: pool.Name, Generation: pool.Generation}
	for _, name := range pool.Spec.Disks {
		disk, ok := disks[name]
		switch {
		case !ok:
			res.Missing = append(res.Missing, name)
		case owners[name] != pool.Name:
			res.Contested = append(res.Contested, ContestedDisk{Disk: name, Owner: owners[name]})
		case disk.Annotations[cephv1alpha1.RetiredAnnotation] != "":
			res.Retired = append(res.Retired, name)
		case disk.Status.State == cephv1alpha1.DiskAvailable || inCluster[DeviceIDOf(disk)]:
			res.Selected = append(res.Selected, disk)
			if disk.Status.Size != nil {
				res.RawCapacity.Add(*disk.Status.Size)
			}
		default:
			res.Unusable = append(res.Unusable, UnusableDisk{Disk: name, Reason: unusableReason(disk)})
			if disk.Status.NodeName == "" {
				res.Undescribed = append(res.Undescribed, name)
			}
		}
	}
	return res
}

func unusableReason(d *cephv1alpha1.Disk) string {
	if d.Status.Reason != "" {
		return d.Status.Reason
	}
	if d.Status.State != "" {
		return strings.ToLower(string(d.Status.State))
	}
	return "not yet described by discovery"
}

// Phase is Ready when at least one disk is selected, else Degraded.
func (r PoolResolution) Phase() cephv1alpha1.DiskPoolPhase {
	if len(r.Selected) > 0 {
		return cephv1alpha1.DiskPoolReady
	}
	return cephv1alpha1.DiskPoolDegraded
}

// Message names the skipped disks and why, in spec order (the first
// maxListedClauses of them, then how many more), or "" when every listed
// disk is selected.
func (r PoolResolution) Message() string {
	var parts []string
	for _, name := range r.Missing {
		parts = append(parts, fmt.Sprintf("disk %s not found", name))
	}
	for _, c := range r.Contested {
		parts = append(parts, fmt.Sprintf("disk %s belongs to older DiskPool %s", c.Disk, c.Owner))
	}
	for _, u := range r.Unusable {
		parts = append(parts, fmt.Sprintf("disk %s unusable: %s", u.Disk, u.Reason))
	}
	for _, name := range r.Retired {
		parts = append(parts, fmt.Sprintf("disk %s retired (its OSD was removed; wipe it and remove its %s annotation to give it back)", name, cephv1alpha1.RetiredAnnotation))
	}
	msg := message.Clauses(parts)
	if len(r.Selected) == 0 {
		if msg == "" {
			return "no disks listed"
		}
		return "no listed disk is usable: " + msg
	}
	if msg != "" {
		msg = "skipped " + msg
	}
	// A selected disk that vanished stays selected; the pool says so, since
	// only the operator can take it out.
	var missing []string
	for _, d := range r.Selected {
		if d.Status.State == cephv1alpha1.DiskMissing {
			missing = append(missing, fmt.Sprintf("disk %s is missing (%s) and keeps its place in the CephCluster until it is taken out of this pool", d.Name, d.Status.Reason))
		}
	}
	return message.Join(msg, message.Clauses(missing))
}

// ClusterProblem is why the CephCluster does not hold what a pool
// selected: it is not there, or it refused the device list. The zero value
// is no problem.
type ClusterProblem struct {
	Reason, Message string
}

// Reasons of a DiskPool's Ready condition. A pool is Degraded with
// NoCephCluster or CephClusterRefused although its disks resolve: what they
// feed is not there, or refused them.
const (
	ReasonDisksSelected      = "DisksSelected"
	ReasonNoUsableDisks      = "NoUsableDisks"
	ReasonNoCephCluster      = "NoCephCluster"
	ReasonCephClusterRefused = "CephClusterRefused"
	// ReasonCephClusterTooLarge: the device list with the pool's disks
	// would pass what the API server stores (cephcluster_size.go).
	ReasonCephClusterTooLarge = "CephClusterTooLarge"
)

// PoolReport is what a pool's status says of its resolution, rendered
// once: it holds no Disk, so what keeps it (the ClusterView's snapshot)
// keeps no cached object alive after the cache has replaced it.
type PoolReport struct {
	Generation  int64
	Phase       cephv1alpha1.DiskPoolPhase
	Selected    int32
	RawCapacity resource.Quantity
	Message     string
	// Problem is the CephCluster's problem when the pool waits on it
	// (WaitsOn), else none.
	Problem ClusterProblem
}

// Report renders the resolution, with the problem it waits on (if any).
func (r PoolResolution) Report(problem ClusterProblem) PoolReport {
	return PoolReport{
		Generation:  r.Generation,
		Phase:       r.Phase(),
		Selected:    int32(len(r.Selected)),
		RawCapacity: r.RawCapacity.DeepCopy(),
		Message:     message.Bound(r.Message()),
		Problem:     problem,
	}
}

// DiskPoolStatus is the status a pool should have for this report, feeding
// cluster. Conditions from prev are kept; the Ready condition keeps its
// lastTransitionTime unless its status changes (then it becomes now), so an
// unchanged report yields an unchanged status and costs no write (compare
// with equality.Semantic.DeepEqual, which compares quantities by value).
func (r PoolReport) DiskPoolStatus(prev cephv1alpha1.DiskPoolStatus, cluster *cephv1alpha1.ObjectReference, now time.Time) cephv1alpha1.DiskPoolStatus {
	capacity := r.RawCapacity.DeepCopy()
	next := cephv1alpha1.DiskPoolStatus{
		Phase:              r.Phase,
		SelectedDiskCount:  r.Selected,
		RawCapacity:        &capacity,
		DisplayRawCapacity: message.Bytes(capacity.Value()),
		Message:            r.Message,
		ObservedGeneration: r.Generation,
		CephCluster:        cluster,
		Conditions:         append([]metav1.Condition(nil), prev.Conditions...),
	}
	cond := metav1.Condition{
		Type:               cephv1alpha1.ConditionReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonDisksSelected,
		Message:            message.Plural(int(r.Selected), "disk") + " selected",
		ObservedGeneration: r.Generation,
		LastTransitionTime: metav1.NewTime(now),
	}
	switch {
	case r.Problem.Reason != "":
		// The disks resolve but go nowhere: the pool must not say Ready.
		next.Phase, next.Message = cephv1alpha1.DiskPoolDegraded, message.Bound(r.Problem.Message)
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, r.Problem.Reason, next.Message
	case next.Phase != cephv1alpha1.DiskPoolReady:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, ReasonNoUsableDisks, next.Message
	}
	meta.SetStatusCondition(&next.Conditions, cond)
	return next
}

// WaitsOn says whether the pool's selection depends on a CephCluster with
// problem: every pool when it is missing; when it refused the device list,
// the pools with a selected device it does not list (inCluster).
func (r PoolResolution) WaitsOn(problem ClusterProblem, inCluster map[DeviceID]bool) bool {
	switch problem.Reason {
	case "":
		return false
	case ReasonNoCephCluster:
		return true
	}
	for _, d := range r.Selected {
		if !inCluster[DeviceIDOf(d)] {
			return true
		}
	}
	return false
}

// DiskUnion is the shared OSD set: what every live DiskPool contributes.
type DiskUnion struct {
	// Disks are the selected disks of every live pool, one per device
	// (node and device name), sorted by node then device.
	Disks []*cephv1alpha1.Disk
	// Nodes is how many distinct nodes contribute disks: the node count
	// ComputeReplication sizes every consumer against.
	Nodes int
	// RawBytes is the summed size of Disks: the shared OSD set's raw
	// capacity before Ceph reports its own (UsableCapacity).
	RawBytes int64
	// Tiers is Disks by device class (TiersOf).
	Tiers Tiers
	// Owners maps each listed disk to its owning pool (Disk.status.claimedBy).
	Owners map[string]string
	// Pools holds each live pool's resolution, by pool name, for its status.
	Pools map[string]PoolResolution
}

// Union computes the shared disk union once per change, for the CephCluster
// (RenderStorageNodes), the consumers (Nodes) and every pool's status, so
// no reconciler re-lists everything per pool or per disk. Pools being
// deleted contribute nothing: deleting a pool recomputes the union without it.
// byName holds the published Disks by name (at least those the pools list);
// they are only read.
func Union(pools []cephv1alpha1.DiskPool, byName map[string]*cephv1alpha1.Disk, inCluster map[DeviceID]bool) DiskUnion {
	u := DiskUnion{Owners: ClaimOwners(pools), Pools: map[string]PoolResolution{}}
	seen := make(map[DeviceID]bool, len(byName))
	for _, pool := range byAge(pools) {
		res := ResolvePool(pool, byName, u.Owners, inCluster)
		u.Pools[pool.Name] = res
		for _, d := range res.Selected {
			id := DeviceIDOf(d)
			if seen[id] {
				continue
			}
			seen[id] = true
			u.Disks = append(u.Disks, d)
		}
	}
	u.Disks = sortedByDevice(u.Disks)
	// Every disk's tier and the whole union's nodes and bytes, one pass.
	u.Tiers = TiersOf(u.Disks)
	u.Nodes, u.RawBytes = u.Tiers.All.Nodes, u.Tiers.All.RawBytes
	return u
}

// sortedByDevice orders disks by node then device.
func sortedByDevice(disks []*cephv1alpha1.Disk) []*cephv1alpha1.Disk {
	sort.Slice(disks, func(i, j int) bool { return DeviceIDOf(disks[i]).less(DeviceIDOf(disks[j])) })
	return disks
}

// Fingerprint identifies everything DiskPoolStatus reads of a resolution
// and the problem the pool shares, so that equal fingerprints yield equal
// statuses: the device-list job skips a pool whose fingerprint and stored
// status are those it last checked, instead of rendering its message again
// (for every pool, on every job, at 10,000 disks).
func (r PoolResolution) Fingerprint(problem ClusterProblem) uint64 {
	h := fnv.New64a()
	field := func(parts ...string) {
		for _, p := range parts {
			_, _ = h.Write([]byte(p))
			_, _ = h.Write([]byte{0})
		}
		_, _ = h.Write([]byte{1})
	}
	field(r.Pool, strconv.FormatInt(r.Generation, 10), problem.Reason, problem.Message)
	for _, d := range r.Selected {
		size := ""
		if d.Status.Size != nil {
			size = d.Status.Size.String()
		}
		field(d.Name, size, string(d.Status.State), d.Status.Reason)
	}
	field(r.Missing...)
	for _, c := range r.Contested {
		field(c.Disk, c.Owner)
	}
	for _, u := range r.Unusable {
		field(u.Disk, u.Reason)
	}
	field(r.Retired...)
	return h.Sum64()
}

// namesUnresolved says whether some live pool lists a name no described
// Disk answers to.
func (u DiskUnion) namesUnresolved() bool {
	for _, res := range u.Pools {
		if len(res.Missing) > 0 || len(res.Undescribed) > 0 {
			return true
		}
	}
	return false
}

// The union as the ClusterView computes it from the cache.

// ComputeUnion lists the pools and the disks they name from the cache and
// folds them (Union) against the devices the CephCluster lists.
func (v *ClusterView) ComputeUnion(ctx context.Context, inCluster map[DeviceID]bool) (DiskUnion, error) {
	var pools cephv1alpha1.DiskPoolList
	// The union only reads the pools: no copies.
	if err := v.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return DiskUnion{}, fmt.Errorf("list DiskPools: %w", err)
	}
	disks, err := v.listedDisks(ctx, pools.Items)
	if err != nil {
		return DiskUnion{}, err
	}
	union := Union(pools.Items, disks, inCluster)
	v.mu.Lock()
	v.unionKnown = true
	v.mu.Unlock()
	v.observe(func(f *clusterFacts) { f.tiers, f.capacity.DiskBytes = union.Tiers, union.RawBytes })
	return union, nil
}

// listedDisks are the Disks some pool lists, by name, read-only: the
// cached objects themselves.
func (v *ClusterView) listedDisks(ctx context.Context, pools []cephv1alpha1.DiskPool) (map[string]*cephv1alpha1.Disk, error) {
	listed := make(map[string]bool, listedCount(pools))
	for _, p := range pools {
		for _, name := range p.Spec.Disks {
			listed[name] = true
		}
	}
	disks := make(map[string]*cephv1alpha1.Disk, len(listed))
	if len(listed) == 0 {
		return disks, nil
	}
	store, err := informerStore{cache: v.Cache, kind: &cephv1alpha1.Disk{}}.indexer(ctx)
	if err != nil {
		return nil, err
	}
	for name := range listed {
		obj, ok, err := storedObject(store, name)
		if err != nil {
			return nil, fmt.Errorf("read Disk %s: %w", name, err)
		}
		if disk, isDisk := obj.(*cephv1alpha1.Disk); ok && isDisk {
			disks[name] = disk
		}
	}
	return disks, nil
}
