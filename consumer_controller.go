package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/patch"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// provisioningBackstop re-checks a Provisioning consumer even though the
// Rook object is watched: a missed event must not leave it stuck forever.
const provisioningBackstop = 5 * time.Minute

// consumerDeps is what every ConsumerReconciler shares.
type consumerDeps struct {
	Client client.Client
	Config Config
	// View is the plugin's view of the storage cluster (a *ClusterView):
	// whether the CephCluster is there, and the node count replication is
	// sized for.
	View     consumerView
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Live reads from the API server (the manager's API reader) what is
	// wanted rarely and would be large to cache: Rook's Events about a
	// Rook object that is not Ready, and the snapshot CRD.
	Live client.Reader
}

// ConsumerReconciler turns a consumer T (a BlockStorage, FileStorage or
// ObjectStorage) into its Rook object R and StorageClass: one generic
// type, one registration per kind. It never adopts an object it does not
// control.
type ConsumerReconciler[T consumerObject, R client.Object] struct {
	Kind kind[T, R]
	consumerDeps
	// snapshotClasses is started once the snapshot API is served (kinds
	// with a VolumeSnapshotClass only).
	snapshotClasses snapshotClassWatch
}

// consumerView is what a consumer reads of the ClusterView.
type consumerView interface {
	// ClusterDevices fails with NotFound when the CephCluster is missing.
	ClusterDevices(context.Context) (map[DeviceID]bool, error)
	// Tiers is the disk union by device class: the nodes replication is
	// sized against, the OSDs and the raw capacity of each class.
	Tiers(context.Context) (Tiers, error)
	// Capacity is the shared OSD set's raw capacity.
	Capacity(context.Context) (RawCapacity, error)
	// Subscribe is told when the tiers, the CephCluster's presence or the
	// raw capacity change.
	Subscribe() <-chan event.GenericEvent
}

// SetupWithManager watches the consumer kind, its derived objects by name
// (so a foreign object in the way, and its removal, are noticed too) and
// the ClusterView (the node count, the CephCluster's presence).
func (r *ConsumerReconciler[T, R]) SetupWithManager(mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	b := builder.ControllerManagedBy(mgr).
		Named(strings.ToLower(r.Kind.kind)).
		For(r.Kind.newObject(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(r.Kind.newRook(), handler.EnqueueRequestsFromMapFunc(r.byDerivedName(r.Config.ClusterNamespace))).
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.byDerivedName(""))).
		WatchesRawSource(source.Channel(r.View.Subscribe(), handler.EnqueueRequestsFromMapFunc(r.all)))
	if r.Kind.supportsDefaultClass() {
		b = b.Watches(r.Kind.newObject(), handler.EnqueueRequestsFromMapFunc(r.defaultClassRequesters),
			builder.WithPredicates(r.defaultRequestChanged()))
	}
	if r.Kind.renderSnapshotClass != nil {
		b = r.watchSnapshotAPI(b)
	}
	ctrl, err := b.Build(r)
	if err != nil {
		return err
	}
	r.snapshotClasses = snapshotClassWatch{ctrl: ctrl, cache: mgr.GetCache(), mapFunc: r.byDerivedName("")}
	return nil
}

// Reconcile derives the Rook object and StorageClass and writes status.
func (r *ConsumerReconciler[T, R]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.Kind.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return reconcile.Result{}, nil // garbage collection removes what it owns
	}
	out, err := r.derive(ctx, obj)
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		// Someone wrote a Rook object between our read and our write, or
		// the cache has not yet seen a create (often our own, from the
		// reconcile before): it is read again on the retry, where a
		// foreign object is reported as such. Nothing to report now.
		return reconcile.Result{}, err
	}
	if err != nil {
		// A failed reconcile says why in status before it is retried, so
		// the cause shows in the console, not only in the plugin's logs.
		out = consumerOutcome{Phase: cephv1alpha1.StorageDegraded, Reason: ReasonReconcileError, Message: err.Error(), Replication: out.Replication, CephWarning: out.CephWarning}
	}
	if werr := r.writeStatus(ctx, obj, out); werr != nil {
		return reconcile.Result{}, errors.Join(err, werr)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if out.Phase == cephv1alpha1.StorageProvisioning || out.Reason == ReasonRookFailed {
		// Rook's progress, and a failure's new reason, change nothing
		// watched here but Rook's phase.
		return reconcile.Result{RequeueAfter: provisioningBackstop}, nil
	}
	return reconcile.Result{}, nil
}

// derive gathers the input, runs the preconditions (the first that fails
// names the Degraded reason, and nothing is written), then creates or
// patches what the consumer derives.
func (r *ConsumerReconciler[T, R]) derive(ctx context.Context, obj T) (consumerOutcome, error) {
	in, have, err := r.gather(ctx, obj)
	if err != nil {
		return consumerOutcome{}, err
	}
	if reason, message, failed := firstFailure(in, consumerPreconditions); failed {
		return consumerOutcome{Phase: cephv1alpha1.StorageDegraded, Reason: reason, Message: message}, nil
	}
	place := in.place
	repl := place.Data
	out := consumerOutcome{Replication: &repl, CephWarning: &in.budget.Warning}
	if r.Kind.metadataPlacement != nil {
		out.Metadata = &place.Metadata
	}
	prev := obj.StorageStatus()
	specChanged := prev.ObservedGeneration != 0 && prev.ObservedGeneration != obj.GetGeneration()
	placed := PlacedOf(prev)
	if r.Kind.metadataPlacement == nil {
		placed.MetadataClass = placed.DeviceClass // no metadata pools: they go with the data
	}
	out.ReplicationChangeReason, out.ReplicationChange = DescribeReplicationChange(placed, place, specChanged)

	rook, err := r.ensureRookObject(ctx, obj, have, place)
	if err != nil {
		return out, err
	}
	// At once: the patch just written is what moved them, and the next
	// reconcile reads them on their new class.
	r.announceMetadataMove(obj, in.held, place, specChanged)
	raw, err := r.View.Capacity(ctx)
	if err != nil {
		return out, err
	}
	out.Capacity = UsableCapacity(raw.OnTier(in.tiers.Of(repl.DeviceClass)), repl.Size)
	out.CephBudget = PoolsOf(r.Kind.budgetOf(obj.GetName(), place, rook, true)).Use()
	if out.DefaultClass, err = r.defaultClass(ctx, obj); err != nil {
		return out, err
	}
	class := r.Kind.renderClass(obj, r.Config)
	if out.DefaultClass != nil && !out.DefaultClass.Held {
		delete(class.Annotations, DefaultClassAnnotation)
	}
	drift, err := ensureStorageClass(ctx, r.Client, in.class, class)
	if err != nil {
		return out, err
	}
	if len(drift) > 0 {
		out.Phase, out.Reason = cephv1alpha1.StorageDegraded, ReasonStorageClassDrift
		out.Message = StorageClassDriftMessage(class.Name, drift)
		return out, nil
	}
	out.StorageClassName = class.Name
	if r.Kind.renderSnapshotClass != nil {
		if out.SnapshotClass, err = r.ensureSnapshotClass(ctx, obj); err != nil {
			return out, err
		}
	}
	r.announceReplicationChange(obj, out.ReplicationChange)
	r.announceCephWarning(obj, *prev, *out.CephWarning)
	return r.rookProgress(ctx, rook, out)
}

// gather reads what the preconditions decide from: the CephCluster's
// presence, the node count, and the same-named Rook object and
// StorageClass (have is the Rook object as its own type, when there is
// one).
func (r *ConsumerReconciler[T, R]) gather(ctx context.Context, obj T) (in consumerInput, have R, err error) {
	in = consumerInput{uid: obj.GetUID(), rookKind: r.Kind.rookKind}
	devices, err := r.View.ClusterDevices(ctx)
	if apierrors.IsNotFound(err) {
		in.clusterMissing = err
		return in, have, nil
	} else if err != nil {
		return in, have, err
	}
	if in.tiers, err = r.View.Tiers(ctx); err != nil {
		return in, have, err
	}
	in.nodes = in.tiers.All.Nodes
	name := r.Kind.derivedName(obj.GetName())
	rook := r.Kind.newRook()
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Config.ClusterNamespace, Name: name}, rook); {
	case err == nil:
		in.rook, have = rook, rook
	case !apierrors.IsNotFound(err):
		return in, have, fmt.Errorf("read %s %s/%s: %w", r.Kind.rookKind, r.Config.ClusterNamespace, name, err)
	}
	// The copies our pools have now are the floor a device class keeps
	// them at (ClassCopies); a foreign object's are nothing of ours.
	if in.rook != nil && IsControlledBy(in.rook, in.uid) {
		in.held = r.Kind.held(have)
	}
	in.place, in.placeErr = r.Kind.Place(obj, in.tiers, in.held)
	class := &storagev1.StorageClass{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: name}, class); {
	case err == nil:
		in.class = class
	case !apierrors.IsNotFound(err):
		return in, have, fmt.Errorf("read StorageClass %s: %w", name, err)
	}
	// Checked at every reconcile: a consumer with a Rook object is never
	// refused (fitsCephBudgets), but what Ceph warns of changes with the
	// OSDs. Consumers are few (CRUSH rules cap them near 126), and all of
	// this is read from the cache.
	if in.budget, err = r.budget(ctx, obj, in.tiers, len(devices)); err != nil {
		return in, have, err
	}
	return in, have, nil
}

// rookProgress is the outcome once everything is written: Ready when
// Rook says so; otherwise Rook's failure from its Events, or Provisioning.
func (r *ConsumerReconciler[T, R]) rookProgress(ctx context.Context, rook R, out consumerOutcome) (consumerOutcome, error) {
	repl := out.Replication
	phase := r.Kind.rookPhase(rook)
	if phase == "Ready" {
		out.Phase, out.Reason = cephv1alpha1.StorageReady, ReasonReady
		out.Message = message.Join(repl.Message, defaultClassMessage(out.DefaultClass))
		return out, nil
	}
	// Rook's status says "Failure" at most, and between retries
	// "Progressing": its reason is only in its Events.
	why, err := r.rookFailure(ctx, rook)
	if err != nil {
		return out, err
	}
	if why != "" {
		out.Phase, out.Reason = cephv1alpha1.StorageDegraded, ReasonRookFailed
		out.Message = message.Join(fmt.Sprintf("Rook cannot reconcile %s %s/%s (it retries): %s",
			r.Kind.rookKind, rook.GetNamespace(), rook.GetName(), why), repl.Message)
		return out, nil
	}
	out.Phase, out.Reason = cephv1alpha1.StorageProvisioning, ReasonProvisioning
	out.Message = message.Join(fmt.Sprintf("waiting for %s %s/%s to be Ready (phase: %s)",
		r.Kind.rookKind, rook.GetNamespace(), rook.GetName(), message.OrNone(phase)), repl.Message, defaultClassMessage(out.DefaultClass))
	return out, nil
}

// rookFailure is why Rook's last reconcile of a Rook object failed, from
// its Events; empty when it did not, or no Event says.
func (r *ConsumerReconciler[T, R]) rookFailure(ctx context.Context, obj R) (string, error) {
	var events corev1.EventList
	if err := r.Live.List(ctx, &events, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{"involvedObject.uid": string(obj.GetUID())}); err != nil {
		return "", fmt.Errorf("read the Events of %s %s/%s: %w", r.Kind.rookKind, obj.GetNamespace(), obj.GetName(), err)
	}
	why, _ := rook.Failure(events.Items, obj.GetUID(), rook.Reporter(r.Kind.rookKind))
	return why, nil
}

// ensureRookObject creates the Rook object when there is none (have is
// nil), or patches the fields we own when they differ. The preconditions
// made sure an existing one is ours.
func (r *ConsumerReconciler[T, R]) ensureRookObject(ctx context.Context, obj T, have R, place Placement) (R, error) {
	want := r.Kind.renderRook(obj, r.Config, place)
	if any(have) == any(*new(R)) {
		for _, rec := range r.Kind.domainRecords() {
			patch.SetAnnotation(want, rec.annotation, rec.of(want))
		}
		if err := r.Client.Create(ctx, want); err != nil {
			return want, fmt.Errorf("create %s %s/%s: %w", r.Kind.rookKind, want.GetNamespace(), want.GetName(), err)
		}
		return want, nil
	}
	base, ok := have.DeepCopyObject().(R)
	if !ok {
		return have, fmt.Errorf("a copy of %s %s is a %T", r.Kind.rookKind, have.GetName(), have.DeepCopyObject())
	}
	// The history is recorded before the domain changes: the rule the
	// change leaves behind is counted even if this patch is the last
	// thing the plugin does.
	for _, rec := range r.Kind.domainRecords() {
		patch.SetAnnotation(have, rec.annotation, NextFailureDomains(rec.history(have), rec.of(have), rec.of(want)))
	}
	r.Kind.patchRook(have, want)
	labels := have.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[cephv1alpha1.ManagedByLabel] = cephv1alpha1.ManagedByValue
	have.SetLabels(labels)
	// Optimistic: the patch may replace a list (a filesystem's dataPools)
	// whole, and a stale read of it must not undo another writer's edit.
	if err := patch.IfChanged(ctx, r.Client, base, have, client.MergeFromWithOptimisticLock{}); err != nil {
		return have, fmt.Errorf("patch %s %s/%s: %w", r.Kind.rookKind, have.GetNamespace(), have.GetName(), err)
	}
	return have, nil
}

// defaultClass decides, for a consumer that asks for the cluster's default
// StorageClass, whether it gets it (DefaultClassHolder); nil when the
// consumer does not ask.
func (r *ConsumerReconciler[T, R]) defaultClass(ctx context.Context, obj T) (*defaultClassOutcome, error) {
	if !r.Kind.wantsDefault(obj) {
		return nil, nil
	}
	askers, err := r.defaultAskers(ctx)
	if err != nil {
		return nil, err
	}
	holder, ok := DefaultClassHolder(askers)
	if !ok || holder.GetUID() == obj.GetUID() {
		return &defaultClassOutcome{Held: true}, nil
	}
	return &defaultClassOutcome{Message: fmt.Sprintf("not the default StorageClass: older %s %s asked first and holds it",
		r.Kind.kind, holder.GetName())}, nil
}

// defaultAskers lists the consumers asking for the default class.
func (r *ConsumerReconciler[T, R]) defaultAskers(ctx context.Context) ([]T, error) {
	all, err := r.Kind.list(ctx, r.Client)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(o T) bool { return !r.Kind.wantsDefault(o) }), nil
}

func defaultClassMessage(d *defaultClassOutcome) string {
	if d == nil || d.Held {
		return ""
	}
	return d.Message
}

// announceReplicationChange makes a resize that moves data
// visible as an Event; the condition is set with the status.
func (r *ConsumerReconciler[T, R]) announceReplicationChange(obj T, change string) {
	if change == "" {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(EventReplicationChanged), "Resize", "%s", change)
}

// announceMetadataMove records a Warning Event when the patch just
// written moved the consumer's metadata pools to another class: held is
// where its Rook object had them (zero: it had none, so nothing moved).
// The patch was made from that object under an optimistic lock, so a
// stale read of it fails the patch instead of announcing a move twice.
func (r *ConsumerReconciler[T, R]) announceMetadataMove(obj T, held, place Placement, specChanged bool) {
	if r.Kind.metadataPools == nil || held.Metadata.Size == 0 {
		return
	}
	move := MetadataTierMove(r.Kind.metadataPools(obj.GetName()), held.Metadata.DeviceClass, place.Metadata.DeviceClass, specChanged)
	if move == "" {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(EventMetadataTierMoved), "Move", "%s", move)
}

// announceCephWarning records what Ceph warns of because of the
// consumer's pools once, as the CephWarning condition appears; the recorder
// bounds the note.
func (r *ConsumerReconciler[T, R]) announceCephWarning(obj T, prev cephv1alpha1.StorageStatus, warning string) {
	if warning == "" || meta.FindStatusCondition(prev.Conditions, ConditionCephWarning) != nil {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(EventTooManyPGs), "Create", "%s", warning)
}

func (r *ConsumerReconciler[T, R]) writeStatus(ctx context.Context, obj T, out consumerOutcome) error {
	prev := obj.StorageStatus()
	want := consumerStatus(*prev, out, obj.GetGeneration(), r.Clock.Now())
	if equality.Semantic.DeepEqual(*prev, want) {
		return nil
	}
	statusPatch := patch.Status(want)
	if err := r.Client.Status().Patch(ctx, obj, statusPatch); err != nil {
		return fmt.Errorf("write status of %s %s: %w", r.Kind.kind, obj.GetName(), err)
	}
	logf.FromContext(ctx).V(1).Info("status written", "phase", want.Phase, "message", want.Message)
	return nil
}

// byDerivedName maps a derived object (ours or in the way) back to the
// consumer its name belongs to.
func (r *ConsumerReconciler[T, R]) byDerivedName(namespace string) handler.MapFunc {
	prefix := r.Kind.derivedName("")
	return func(_ context.Context, o client.Object) []reconcile.Request {
		if o.GetNamespace() != namespace || !strings.HasPrefix(o.GetName(), prefix) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: strings.TrimPrefix(o.GetName(), prefix)}}}
	}
}

// all enqueues every consumer of the kind (the node count or the
// CephCluster's presence changed).
func (r *ConsumerReconciler[T, R]) all(ctx context.Context, _ client.Object) []reconcile.Request {
	consumers, err := r.Kind.list(ctx, r.Client)
	if err != nil {
		logf.FromContext(ctx).Error(err, "listing consumers", "kind", r.Kind.kind)
		return nil
	}
	return requestsFor(consumers)
}

// defaultClassRequesters enqueues every consumer asking for the default
// class when one asker comes, goes or changes its mind.
func (r *ConsumerReconciler[T, R]) defaultClassRequesters(ctx context.Context, _ client.Object) []reconcile.Request {
	askers, err := r.defaultAskers(ctx)
	if err != nil {
		logf.FromContext(ctx).Error(err, "listing default class askers")
		return nil
	}
	return requestsFor(askers)
}

func requestsFor[T client.Object](objs []T) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(objs))
	for _, o := range objs {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: o.GetName()}})
	}
	return reqs
}

// defaultRequestChanged passes the events that can move the default
// class: an asker created or deleted, a consumer starting or stopping to
// ask, an asker being deleted.
func (r *ConsumerReconciler[T, R]) defaultRequestChanged() predicate.Predicate {
	wants := func(o client.Object) bool {
		t, ok := r.Kind.asConsumer(o)
		return ok && r.Kind.wantsDefault(t)
	}
	return predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return wants(e.Object) },
		DeleteFunc: func(e event.DeleteEvent) bool { return wants(e.Object) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			return wants(e.ObjectOld) != wants(e.ObjectNew) ||
				(wants(e.ObjectNew) && e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero())
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// olderLive are the consumers older than obj and not being deleted, oldest
// first, as Rook met them: the first object store made the shared
// .rgw.root, whose first placement decides its rules (rgwRootRules), and
// the cache lists in no fixed order.
func olderLive(consumers []consumerObject, obj client.Object) []consumerObject {
	var older []consumerObject
	for _, c := range consumers {
		if c.GetDeletionTimestamp().IsZero() && cephv1alpha1.OlderFirst[client.Object](c, obj) < 0 {
			older = append(older, c)
		}
	}
	slices.SortFunc(older, cephv1alpha1.OlderFirst)
	return older
}

// budget checks obj against Ceph's budgets beside every older live
// consumer (cephv1alpha1.OlderFirst, the contested disks' rule), over osds, the devices
// the CephCluster lists (one OSD each), the union's tiers saying how many
// are of each class.
func (r *ConsumerReconciler[T, R]) budget(ctx context.Context, obj T, tiers Tiers, osds int) (BudgetVerdict, error) {
	var older []ConsumerBudget
	for _, kind := range consumerKinds {
		consumers, err := kind.List(ctx, r.Client)
		if err != nil {
			return BudgetVerdict{}, err
		}
		for _, c := range olderLive(consumers, obj) {
			// The rules a moved failure domain left behind count too.
			b, err := kind.Budget(ctx, r.Client, r.Config.ClusterNamespace, c, tiers)
			if err != nil {
				return BudgetVerdict{}, err
			}
			older = append(older, b)
		}
	}
	me, err := r.Kind.Budget(ctx, r.Client, r.Config.ClusterNamespace, obj, tiers)
	if err != nil {
		return BudgetVerdict{}, err
	}
	return CheckBudget(older, me, osds, tiers, CephBudgetLimits(r.Config.CephMaxPGPerOSD)), nil
}
