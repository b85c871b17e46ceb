package main

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

// Field indexes of the cache.
const (
	// poolDisksIndex indexes DiskPools by the Disk names they list, so a
	// Disk event concerns the device list only when a pool names it.
	poolDisksIndex = "spec.disks"
)

// DeviceListReconciler is the first of the DiskPools' two jobs: it keeps
// the CephCluster's spec.storage.nodes equal to what the pools select
// (PlanStorageNodes over the union). It has one work item, the CephCluster
// itself: every pool, disk and CephCluster event maps to it, so a burst of
// events costs one union and at most one patch. It then publishes what it
// computed in the ClusterView and hands every pool whose status that
// changes to the second job (DiskPoolStatusReconciler).
type DeviceListReconciler struct {
	Client client.Client
	View   *ClusterView
	// PoolStatus receives one event per pool whose status is to be written.
	PoolStatus chan<- event.GenericEvent
	Clock      clock.PassiveClock
	// MaxBytes is the largest CephCluster it writes
	// (Config.CephClusterMaxBytes).
	MaxBytes int

	// checked is, per pool, the stored status (its resourceVersion) and
	// the resolution (its Fingerprint) last found to agree. There is one
	// work item, so one Reconcile at a time reads and writes it.
	checked map[string]poolCheck
}

type poolCheck struct {
	resourceVersion string
	fingerprint     uint64
}

// SetupWithManager registers the controller and its indexes.
func (r *DeviceListReconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.checked = map[string]poolCheck{}
	indexer := mgr.GetFieldIndexer()
	err := indexer.IndexField(context.Background(), &cephv1alpha1.DiskPool{}, poolDisksIndex,
		func(o client.Object) []string {
			if pool, ok := o.(*cephv1alpha1.DiskPool); ok {
				return pool.Spec.Disks
			}
			return nil
		})
	if err != nil {
		return err
	}
	cluster := newCephClusterObject()
	toItem := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{r.item()}
	})
	return builder.ControllerManagedBy(mgr).
		Named("cephcluster-devices").
		Watches(&cephv1alpha1.DiskPool{}, toItem, builder.WithPredicates(claimsMayChange())).
		Watches(&cephv1alpha1.Disk{}, handler.EnqueueRequestsFromMapFunc(r.ifListed), builder.WithPredicates(resolutionMayChange())).
		Watches(cluster, toItem, builder.WithPredicates(r.isCluster(),
			predicate.Or(r.storageNodesChangedByOthers(), capacityChanged()))).
		Complete(r)
}

// item is the one work item: the CephCluster's key.
func (r *DeviceListReconciler) item() reconcile.Request {
	return reconcile.Request{NamespacedName: r.View.Cluster}
}

// Reconcile recomputes the union, patches the CephCluster's device list
// when it differs, and hands the pools whose status changes to the status
// job. A missing CephCluster is not retried: its return is an event.
func (r *DeviceListReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	cluster, err := r.View.ReadCephCluster(ctx)
	var problem ClusterProblem
	switch {
	case apierrors.IsNotFound(err):
		problem = ClusterProblem{Reason: ReasonNoCephCluster, Message: noCephClusterMessage(r.View.Cluster)}
	case err != nil:
		return reconcile.Result{}, err
	}
	union, err := r.View.ComputeUnion(ctx, cluster.devices)
	if err != nil {
		return reconcile.Result{}, err
	}
	var patchErr error
	if problem.Reason == "" {
		patchErr = r.patchStorageNodes(ctx, cluster, union)
		var tooLarge *cephClusterTooLarge
		switch {
		case apierrors.IsConflict(patchErr):
			return reconcile.Result{}, patchErr // someone else wrote: re-read and retry, nothing to report
		case errors.As(patchErr, &tooLarge):
			// Not retried: only a pool edit or a Disk change makes room,
			// and either brings the job back.
			problem, patchErr = ClusterProblem{Reason: ReasonCephClusterTooLarge, Message: tooLarge.Error()}, nil
		case patchErr != nil:
			// A refused patch (a webhook, a policy, validation, RBAC)
			// leaves disks out of Ceph: their pools must not say Ready.
			problem = ClusterProblem{Reason: ReasonCephClusterRefused, Message: patchErr.Error()}
		}
	}
	if err := r.handOnChangedPools(ctx, union, problem, cluster.devices); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, patchErr
}

// noCephClusterMessage says what a missing CephCluster means and why the
// plugin does not create it again (see EnsureCephCluster).
func noCephClusterMessage(cluster types.NamespacedName) string {
	return fmt.Sprintf("CephCluster %s does not exist: the disks go nowhere until it is back (the plugin creates it only on first install, never again, since a new cluster would not own the OSDs on these disks)", cluster)
}

// handOnChangedPools sends the status job every live pool whose stored
// status differs from what the union implies: its own edit, a disk's
// change, a contested disk changing hands when the older pool goes away,
// or the CephCluster's problem (inCluster is what the CephCluster listed,
// for PoolResolution.WaitsOn). A pool whose stored status and resolution
// are those last found to agree costs one fingerprint.
func (r *DeviceListReconciler) handOnChangedPools(ctx context.Context, union DiskUnion, problem ClusterProblem, inCluster map[DeviceID]bool) error {
	var pools cephv1alpha1.DiskPoolList
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list DiskPools: %w", err)
	}
	for name := range r.checked {
		if _, live := union.Pools[name]; !live {
			delete(r.checked, name) // the pool is gone or going
		}
	}
	ref := &cephv1alpha1.ObjectReference{Namespace: r.View.Cluster.Namespace, Name: r.View.Cluster.Name}
	snapshot := &clusterSnapshot{reports: map[string]PoolReport{}}
	var changed []string
	for i := range pools.Items {
		pool := &pools.Items[i]
		res, ok := union.Pools[pool.Name]
		if !ok || !pool.DeletionTimestamp.IsZero() {
			continue
		}
		var waitsOn ClusterProblem
		if res.WaitsOn(problem, inCluster) {
			waitsOn = problem
		}
		check := poolCheck{resourceVersion: pool.ResourceVersion, fingerprint: res.Fingerprint(waitsOn)}
		if r.checked[pool.Name] == check {
			continue // neither its status nor what decides it changed
		}
		report := res.Report(waitsOn)
		if equality.Semantic.DeepEqual(pool.Status, report.DiskPoolStatus(pool.Status, ref, r.Clock.Now())) {
			r.checked[pool.Name] = check
			continue
		}
		snapshot.reports[pool.Name] = report
		changed = append(changed, pool.Name)
	}
	// Published before the pools are handed on: the status job reads it.
	r.View.publishSnapshot(snapshot)
	for _, name := range changed {
		select {
		case r.PoolStatus <- event.GenericEvent{Object: &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: name}}}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// patchStorageNodes writes spec.storage.nodes (and the record of which
// devices are ours), and only those, when the plan differs from what is
// there (PlanStorageNodes).
func (r *DeviceListReconciler) patchStorageNodes(ctx context.Context, cluster cephCluster, union DiskUnion) error {
	raw := cluster.raw
	current, err := storageNodesOf(raw)
	if err != nil {
		return fmt.Errorf("CephCluster %s: %w", r.View.Cluster, err)
	}
	managed := raw.GetAnnotations()[cephv1alpha1.ManagedDevicesAnnotation]
	retained := RetainedDevices(cluster.devices, managed, union, r.describedDevices(ctx))
	plan := PlanStorageNodes(current, managed, RenderStorageNodes(union.Disks, retained...))
	tooLarge, err := r.refuseOverflow(raw, plan, union.Disks, cluster.devices)
	if err != nil {
		return err
	}
	if tooLarge != nil {
		// The devices the pools add wait; those they give up still go.
		plan = PlanStorageNodes(current, managed, RenderStorageNodes(alreadyListed(union.Disks, cluster.devices), retained...))
	}
	if err := r.writePlan(ctx, raw, current, managed, plan, len(union.Disks), len(retained)); err != nil {
		return err
	}
	if tooLarge != nil {
		return tooLarge
	}
	return nil
}

// cephClusterTooLarge is a device list the plugin does not write: the
// CephCluster would pass what the API server stores.
type cephClusterTooLarge struct{ why string }

func (e *cephClusterTooLarge) Error() string {
	return e.why + ": the disks the pools add are not given to Ceph; take disks out of a pool, or raise etcd's --max-request-bytes and FUNP_CEPHCLUSTER_MAX_BYTES together"
}

// refuseOverflow measures the CephCluster plan would leave when it adds
// devices (a plan that only removes cannot grow it), and refuses it over
// the limits (CheckCephClusterSize).
func (r *DeviceListReconciler) refuseOverflow(raw *unstructured.Unstructured, plan StorageNodesPlan, disks []*cephv1alpha1.Disk, listed map[DeviceID]bool) (*cephClusterTooLarge, error) {
	if len(alreadyListed(disks, listed)) == len(disks) {
		return nil, nil
	}
	size, err := sizeAfterPlan(raw, plan)
	if err != nil {
		return nil, err
	}
	limit := r.MaxBytes
	if limit <= 0 {
		limit = defaultCephClusterMaxBytes
	}
	if why := CheckCephClusterSize(size, limit); why != "" {
		return &cephClusterTooLarge{why: why}, nil
	}
	return nil, nil
}

// alreadyListed are the disks the CephCluster lists already.
func alreadyListed(disks []*cephv1alpha1.Disk, listed map[DeviceID]bool) []*cephv1alpha1.Disk {
	out := make([]*cephv1alpha1.Disk, 0, len(disks))
	for _, d := range disks {
		if listed[DeviceIDOf(d)] {
			out = append(out, d)
		}
	}
	return out
}

// writePlan patches the plan in when it differs from what is there.
func (r *DeviceListReconciler) writePlan(ctx context.Context, raw *unstructured.Unstructured, current []any, managed string, plan StorageNodesPlan, devices, retained int) error {
	if sameJSONValue(current, plan.Nodes) && managed == plan.Managed {
		return nil
	}
	// Only what changed is sent (StorageNodesPatch), as an optimistic
	// write: a concurrent edit of the list makes it a Conflict, re-read
	// and retried, not lost.
	storage, _, _ := unstructured.NestedFieldNoCopy(raw.Object, "spec", "storage")
	storageMap, _ := storage.(map[string]any)
	ops := StorageNodesPatch(raw.GetResourceVersion(), storageMap, raw.GetAnnotations(), plan)
	// Patched as metadata, the API server answers with metadata only:
	// neither it nor we spend time on encoding and decoding the whole
	// list again.
	answer := &metav1.PartialObjectMetadata{}
	answer.SetGroupVersionKind(cephClusterGVK)
	answer.SetNamespace(r.View.Cluster.Namespace)
	answer.SetName(r.View.Cluster.Name)
	if err := r.Client.Patch(ctx, answer, client.RawPatch(types.JSONPatchType, patch.MustJSON(ops))); err != nil {
		return fmt.Errorf("patch CephCluster %s spec.storage.nodes: %w", r.View.Cluster, err)
	}
	r.View.rememberPatch(raw.GetResourceVersion(), afterPatch(raw, plan.Nodes, answer))
	logf.FromContext(ctx).Info("updated CephCluster device list", "nodes", len(plan.Nodes), "devices", devices, "retained", retained)
	return nil
}

// describedDevices answers whether some Disk describes a device. The set
// is built on the first question, from the cached Disks themselves:
// RetainedDevices asks only while a pool names an unresolved Disk, and an
// index kept up to date on every Disk write would cost every reconcile of
// a 10,000-disk inventory for that rare case. A failed read counts as
// described: nothing is kept on a guess, and the device goes only as it
// would have without RetainedDevices.
func (r *DeviceListReconciler) describedDevices(ctx context.Context) func(DeviceID) bool {
	var described map[DeviceID]bool
	return func(id DeviceID) bool {
		if described == nil {
			store, err := informerStore{cache: r.View.Cache, kind: &cephv1alpha1.Disk{}}.indexer(ctx)
			if err != nil {
				logf.FromContext(ctx).Error(err, "reading the Disks to keep the devices of deleted ones")
				return true
			}
			items := store.List()
			described = make(map[DeviceID]bool, len(items))
			for _, item := range items {
				if disk, ok := item.(*cephv1alpha1.Disk); ok {
					described[DeviceIDOf(disk)] = true
				}
			}
		}
		return described[id]
	}
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

// ifListed maps a Disk event to the work item when some pool lists the
// Disk: no other Disk changes the union.
func (r *DeviceListReconciler) ifListed(ctx context.Context, o client.Object) []reconcile.Request {
	var pools cephv1alpha1.DiskPoolList
	// Only counted: no copies (at 10,000 disks, a copy of each listing
	// pool per Disk event was most of the garbage convergence made).
	if err := r.Client.List(ctx, &pools, client.MatchingFields{poolDisksIndex: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "listing DiskPools for a Disk", "disk", o.GetName())
		return []reconcile.Request{r.item()} // recomputing costs less than missing it
	}
	if len(pools.Items) == 0 {
		return nil
	}
	return []reconcile.Request{r.item()}
}

func (r *DeviceListReconciler) isCluster() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.View.Cluster.Namespace && o.GetName() == r.View.Cluster.Name
	})
}

// storageNodesChangedByOthers passes the CephCluster's creation and
// deletion, and edits of its device list by someone else (put back if a
// pool disagrees); our own patch coming back and status churn are ignored.
func (r *DeviceListReconciler) storageNodesChangedByOthers() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldU, okOld := e.ObjectOld.(*unstructured.Unstructured)
			newU, okNew := e.ObjectNew.(*unstructured.Unstructured)
			if !okOld || !okNew {
				return true
			}
			oldNodes, _, _ := unstructured.NestedFieldNoCopy(oldU.Object, "spec", "storage", "nodes")
			newNodes, _, _ := unstructured.NestedFieldNoCopy(newU.Object, "spec", "storage", "nodes")
			return !sameJSONValue(oldNodes, newNodes) && !r.View.isOwnPatch(newNodes)
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// capacityChanged passes CephCluster updates that change the raw capacity
// consumers report (Ceph's bytesTotal, the full ratio): the job reads the
// CephCluster, and the ClusterView tells the consumers. Ceph's usage and
// Rook's timestamps, which change every minute, do not pass.
func capacityChanged() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc: func(event.CreateEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldU, okOld := e.ObjectOld.(*unstructured.Unstructured)
			newU, okNew := e.ObjectNew.(*unstructured.Unstructured)
			if !okOld || !okNew {
				return false
			}
			oldTotal, oldRatio := reportedCapacity(oldU)
			newTotal, newRatio := reportedCapacity(newU)
			return oldTotal != newTotal || oldRatio != newRatio
		},
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// resolutionMayChange passes Disk events that can change how a pool
// resolves: creation, and changes of the fields resolution and the
// CephCluster entry read, and of the retired mark. claimedBy, reason and
// lastSeenTime do not.
func resolutionMayChange() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			oldD, okOld := e.ObjectOld.(*cephv1alpha1.Disk)
			newD, okNew := e.ObjectNew.(*cephv1alpha1.Disk)
			if !okOld || !okNew {
				return true
			}
			return resolutionFields(oldD.Status) != resolutionFields(newD.Status) ||
				oldD.Annotations[cephv1alpha1.RetiredAnnotation] != newD.Annotations[cephv1alpha1.RetiredAnnotation] ||
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
