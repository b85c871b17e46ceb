package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

// cephClusterGVK is read and patched as unstructured: Rook's Go types lag
// the CRDs the cluster runs, and a typed round trip would lose fields.
var cephClusterGVK = cephv1.SchemeGroupVersion.WithKind("CephCluster")

// newCephClusterObject is an empty CephCluster to read into, watch or key
// the cache by.
func newCephClusterObject() *unstructured.Unstructured {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephClusterGVK)
	return cluster
}

// ClusterView is the plugin's one view of the storage cluster: the
// CephCluster (whether it is there, the devices it lists, and what the
// plugin last patched into it), the union of every DiskPool's disks, and
// the number of nodes contributing to it. The device-list job writes it;
// the pool-status job and the consumers read it. Whoever depends on the
// node count or the CephCluster's presence subscribes and is told when
// either changes.
type ClusterView struct {
	// Client reads the DiskPools from the cache.
	Client client.Reader
	// Cache is the manager's cache, read directly for the CephCluster and
	// the listed Disks (no copies; see informerStore).
	Cache   cache.Cache
	Cluster types.NamespacedName

	// patches remembers the CephCluster the last device-list patch left,
	// keyed by nothing but the cluster (there is one): at 10,000 disks a
	// CephCluster event takes a while to arrive, and each patch refused
	// for a stale resourceVersion costs the API server a full pass over
	// the object.
	patches patch.Memory[*unstructured.Unstructured]

	mu sync.Mutex
	// observed is what subscribers were last told about; known says
	// whether anything was observed yet.
	observed clusterFacts
	known    bool
	// unionKnown says whether observed.tiers comes from a union.
	unionKnown bool
	latest     *clusterSnapshot
	listeners  []chan<- event.GenericEvent
	// capacityNoticePending says a capacity change waits to be told.
	capacityNoticePending bool
	// listed is the device set of the CephCluster version last read: every
	// consumer's reconcile reads the CephCluster, and at 10,000 devices a
	// fresh set each time was a sixth of the plugin's CPU during pool
	// edits. Its readers only read it.
	listed listedAt
}

// listedAt is a CephCluster's device set and the resourceVersion it was
// read from.
type listedAt struct {
	resourceVersion string
	devices         map[DeviceID]bool
}

// clusterFacts are what consumers depend on.
type clusterFacts struct {
	present bool
	// tiers is the union by device class, its node count in All.
	tiers Tiers
	// capacity is the raw capacity their usable capacity is computed from.
	capacity RawCapacity
}

// clusterSnapshot is what one device-list job handed on: the report of
// each pool whose status it found to differ, for the status job.
type clusterSnapshot struct {
	reports map[string]PoolReport
}

// cephCluster is the CephCluster as read, and the devices it lists.
type cephCluster struct {
	raw *unstructured.Unstructured
	// devices is what spec.storage.nodes lists, read straight from the
	// unstructured form.
	devices map[DeviceID]bool
}

// ReadCephCluster reads the CephCluster (read-only: it may be the cached
// object itself, or what our last patch left when the cache still serves
// the version before it) and the devices it lists. A missing CephCluster
// is a NotFound error. Its presence is observed for the subscribers.
func (v *ClusterView) ReadCephCluster(ctx context.Context) (cephCluster, error) {
	raw, err := v.readCached(ctx)
	if apierrors.IsNotFound(err) {
		v.observe(func(f *clusterFacts) { f.present = false })
	}
	if err != nil {
		return cephCluster{}, fmt.Errorf("read CephCluster %s: %w", v.Cluster, err)
	}
	if patched, ok := v.patches.Since(v.Cluster.String(), raw.GetResourceVersion()); ok {
		raw = patched
	}
	devices, err := v.listedIn(raw)
	if err != nil {
		return cephCluster{}, err
	}
	cephBytes, fullRatio := reportedCapacity(raw)
	v.observe(func(f *clusterFacts) {
		f.present, f.capacity.CephBytes, f.capacity.FullRatio = true, cephBytes, fullRatio
	})
	return cephCluster{raw: raw, devices: devices}, nil
}

// listedIn is the set of devices raw lists, computed once per version.
func (v *ClusterView) listedIn(raw *unstructured.Unstructured) (map[DeviceID]bool, error) {
	rv := raw.GetResourceVersion()
	v.mu.Lock()
	last := v.listed
	v.mu.Unlock()
	if rv != "" && last.resourceVersion == rv {
		return last.devices, nil
	}
	nodes, err := storageNodesOf(raw)
	if err != nil {
		return nil, fmt.Errorf("CephCluster %s: %w", v.Cluster, err)
	}
	devices := listedDevices(nodes)
	v.mu.Lock()
	v.listed = listedAt{resourceVersion: rv, devices: devices}
	v.mu.Unlock()
	return devices, nil
}

// reportedCapacity is what Ceph reports of its OSDs' raw capacity
// (status.ceph.capacity.bytesTotal, 0 before it does) and the full ratio
// the CephCluster sets (spec.storage.fullRatio, 0 when unset).
func reportedCapacity(cluster *unstructured.Unstructured) (bytesTotal int64, fullRatio float64) {
	total, _, _ := unstructured.NestedFieldNoCopy(cluster.Object, "status", "ceph", "capacity", "bytesTotal")
	ratio, _, _ := unstructured.NestedFieldNoCopy(cluster.Object, "spec", "storage", "fullRatio")
	return jsonInt(total), jsonFloat(ratio)
}

// jsonInt and jsonFloat read a JSON number as decoded into unstructured
// (int64 or float64); anything else is 0.
func jsonInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}

func jsonFloat(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// ClusterDevices is what the CephCluster lists, or NotFound when it is not
// there (nothing a consumer derives works without it).
func (v *ClusterView) ClusterDevices(ctx context.Context) (map[DeviceID]bool, error) {
	cluster, err := v.ReadCephCluster(ctx)
	return cluster.devices, err
}

func (v *ClusterView) readCached(ctx context.Context) (*unstructured.Unstructured, error) {
	obj, ok, err := informerStore{cache: v.Cache, kind: newCephClusterObject()}.get(ctx, v.Cluster.String())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(cephv1.Resource("cephclusters"), v.Cluster.Name)
	}
	cluster, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the CephCluster store holds a %T", obj)
	}
	return cluster, nil
}

// rememberPatch records what a device-list patch based on resourceVersion
// base left in the CephCluster.
func (v *ClusterView) rememberPatch(base string, after *unstructured.Unstructured) {
	v.patches.Remember(v.Cluster.String(), base, after)
}

// isOwnPatch says whether nodes is the device list the last patch wrote
// (its watch event coming back).
func (v *ClusterView) isOwnPatch(nodes any) bool {
	last, ok := v.patches.Last(v.Cluster.String())
	if !ok {
		return false
	}
	wrote, _ := storageNodesOf(last)
	return sameJSONValue(nodes, wrote)
}

// Tiers is the union by device class, computing the union when nothing
// has yet.
func (v *ClusterView) Tiers(ctx context.Context) (Tiers, error) {
	v.mu.Lock()
	if v.unionKnown {
		t := v.observed.tiers
		v.mu.Unlock()
		return t, nil
	}
	v.mu.Unlock()
	inCluster, err := v.ClusterDevices(ctx)
	if err != nil {
		return Tiers{}, err
	}
	u, err := v.ComputeUnion(ctx, inCluster)
	return u.Tiers, err
}

// Capacity is the shared OSD set's raw capacity: what the CephCluster
// reports, and the union's Disk sizes (the union computed when nothing has
// yet). A missing CephCluster is a NotFound error.
func (v *ClusterView) Capacity(ctx context.Context) (RawCapacity, error) {
	if _, err := v.Tiers(ctx); err != nil {
		return RawCapacity{}, err
	}
	if _, err := v.ReadCephCluster(ctx); err != nil {
		return RawCapacity{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.observed.capacity, nil
}

// publishSnapshot stores what a device-list job computed, for the
// pool-status job.
func (v *ClusterView) publishSnapshot(s *clusterSnapshot) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.latest = s
}

// snapshot is what the last device-list job computed (nil before the
// first).
func (v *ClusterView) snapshot() *clusterSnapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.latest
}

// Subscribe returns a channel that receives an event whenever the node
// count, the CephCluster's presence or the raw capacity changes (for a
// source.Channel).
func (v *ClusterView) Subscribe() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 1)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.listeners = append(v.listeners, ch)
	return ch
}

// capacityNoticeDelay is how long a change of the raw capacity alone waits
// before subscribers hear of it: while discovery publishes thousands of
// Disks the pools list, the figure changes with each, and every consumer
// would rewrite its status every time. Ceph itself reports once a minute.
const capacityNoticeDelay = 5 * time.Second

// observe applies what was just read to the facts and tells the
// subscribers when they changed: at once for the node count and the
// CephCluster's presence, after capacityNoticeDelay for the capacity.
func (v *ClusterView) observe(update func(*clusterFacts)) {
	v.mu.Lock()
	next := v.observed
	update(&next)
	changed := !v.known || next.present != v.observed.present || !sameNodes(next.tiers, v.observed.tiers)
	capacityOnly := !changed && (next.capacity != v.observed.capacity || next.tiers != v.observed.tiers)
	v.observed, v.known = next, true
	if capacityOnly && !v.capacityNoticePending {
		v.capacityNoticePending = true
		time.AfterFunc(capacityNoticeDelay, func() {
			v.mu.Lock()
			v.capacityNoticePending = false
			v.mu.Unlock()
			v.notify()
		})
	}
	v.mu.Unlock()
	if changed {
		v.notify()
	}
}

// sameNodes says whether two unions have the same nodes per class, which
// is what replication follows; their OSDs and sizes are capacity, told
// after capacityNoticeDelay like Ceph's figure.
func sameNodes(a, b Tiers) bool {
	if a.All.Nodes != b.All.Nodes {
		return false
	}
	for i := range a.byClass {
		if a.byClass[i].Nodes != b.byClass[i].Nodes {
			return false
		}
	}
	return true
}

// notify tells every subscriber that something changed.
func (v *ClusterView) notify() {
	v.mu.Lock()
	listeners := v.listeners
	v.mu.Unlock()
	for _, ch := range listeners {
		select {
		case ch <- event.GenericEvent{Object: &cephv1alpha1.DiskPool{}}:
		default: // one pending notification is enough: it re-lists everything
		}
	}
}

// listedDevices is the set of devices spec.storage.nodes lists.
func listedDevices(nodes []any) map[DeviceID]bool {
	devices := make(map[DeviceID]bool, deviceCount(nodes))
	eachListedDevice(nodes, func(id DeviceID, _ map[string]any) { devices[id] = true })
	return devices
}

// eachListedDevice calls visit with every device entry spec.storage.nodes
// lists by name on a named node (nodes as storageNodesOf reads them).
func eachListedDevice(nodes []any, visit func(id DeviceID, entry map[string]any)) {
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		name, _ := node["name"].(string)
		list, _ := node["devices"].([]any)
		for _, d := range list {
			dev, _ := d.(map[string]any)
			if devName, _ := dev["name"].(string); name != "" && devName != "" {
				visit(DeviceID{Node: name, Device: devName}, dev)
			}
		}
	}
}
