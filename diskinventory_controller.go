package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// inventoryWorkers is how many discovery ConfigMaps are published at once.
const inventoryWorkers = 8

// diskConfigMapIndex indexes Disks by their DiscoveryConfigMapLabel. A
// label selector on the cache reads every cached Disk to find one node's
// 20: at 10,000 Disks, one publish per node made that quadratic.
const diskConfigMapIndex = "discoveryConfigMap"

// osdNodeIndex indexes Rook's OSD Deployments by the node they run on
// (ROOK_NODE_NAME): one node's publication reads that node's alone.
const osdNodeIndex = "osdNode"

// DiskInventoryReconciler publishes one Disk per device Rook's discovery
// daemon reports, with the OSD Rook runs on it and whether that OSD's
// device class disagrees with the disk's type (osdclass.go), which it
// announces once. A request is one discovery ConfigMap (namespace/name).
//
// It is the only writer of Disks, and it remembers what it wrote
// (patch.Memory): a reconcile that runs before the cache has seen its own
// create or status write neither creates again nor writes the same status
// twice. That keeps convergence free of AlreadyExists retries and at two
// writes per new disk. A Disk deleted from outside is published again at
// once: its deletion is watched, and clears what was remembered of it.
type DiskInventoryReconciler struct {
	Client    client.Client
	Namespace string
	Discovery DiscoveryOptions
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock

	// written holds a hash of the status last written per Disk (enough to
	// recognise "already written" at a few bytes a disk) and the class
	// mismatch it said, so one is announced once even while the cache
	// lags behind the write that recorded it.
	written patch.Memory[writtenDisk]
}

// writtenDisk is what the inventory remembers of a Disk status it wrote.
type writtenDisk struct {
	hash          uint64
	classMismatch string
}

// SetupWithManager watches the discovery ConfigMaps and the DiskPools
// (whose changes move claimedBy), and settles at start-up the nodes whose
// ConfigMap vanished while the plugin was down.
func (r *DiskInventoryReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	settle := manager.RunnableFunc(func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		return r.settleOrphans(ctx)
	})
	if err := mgr.Add(settle); err != nil {
		return err
	}
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &cephv1alpha1.Disk{}, diskConfigMapIndex, func(o client.Object) []string {
		if cm := o.GetLabels()[cephv1alpha1.DiscoveryConfigMapLabel]; cm != "" {
			return []string{cm}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = mgr.GetFieldIndexer().IndexField(context.Background(), &appsv1.Deployment{}, osdNodeIndex, func(o client.Object) []string {
		if node := osdNodeOf(o); node != "" {
			return []string{node}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("diskinventory").
		// Nodes are independent (a ConfigMap's Disks belong to it alone), so
		// publishing a large inventory runs in parallel.
		WithOptions(controller.Options{MaxConcurrentReconciles: inventoryWorkers}).
		For(&corev1.ConfigMap{}, builder.WithPredicates(r.isDiscoveryConfigMap(), devicesChanged())).
		Watches(&cephv1alpha1.DiskPool{}, r.poolClaimsHandler(), builder.WithPredicates(claimsMayChange())).
		Watches(&cephv1alpha1.Disk{}, r.deletedDiskHandler()).
		// A Node that registers or is deleted publishes its report again.
		Watches(&corev1.Node{}, r.nodeHandler(), builder.OnlyMetadata, builder.WithPredicates(createOrDelete())).
		// An OSD made, gone, moved or re-classed changes its node's Disks.
		Watches(&appsv1.Deployment{}, r.osdHandler(), builder.WithPredicates(osdFactsChanged())).
		Complete(r)
}

// Reconcile publishes the Disks of one discovery ConfigMap.
func (r *DiskInventoryReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx)
	var cm corev1.ConfigMap
	err := r.Client.Get(ctx, req.NamespacedName, &cm)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	configMapGone := apierrors.IsNotFound(err)

	var discovered []DiscoveredDisk
	if !configMapGone {
		// The node first, then the report: Rook's daemon only runs on
		// Nodes, and a report for a name that is none is invented (or its
		// node was deleted). It is not even parsed: anyone who can write a
		// ConfigMap there could otherwise make the plugin decode a
		// megabyte per name, and publishing it would create thousands of
		// Disks per name. Its Disks are kept, Missing, as for a node whose
		// ConfigMap went; the Node's creation publishes them.
		node := cm.Labels[DiscoveryNodeLabel]
		exists := false
		if node != "" {
			if exists, err = r.nodeExists(ctx, node); err != nil {
				return reconcile.Result{}, err
			}
		}
		if node != "" && !exists {
			r.warn(&cm, EventUnknownNode, "discovery ConfigMap %s reports node %q, which is not a Node of the cluster: its devices are published when the Node exists", req.NamespacedName, node)
		} else if discovered, err = ParseDiscovery(&cm, r.Discovery); err != nil {
			// Bad input from one node must not stop the others: say which
			// ConfigMap and why, keep its Disks as they are, and wait for
			// Rook to rewrite it (which triggers a new reconcile).
			log.Error(err, "ignoring malformed discovery ConfigMap", "configMap", req.NamespacedName.String())
			r.warn(&cm, EventMalformedDiscovery, "%v", err)
			return reconcile.Result{}, nil
		}
	}
	existing, err := r.publishedDisks(ctx, req.Name)
	if err != nil {
		return reconcile.Result{}, err
	}
	// A disk an OSD put LVM or dm-crypt on is reported without its identity;
	// it keeps the Disk it was instead of becoming a second one.
	discovered = KeepDiskIdentities(discovered, existing)
	owners, err := r.claimOwners(ctx, diskNames(discovered, existing))
	if err != nil {
		return reconcile.Result{}, err
	}
	var osds OSDNodeFacts
	if len(discovered) > 0 {
		if osds, err = r.nodeOSDs(ctx, cm.Labels[DiscoveryNodeLabel]); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, r.publishAll(ctx, req.Name, PlanPublications(discovered, existing, owners, osds, r.Clock.Now()))
}

// nodeOSDs reads the OSD Deployments of node from the cache.
func (r *DiskInventoryReconciler) nodeOSDs(ctx context.Context, node string) (OSDNodeFacts, error) {
	var list appsv1.DeploymentList
	if err := r.Client.List(ctx, &list, client.MatchingFields{osdNodeIndex: node}); err != nil {
		return OSDNodeFacts{}, fmt.Errorf("list the OSD Deployments of node %s: %w", node, err)
	}
	var facts OSDNodeFacts
	for i := range list.Items {
		osd, err := rook.ParseOSDDeployment(&list.Items[i])
		if err != nil {
			facts.Unreadable = append(facts.Unreadable, list.Items[i].Name)
			continue
		}
		facts.OSDs = append(facts.OSDs, osd)
	}
	return facts, nil
}

// nodeExists asks the cache of Node metadata (the inventory watches Nodes
// as metadata only: a Node's status is large and changes every few
// seconds) whether node is a Node of the cluster.
func (r *DiskInventoryReconciler) nodeExists(ctx context.Context, node string) (bool, error) {
	err := r.Client.Get(ctx, client.ObjectKey{Name: node}, nodeMetadata())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up Node %q: %w", node, err)
	}
	return true, nil
}

func (r *DiskInventoryReconciler) warn(cm *corev1.ConfigMap, reason EventReason, format string, args ...any) {
	r.Recorder.Eventf(cm, nil, corev1.EventTypeWarning, string(reason), "Publish", format, args...)
}

// Publication is one Disk of a discovery ConfigMap and the status it
// should have. Prev is the cached Disk (nil when there is none).
type Publication struct {
	Name string
	Prev *cephv1alpha1.Disk
	Want cephv1alpha1.DiskStatus
}

// PlanPublications decides the status of every Disk of one ConfigMap:
// each discovered disk with its claimant, when it was seen, the OSD that
// runs on it among the node's osds and whether its class disagrees with
// the disk's type (DiskOSDOf, ClassMismatch), and every Disk published
// before but no longer reported marked Missing (a Disk is never deleted,
// so the pools that list it keep their meaning) with the OSD it had.
// Existing are the ConfigMap's cached Disks, owners the claimant of each
// disk.
func PlanPublications(discovered []DiscoveredDisk, existing map[string]*cephv1alpha1.Disk, owners map[string]string, osds OSDNodeFacts, now time.Time) []Publication {
	out := make([]Publication, 0, max(len(discovered), len(existing)))
	reported := make(map[string]bool, len(discovered))
	statuses := make([]cephv1alpha1.DiskStatus, 0, len(discovered)+len(existing))
	for _, d := range discovered {
		statuses = append(statuses, d.Status)
	}
	for _, d := range existing {
		statuses = append(statuses, d.Status)
	}
	nodePaths := nodePathsOf(statuses)
	for _, d := range discovered {
		want := d.Status
		want.ClaimedBy = owners[d.Name]
		prev, found := existing[d.Name]
		want.LastSeenTime = lastSeen(prev, found, now)
		want.OSD = DiskOSDOf(&cephv1alpha1.Disk{Status: want}, osds, nodePaths)
		want.ClassMismatch = ClassMismatch(want.Type, want.OSD)
		reported[d.Name] = true
		out = append(out, Publication{Name: d.Name, Prev: prev, Want: want})
	}
	// What is left was not reported: its device or its whole node is gone.
	for _, name := range sortedKeys(existing) {
		if reported[name] {
			continue
		}
		prev := existing[name]
		want := prev.Status
		if want.State != cephv1alpha1.DiskMissing {
			want = MarkMissing(prev.Status, now)
		}
		want.ClaimedBy = owners[name]
		out = append(out, Publication{Name: name, Prev: prev, Want: want})
	}
	return out
}

// publishConcurrency is how many of one ConfigMap's Disks are written at
// once. A node's Disks are independent of each other: written one after
// another, a 20-device node is 40 round trips in a row, and the last nodes
// of a large inventory publish with most workers idle. With the 8
// inventory workers this keeps at most 32 writes in flight.
const publishConcurrency = 4

// publishAll publishes every planned Disk of configMap, a few at once,
// and returns the first error (the others are still attempted: each is
// its own write, and what succeeded is remembered).
func (r *DiskInventoryReconciler) publishAll(ctx context.Context, configMap string, pubs []Publication) error {
	var g errgroup.Group
	g.SetLimit(publishConcurrency)
	for _, p := range pubs {
		g.Go(func() error { return r.publish(ctx, configMap, p) })
	}
	return g.Wait()
}

// lastSeen keeps the time a device was first seen in its current streak of
// reports, so a Disk that is simply still there is not rewritten on every
// reconcile; a Disk coming back from Missing is stamped now.
func lastSeen(prev *cephv1alpha1.Disk, found bool, now time.Time) *metav1.Time {
	if found && prev.Status.LastSeenTime != nil && prev.Status.State != cephv1alpha1.DiskMissing {
		return prev.Status.LastSeenTime
	}
	return &metav1.Time{Time: now.Truncate(time.Second)}
}

// publish creates the Disk when it does not exist and writes its status
// when it differs from what is stored (or from what this process last wrote,
// when the cache has not caught up with that write yet).
func (r *DiskInventoryReconciler) publish(ctx context.Context, configMap string, p Publication) error {
	name, prev, found, want := p.Name, p.Prev, p.Prev != nil, p.Want
	base := ""
	if found {
		base = prev.ResourceVersion
	}
	last, wrote := r.written.Since(name, base)
	hash := statusHash(want)
	if wrote && last.hash == hash {
		return nil
	}
	if found && equality.Semantic.DeepEqual(prev.Status, want) {
		return nil
	}
	// The mismatch the Disk has said so far: what this process last wrote
	// while the cache lags behind it, else what the cache holds.
	said := ""
	switch {
	case wrote:
		said = last.classMismatch
	case found:
		said = prev.Status.ClassMismatch
	}
	remember := func(disk *cephv1alpha1.Disk) {
		r.written.Remember(name, base, writtenDisk{hash: hash, classMismatch: want.ClassMismatch})
		r.announceClassMismatch(disk, said, want.ClassMismatch)
	}
	disk := prev
	if !found && !wrote {
		disk = &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{cephv1alpha1.DiscoveryConfigMapLabel: configMap, cephv1alpha1.ManagedByLabel: cephv1alpha1.ManagedByValue},
		}}
		err := r.Client.Create(ctx, disk)
		switch {
		case err == nil:
			// The Disk is exactly what the create returned: its first status
			// is an update on that resourceVersion, which the API server
			// stores without applying a patch to the object it reads (a
			// third of what a status patch costs it). A write in between
			// by someone else is a Conflict, retried as a patch.
			disk.Status = want
			if err := r.Client.Status().Update(ctx, disk); err != nil {
				return fmt.Errorf("write status of new Disk %s: %w", name, err)
			}
			remember(disk)
			return nil
		case !apierrors.IsAlreadyExists(err):
			return fmt.Errorf("create Disk %s: %w", name, err)
		}
	} else if disk == nil {
		disk = &cephv1alpha1.Disk{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	// A merge patch of status alone: no resourceVersion, so a cache that
	// lags behind our own create cannot turn this into a conflict.
	statusPatch := patch.Status(want)
	if err := r.Client.Status().Patch(ctx, disk, statusPatch); err != nil {
		if apierrors.IsNotFound(err) {
			// Deleted behind the cache's back: the retry creates it again.
			r.written.Forget(name)
		}
		return fmt.Errorf("write status of Disk %s: %w", name, err)
	}
	remember(disk)
	return nil
}

// announceClassMismatch records a Warning Event on a Disk once its status
// says its OSD's class disagrees with its type (or disagrees otherwise
// than it said): said is what the status said before the write.
func (r *DiskInventoryReconciler) announceClassMismatch(disk *cephv1alpha1.Disk, said, mismatch string) {
	if mismatch == "" || mismatch == said {
		return
	}
	r.Recorder.Eventf(disk, nil, corev1.EventTypeWarning, string(EventOSDClassMismatch), "Publish", "%s", mismatch)
}

// statusHash identifies a status by its JSON encoding (quantities and
// times encode canonically).
func statusHash(s cephv1alpha1.DiskStatus) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(patch.MustJSON(s))
	return h.Sum64()
}

// publishedDisks are the Disks a discovery ConfigMap reported before.
func (r *DiskInventoryReconciler) publishedDisks(ctx context.Context, configMap string) (map[string]*cephv1alpha1.Disk, error) {
	var list cephv1alpha1.DiskList
	if err := r.Client.List(ctx, &list, client.MatchingFields{diskConfigMapIndex: configMap}); err != nil {
		return nil, fmt.Errorf("list Disks of %s: %w", configMap, err)
	}
	out := make(map[string]*cephv1alpha1.Disk, len(list.Items))
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

func (r *DiskInventoryReconciler) claimOwners(ctx context.Context, disks map[string]bool) (map[string]string, error) {
	var pools cephv1alpha1.DiskPoolList
	// ClaimOwnersOf only reads the pools: no copies, at every publish.
	if err := r.Client.List(ctx, &pools, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list DiskPools: %w", err)
	}
	return ClaimOwnersOf(pools.Items, disks), nil
}

// diskNames are the names of one ConfigMap's Disks: those it reports and
// those published before.
func diskNames(discovered []DiscoveredDisk, existing map[string]*cephv1alpha1.Disk) map[string]bool {
	names := make(map[string]bool, max(len(discovered), len(existing)))
	for _, d := range discovered {
		names[d.Name] = true
	}
	for name := range existing {
		names[name] = true
	}
	return names
}

// settleOrphans reconciles, once the caches are synced, every ConfigMap
// that has Disks but no longer exists: a deletion the plugin missed while
// it was down leaves no event to react to.
func (r *DiskInventoryReconciler) settleOrphans(ctx context.Context) error {
	var disks cephv1alpha1.DiskList
	if err := r.Client.List(ctx, &disks); err != nil {
		return fmt.Errorf("list Disks: %w", err)
	}
	seen := map[string]bool{}
	for _, d := range disks.Items {
		cmName := d.Labels[cephv1alpha1.DiscoveryConfigMapLabel]
		if cmName == "" || seen[cmName] {
			continue
		}
		seen[cmName] = true
		key := types.NamespacedName{Namespace: r.Namespace, Name: cmName}
		err := r.Client.Get(ctx, key, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			continue
		}
		if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
			logf.FromContext(ctx).Error(err, "settling Disks of a vanished discovery ConfigMap", "configMap", key.String())
		}
	}
	return nil
}

func (r *DiskInventoryReconciler) isDiscoveryConfigMap() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetLabels()[DiscoveryAppLabel] == DiscoveryAppValue
	})
}

// devicesChanged lets through ConfigMap updates whose data or node label
// changed; resyncs and metadata-only updates cost nothing.
func devicesChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldCM, okOld := e.ObjectOld.(*corev1.ConfigMap)
		newCM, okNew := e.ObjectNew.(*corev1.ConfigMap)
		if !okOld || !okNew {
			return true
		}
		return oldCM.Data[DiscoveryDevicesKey] != newCM.Data[DiscoveryDevicesKey] ||
			oldCM.Labels[DiscoveryNodeLabel] != newCM.Labels[DiscoveryNodeLabel]
	}}
}

// claimsMayChange passes pool creations, deletions and spec.disks changes:
// only those move claimedBy (status writes of the pool do not).
func claimsMayChange() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
		},
	})
}

// poolClaimsHandler enqueues the discovery ConfigMaps of the disks whose
// claimant set a pool event changes: all its disks when it comes or goes,
// only the added and removed ones when its list is edited.
//
// A disk the cache does not hold yet cannot name its ConfigMap; dropping it
// would leave its claimedBy unwritten for good (nothing else re-plans it).
// Then every discovery ConfigMap is enqueued: rare (the Disk informer
// lagging, as after an API server outage while it relists; a pool naming a
// Disk that does not exist) and always right.
func (r *DiskInventoryReconciler) poolClaimsHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request], disks []string) {
		seen := map[string]bool{}
		for _, name := range disks {
			var disk cephv1alpha1.Disk
			if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &disk); err != nil {
				r.enqueueEveryConfigMap(ctx, q)
				return
			}
			cmName := disk.Labels[cephv1alpha1.DiscoveryConfigMapLabel]
			if cmName == "" || seen[cmName] {
				continue
			}
			seen[cmName] = true
			q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: cmName}})
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, poolDisks(e.Object))
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() {
				enqueue(ctx, q, poolDisks(e.ObjectNew)) // a pool being deleted owns nothing
				return
			}
			enqueue(ctx, q, symmetricDifference(poolDisks(e.ObjectOld), poolDisks(e.ObjectNew)))
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, q, poolDisks(e.Object))
		},
	}
}

// enqueueEveryConfigMap enqueues every discovery ConfigMap of the cache.
func (r *DiskInventoryReconciler) enqueueEveryConfigMap(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	var cms corev1.ConfigMapList
	if err := r.Client.List(ctx, &cms, client.InNamespace(r.Namespace), client.MatchingLabels{DiscoveryAppLabel: DiscoveryAppValue}, client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "listing discovery ConfigMaps to publish a pool's claims")
		return
	}
	for _, cm := range cms.Items {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: cm.Name}})
	}
}

// deletedDiskHandler forgets what was written to a Disk deleted from
// outside and publishes its ConfigMap again: a device still reported gets
// its Disk back (the same name, so its pools resolve it again).
func (r *DiskInventoryReconciler) deletedDiskHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.written.Forget(e.Object.GetName())
			if cmName := e.Object.GetLabels()[cephv1alpha1.DiscoveryConfigMapLabel]; cmName != "" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: cmName}})
			}
		},
	}
}

// nodeHandler enqueues a Node's discovery ConfigMap.
func (r *DiskInventoryReconciler) nodeHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: DiscoveryConfigMapName(o.GetName())}}}
	})
}

// osdHandler enqueues the discovery ConfigMap of the node an OSD
// Deployment runs on, and of the one it ran on before when that changed.
func (r *DiskInventoryReconciler) osdHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			if node := osdNodeOf(o); node != "" {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: DiscoveryConfigMapName(node)}})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.ObjectOld, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(q, e.Object)
		},
	}
}

// osdFactsChanged passes OSD Deployment updates that change what a Disk
// says of its OSD (its node, path or class, or whether it can be read at
// all); Rook's rewrites of a Deployment and its status changes cost
// nothing.
func osdFactsChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return osdFactsOf(e.ObjectOld) != osdFactsOf(e.ObjectNew)
	}}
}

// osdFacts is what a Disk's status takes from an OSD Deployment.
type osdFacts struct {
	id                            int32
	node, path, class, unreadable string
}

func osdFactsOf(o client.Object) osdFacts {
	d, ok := o.(*appsv1.Deployment)
	if !ok {
		return osdFacts{}
	}
	osd, err := rook.ParseOSDDeployment(d)
	if err != nil {
		return osdFacts{node: osdNodeOf(o), unreadable: err.Error()}
	}
	return osdFacts{id: osd.ID, node: osd.Node, path: osd.BlockPath, class: osd.DeviceClass}
}

// osdNodeOf is the node an OSD Deployment names (ROOK_NODE_NAME), read
// without the rest: a Deployment rook.ParseOSDDeployment refuses still
// counts on its node.
func osdNodeOf(o client.Object) string {
	d, ok := o.(*appsv1.Deployment)
	if !ok {
		return ""
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != rook.OSDContainer {
			continue
		}
		for _, env := range c.Env {
			if env.Name == rook.EnvNodeName {
				return env.Value
			}
		}
	}
	return ""
}

// createOrDelete passes only creations and deletions: a Node's updates
// (heartbeats, every few seconds) never change whether it exists.
func createOrDelete() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

func poolDisks(o client.Object) []string {
	if pool, ok := o.(*cephv1alpha1.DiskPool); ok {
		return pool.Spec.Disks
	}
	return nil
}

// symmetricDifference is what is in exactly one of a and b.
func symmetricDifference(a, b []string) []string {
	inA := make(map[string]bool, len(a))
	for _, x := range a {
		inA[x] = true
	}
	inB := make(map[string]bool, len(b))
	var out []string
	for _, x := range b {
		inB[x] = true
		if !inA[x] {
			out = append(out, x)
		}
	}
	for _, x := range a {
		if !inB[x] {
			out = append(out, x)
		}
	}
	return out
}
