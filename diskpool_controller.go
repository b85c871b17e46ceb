package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// poolDisksIndex indexes DiskPools by the Disk names they list, so a Disk
// event reaches only the pools that care about it.
const poolDisksIndex = "spec.disks"

// unionOnlyRequest is the request that recomputes the CephCluster's device
// list without writing any pool's status (a CephCluster event, or start-up
// with no pools left).
var unionOnlyRequest = reconcile.Request{}

// cephClusterGVK is read and patched as unstructured: Rook's Go types lag
// the CRDs the cluster runs, and a typed round trip would lose fields.
var cephClusterGVK = cephv1.SchemeGroupVersion.WithKind("CephCluster")

// DiskPoolReconciler folds every live DiskPool's disks into the singleton
// CephCluster's spec.storage.nodes and writes each pool's status.
type DiskPoolReconciler struct {
	Client  client.Client
	Cluster types.NamespacedName
	Union   *SharedUnion
	Now     func() time.Time
	// Cache is the manager's cache, read directly for the CephCluster (no
	// copy of its device list per reconcile; see informerStore).
	Cache cache.Cache

	mu sync.Mutex
	// wrote is the device list this reconciler last wrote: the watch
	// event of its own patch needs no second union.
	wrote []any
	// patchedFrom and patched are the resourceVersion a patch was based on
	// and the object the API server answered with. Until the cache has
	// caught up, it still serves patchedFrom; reading patched instead keeps
	// the next patch from conflicting with our own write (at 10,000 disks a
	// CephCluster event takes a while to arrive, and each refused patch
	// costs the API server a full pass over the object).
	patchedFrom string
	patched     *unstructured.Unstructured
}

// SetupWithManager registers the controller and its index.
func (r *DiskPoolReconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &cephv1alpha1.DiskPool{}, poolDisksIndex,
		func(o client.Object) []string { return o.(*cephv1alpha1.DiskPool).Spec.Disks })
	if err != nil {
		return err
	}
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephClusterGVK)
	return builder.ControllerManagedBy(mgr).
		Named("diskpool").
		For(&cephv1alpha1.DiskPool{}, builder.WithPredicates(claimsMayChange())).
		Watches(&cephv1alpha1.Disk{}, handler.EnqueueRequestsFromMapFunc(r.poolsListing), builder.WithPredicates(resolutionMayChange())).
		Watches(cluster, handler.EnqueueRequestsFromMapFunc(r.unionOnly), builder.WithPredicates(r.isCluster(), r.storageNodesChangedByOthers())).
		Complete(r)
}

// Reconcile recomputes the shared union, patches the CephCluster's device
// list when it differs, and writes the requested pool's status.
func (r *DiskPoolReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cluster, err := r.getCluster(ctx)
	if err != nil {
		if apierrors.IsNotFound(err) && req != unionOnlyRequest {
			// The pool's disks can go nowhere: say so on the pool. The
			// error retries until the CephCluster is back.
			err = errors.Join(err, r.writePoolProblem(ctx, req.Name, ReasonNoCephCluster, err.Error()))
		}
		return reconcile.Result{}, err
	}
	union, err := r.Union.Compute(ctx, cluster.devices)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.patchStorageNodes(ctx, cluster.raw, union); err != nil {
		// A refused patch (a webhook, a policy, validation, RBAC) leaves
		// the pool's disks out of Ceph: the pool must not stay Ready.
		// A conflict is only a retry.
		if !apierrors.IsConflict(err) && req != unionOnlyRequest {
			err = errors.Join(err, r.writePoolProblem(ctx, req.Name, ReasonCephClusterRefused, err.Error()))
		}
		return reconcile.Result{}, err
	}
	if req != unionOnlyRequest {
		if err := r.writePoolStatus(ctx, req.Name, union); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.writeChangedHands(ctx, req.Name, union)
}

// writeChangedHands writes the status of every other pool whose selection
// the union changed: a contested disk changes hands when the older pool
// that held it goes away or lets it go, and nothing else would tell the
// younger pool. Only the selected count and phase are compared, so an
// unchanged pool costs one comparison.
func (r *DiskPoolReconciler) writeChangedHands(ctx context.Context, requested string, union DiskUnion) error {
	var pools cephv1alpha1.DiskPoolList
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list DiskPools: %w", err)
	}
	var errs []error
	for i := range pools.Items {
		pool := &pools.Items[i]
		res, ok := union.Pools[pool.Name]
		if pool.Name == requested || !ok || pool.Status.ObservedGeneration == 0 {
			continue // its own reconcile writes it
		}
		if pool.Status.SelectedDiskCount == int32(len(res.Selected)) && pool.Status.Phase == res.Phase() {
			continue
		}
		errs = append(errs, r.writePoolStatus(ctx, pool.Name, union))
	}
	return errors.Join(errs...)
}

type cephCluster struct {
	raw *unstructured.Unstructured
	// devices is what spec.storage.nodes lists (ClusterDevices), read
	// straight from the unstructured form.
	devices map[DeviceID]bool
}

// getCluster reads the CephCluster (read-only: it may be the cached object
// itself) and the devices it lists.
func (r *DiskPoolReconciler) getCluster(ctx context.Context) (cephCluster, error) {
	raw, err := r.readCluster(ctx)
	if err != nil {
		return cephCluster{}, fmt.Errorf("read CephCluster %s: %w", r.Cluster, err)
	}
	r.mu.Lock()
	if r.patched != nil && raw.GetResourceVersion() == r.patchedFrom {
		raw = r.patched
	}
	r.mu.Unlock()
	nodes, err := storageNodesOf(raw)
	if err != nil {
		return cephCluster{}, fmt.Errorf("CephCluster %s: %w", r.Cluster, err)
	}
	devices := make(map[DeviceID]bool, deviceCount(nodes))
	for _, n := range nodes {
		node, _ := n.(map[string]any)
		name, _ := node["name"].(string)
		list, _ := node["devices"].([]any)
		for _, d := range list {
			dev, _ := d.(map[string]any)
			if devName, _ := dev["name"].(string); name != "" && devName != "" {
				devices[DeviceID{Node: name, Device: devName}] = true
			}
		}
	}
	return cephCluster{raw: raw, devices: devices}, nil
}

func (r *DiskPoolReconciler) readCluster(ctx context.Context) (*unstructured.Unstructured, error) {
	kind := &unstructured.Unstructured{}
	kind.SetGroupVersionKind(cephClusterGVK)
	obj, ok, err := informerStore{cache: r.Cache, kind: kind}.get(ctx, r.Cluster.String())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(cephv1.Resource("cephclusters"), r.Cluster.Name)
	}
	cluster, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the CephCluster store holds a %T", obj)
	}
	return cluster, nil
}

// patchStorageNodes writes spec.storage.nodes (and the record of which
// devices are ours), and only those, when the plan differs from what is
// there (PlanStorageNodes).
func (r *DiskPoolReconciler) patchStorageNodes(ctx context.Context, cluster *unstructured.Unstructured, union DiskUnion) error {
	current, err := storageNodesOf(cluster)
	if err != nil {
		return fmt.Errorf("CephCluster %s: %w", r.Cluster, err)
	}
	managed := cluster.GetAnnotations()[ManagedDevicesAnnotation]
	plan := PlanStorageNodes(current, managed, RenderStorageNodes(union.Disks))
	nodesSame := sameJSONValue(current, plan.Nodes)
	if nodesSame && managed == plan.Managed {
		return nil
	}
	// Only what changed is sent (StorageNodesPatch), as an optimistic
	// write: a concurrent edit of the list makes it a Conflict, re-read
	// and retried, not lost.
	storage, _, _ := unstructured.NestedFieldNoCopy(cluster.Object, "spec", "storage")
	storageMap, _ := storage.(map[string]any)
	ops := StorageNodesPatch(cluster.GetResourceVersion(), storageMap, cluster.GetAnnotations(), plan)
	// Patched as metadata, the API server answers with metadata only:
	// neither it nor we spend time on encoding and decoding the whole
	// list again.
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(cephClusterGVK)
	answer.SetNamespace(r.Cluster.Namespace)
	answer.SetName(r.Cluster.Name)
	if err := r.Client.Patch(ctx, answer, client.RawPatch(types.JSONPatchType, mustJSON(ops))); err != nil {
		return fmt.Errorf("patch CephCluster %s spec.storage.nodes: %w", r.Cluster, err)
	}
	r.mu.Lock()
	r.patchedFrom, r.patched = cluster.GetResourceVersion(), afterPatch(cluster, plan.Nodes, answer)
	r.wrote = plan.Nodes
	r.mu.Unlock()
	logf.FromContext(ctx).Info("updated CephCluster device list", "nodes", len(plan.Nodes), "devices", len(union.Disks))
	return nil
}

// storageNodesOf is a CephCluster's spec.storage.nodes, not copied: it is
// only read.
func storageNodesOf(cluster *unstructured.Unstructured) ([]any, error) {
	value, found, err := unstructured.NestedFieldNoCopy(cluster.Object, "spec", "storage", "nodes")
	if err != nil || !found || value == nil {
		return nil, err
	}
	nodes, ok := value.([]any)
	if !ok {
		return nil, fmt.Errorf("spec.storage.nodes is a %T, not a list", value)
	}
	return nodes, nil
}

// deviceCount is how many devices nodes list (to size maps).
func deviceCount(nodes []any) int {
	n := 0
	for _, node := range nodes {
		if m, ok := node.(map[string]any); ok {
			devices, _ := m["devices"].([]any)
			n += len(devices)
		}
	}
	return n
}

// afterPatch is the CephCluster as a patch of its device list left it:
// cluster (which is not modified) with nodes and the metadata of the API
// server's answer. Only the maps on the way to what changed are copied.
func afterPatch(cluster *unstructured.Unstructured, nodes []any, answer *metav1.PartialObjectMetadata) *unstructured.Unstructured {
	obj := maps.Clone(cluster.Object)
	spec, _ := obj["spec"].(map[string]any)
	spec = maps.Clone(spec)
	if spec == nil {
		spec = map[string]any{}
	}
	storage, _ := spec["storage"].(map[string]any)
	storage = maps.Clone(storage)
	if storage == nil {
		storage = map[string]any{}
	}
	storage["nodes"] = nodes
	spec["storage"], obj["spec"] = storage, spec
	metadata, _ := obj["metadata"].(map[string]any)
	obj["metadata"] = maps.Clone(metadata)
	out := &unstructured.Unstructured{Object: obj}
	out.SetResourceVersion(answer.ResourceVersion)
	out.SetGeneration(answer.Generation)
	out.SetAnnotations(answer.Annotations)
	return out
}

func (r *DiskPoolReconciler) writePoolStatus(ctx context.Context, name string, union DiskUnion) error {
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &pool); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return nil
	}
	res, ok := union.Pools[name]
	if !ok {
		return nil
	}
	want := res.DiskPoolStatus(pool.Status, pool.Generation, r.Now())
	if equality.Semantic.DeepEqual(pool.Status, want) {
		return nil
	}
	patch := statusPatch(want)
	if err := r.Client.Status().Patch(ctx, &pool, patch); err != nil {
		return fmt.Errorf("write status of DiskPool %s: %w", name, err)
	}
	return nil
}

// Reasons a pool is Degraded although its disks resolve: what they feed
// is not there, or refused them.
const (
	ReasonNoCephCluster      = "NoCephCluster"
	ReasonCephClusterRefused = "CephClusterRefused"
)

// writePoolProblem marks a pool Degraded with reason and message when what
// it feeds is not there or refused its disks; the rest of its status stays
// as it was.
func (r *DiskPoolReconciler) writePoolProblem(ctx context.Context, name, reason, message string) error {
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &pool); err != nil || !pool.DeletionTimestamp.IsZero() {
		return client.IgnoreNotFound(err)
	}
	want := *pool.Status.DeepCopy()
	message = BoundMessage(message)
	want.Phase, want.Message, want.ObservedGeneration = cephv1alpha1.DiskPoolDegraded, message, pool.Generation
	meta.SetStatusCondition(&want.Conditions, metav1.Condition{
		Type: cephv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason,
		Message: message, ObservedGeneration: pool.Generation, LastTransitionTime: metav1.NewTime(r.Now()),
	})
	if equality.Semantic.DeepEqual(pool.Status, want) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, &pool, statusPatch(want)); err != nil {
		return fmt.Errorf("write status of DiskPool %s: %w", name, err)
	}
	return nil
}

// poolsListing maps a Disk to the pools that list it.
func (r *DiskPoolReconciler) poolsListing(ctx context.Context, o client.Object) []reconcile.Request {
	var pools cephv1alpha1.DiskPoolList
	if err := r.Client.List(ctx, &pools, client.MatchingFields{poolDisksIndex: o.GetName()}); err != nil {
		logf.FromContext(ctx).Error(err, "listing DiskPools for a Disk", "disk", o.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(pools.Items))
	for _, p := range pools.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
	}
	return reqs
}

func (r *DiskPoolReconciler) unionOnly(context.Context, client.Object) []reconcile.Request {
	return []reconcile.Request{unionOnlyRequest}
}

func (r *DiskPoolReconciler) isCluster() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Cluster.Namespace && o.GetName() == r.Cluster.Name
	})
}

// storageNodesChangedByOthers passes the CephCluster's creation and edits
// of its device list by someone else (put back if a pool disagrees); our
// own patch coming back and status churn are ignored.
func (r *DiskPoolReconciler) storageNodesChangedByOthers() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldU, okOld := e.ObjectOld.(*unstructured.Unstructured)
			newU, okNew := e.ObjectNew.(*unstructured.Unstructured)
			if !okOld || !okNew {
				return true
			}
			oldNodes, _, _ := unstructured.NestedFieldNoCopy(oldU.Object, "spec", "storage", "nodes")
			newNodes, _, _ := unstructured.NestedFieldNoCopy(newU.Object, "spec", "storage", "nodes")
			if sameJSONValue(oldNodes, newNodes) {
				return false
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			return !sameJSONValue(newNodes, r.wrote)
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// resolutionMayChange passes Disk events that can change how a pool
// resolves: creation, and changes of the fields resolution and the
// CephCluster entry read. claimedBy, reason and lastSeenTime do not.
func resolutionMayChange() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldD, okOld := e.ObjectOld.(*cephv1alpha1.Disk)
			newD, okNew := e.ObjectNew.(*cephv1alpha1.Disk)
			if !okOld || !okNew {
				return true
			}
			return resolutionFields(oldD.Status) != resolutionFields(newD.Status) ||
				!equality.Semantic.DeepEqual(oldD.Status.Size, newD.Status.Size)
		},
		DeleteFunc: func(event.DeleteEvent) bool { return true },
	}
}

type diskResolutionFields struct {
	node, path, stablePath string
	state                  cephv1alpha1.DiskState
	available              bool
}

func resolutionFields(s cephv1alpha1.DiskStatus) diskResolutionFields {
	return diskResolutionFields{s.NodeName, s.Path, s.StablePath, s.State, s.Available}
}

// SharedUnion computes the disk union from the cache once per change and
// shares it: the DiskPool reconciler writes it into the CephCluster, the
// consumer reconcilers size replication from its node count. When the node
// count or the emptiness of the union changes, every consumer is told.
type SharedUnion struct {
	Client client.Reader
	// Cache is the manager's cache, read directly for the listed Disks
	// (no copies; see informerStore).
	Cache cache.Cache

	mu        sync.Mutex
	nodes     int
	computed  bool
	listeners []chan<- event.GenericEvent
}

// Subscribe returns a channel that receives an event whenever the union's
// node count changes (for a source.Channel).
func (s *SharedUnion) Subscribe() <-chan event.GenericEvent {
	ch := make(chan event.GenericEvent, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, ch)
	return ch
}

// Compute lists the pools and disks from the cache and folds them.
func (s *SharedUnion) Compute(ctx context.Context, inCluster map[DeviceID]bool) (DiskUnion, error) {
	var pools cephv1alpha1.DiskPoolList
	// Union only reads the pools: no copies.
	if err := s.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return DiskUnion{}, fmt.Errorf("list DiskPools: %w", err)
	}
	disks, err := s.listedDisks(ctx, pools.Items)
	if err != nil {
		return DiskUnion{}, err
	}
	union := Union(pools.Items, disks, inCluster)
	s.publish(union.Nodes)
	return union, nil
}

// Nodes is the node count of the union, computing it when nothing has yet.
func (s *SharedUnion) Nodes(ctx context.Context, clusterDevices func(context.Context) (map[DeviceID]bool, error)) (int, error) {
	s.mu.Lock()
	if s.computed {
		n := s.nodes
		s.mu.Unlock()
		return n, nil
	}
	s.mu.Unlock()
	inCluster, err := clusterDevices(ctx)
	if err != nil {
		return 0, err
	}
	u, err := s.Compute(ctx, inCluster)
	return u.Nodes, err
}

// listedDisks are the Disks some pool lists, by name, read-only: the
// cached objects themselves.
func (s *SharedUnion) listedDisks(ctx context.Context, pools []cephv1alpha1.DiskPool) (map[string]*cephv1alpha1.Disk, error) {
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
	store, err := informerStore{cache: s.Cache, kind: &cephv1alpha1.Disk{}}.indexer(ctx)
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

func (s *SharedUnion) publish(nodes int) {
	s.mu.Lock()
	changed := !s.computed || s.nodes != nodes
	s.nodes, s.computed = nodes, true
	listeners := s.listeners
	s.mu.Unlock()
	if !changed {
		return
	}
	for _, ch := range listeners {
		select {
		case ch <- event.GenericEvent{Object: &cephv1alpha1.DiskPool{}}:
		default: // one pending notification is enough: it re-lists everything
		}
	}
}
