package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
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
)

// provisioningBackstop re-checks a Provisioning consumer even though the
// Rook object is watched: a missed event must not leave it stuck forever.
const provisioningBackstop = 5 * time.Minute

// ConsumerReconciler turns a BlockStorage, FileStorage or ObjectStorage into
// its Rook object and StorageClass (one generic type, one registration per
// kind). It never adopts an object it does not control.
type ConsumerReconciler struct {
	Client client.Client
	Kind   consumerKind
	Config Config
	// View is the plugin's view of the storage cluster (a *ClusterView):
	// whether the CephCluster is there, and the node count replication is
	// sized for.
	View     consumerView
	Recorder events.EventRecorder
	Now      func() time.Time
	// Events reads Rook's Events about a Rook object that is not Ready,
	// from the API server (the manager's API reader): they are wanted
	// only then, and a cluster-wide Event cache would be large.
	Events client.Reader
}

// consumerView is what a consumer reads of the ClusterView.
type consumerView interface {
	// ClusterDevices fails with NotFound when the CephCluster is missing.
	ClusterDevices(context.Context) (map[DeviceID]bool, error)
	Nodes(context.Context) (int, error)
	// Subscribe is told when the node count or the CephCluster's presence
	// changes.
	Subscribe() <-chan event.GenericEvent
}

// SetupWithManager watches the consumer kind, its derived objects by name
// (so a foreign object in the way, and its removal, are noticed too) and
// changes of the union's node count.
func (r *ConsumerReconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Now == nil {
		r.Now = time.Now
	}
	b := builder.ControllerManagedBy(mgr).
		Named(strings.ToLower(r.Kind.Kind)).
		For(r.Kind.NewObject(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(r.Kind.NewRookObject(), handler.EnqueueRequestsFromMapFunc(r.byDerivedName(r.Config.ClusterNamespace))).
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.byDerivedName(""))).
		WatchesRawSource(source.Channel(r.View.Subscribe(), handler.EnqueueRequestsFromMapFunc(r.all)))
	if r.Kind.Kind == blockStorageKind.Kind {
		b = b.Watches(r.Kind.NewObject(), handler.EnqueueRequestsFromMapFunc(r.defaultClassRequesters),
			builder.WithPredicates(defaultRequestChanged()))
	}
	return b.Complete(r)
}

// Reconcile derives the Rook object and StorageClass and writes status.
func (r *ConsumerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.Kind.NewObject()
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
		out = consumerOutcome{Phase: cephv1alpha1.StorageDegraded, Reason: ReasonReconcileError, Message: err.Error(), Replication: out.Replication}
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

// derive runs the consumer's preconditions in order (the first that fails
// names the Degraded reason), then creates or patches what it derives.
func (r *ConsumerReconciler) derive(ctx context.Context, obj client.Object) (consumerOutcome, error) {
	// Nothing derived works without the CephCluster: the error names it in
	// status, and the retry notices its return.
	if _, err := r.View.ClusterDevices(ctx); err != nil {
		return consumerOutcome{}, err
	}
	nodes, err := r.View.Nodes(ctx)
	if err != nil {
		return consumerOutcome{}, err
	}
	repl, err := ComputeReplication(r.Kind.Replicas(obj), nodes)
	if errors.Is(err, ErrNoDisks) {
		return consumerOutcome{Phase: cephv1alpha1.StorageDegraded, Reason: ReasonNoDisks, Message: ErrNoDisks.Error()}, nil
	}
	if err != nil {
		return consumerOutcome{}, err
	}
	out := consumerOutcome{Replication: &repl}
	prev := r.Kind.Status(obj)
	specChanged := prev.ObservedGeneration != 0 && prev.ObservedGeneration != obj.GetGeneration()
	out.ReplicationChangeReason, out.ReplicationChange = DescribeReplicationChange(prev.Replicas, prev.FailureDomain, repl, specChanged)

	rook, foreign, err := r.ensureRookObject(ctx, obj, repl)
	if err != nil || foreign != "" {
		return degradedByForeign(out, foreign), err
	}
	if out.DefaultClass, err = r.defaultClass(ctx, obj); err != nil {
		return out, err
	}
	class := r.Kind.RenderClass(obj, r.Config)
	if out.DefaultClass != nil && !out.DefaultClass.Held {
		delete(class.Annotations, DefaultClassAnnotation)
	}
	classResult, err := ensureStorageClass(ctx, r.Client, obj.GetUID(), class)
	if err != nil {
		return out, err
	}
	switch {
	case classResult.Foreign != "":
		return degradedByForeign(out, classResult.Foreign), nil
	case len(classResult.Drift) > 0:
		out.Phase, out.Reason = cephv1alpha1.StorageDegraded, ReasonStorageClassDrift
		out.Message = StorageClassDriftMessage(class.Name, classResult.Drift)
		return out, nil
	}
	out.StorageClassName = class.Name
	r.announceReplicationChange(obj, out.ReplicationChange)

	phase := r.Kind.RookPhase(rook)
	if phase == "Ready" {
		out.Phase, out.Reason = cephv1alpha1.StorageReady, ReasonReady
		out.Message = joinSentences(repl.Message, defaultClassMessage(out.DefaultClass))
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
		out.Message = joinSentences(fmt.Sprintf("Rook cannot reconcile %s %s/%s (it retries): %s",
			r.Kind.RookKind, rook.GetNamespace(), rook.GetName(), why), repl.Message)
		return out, nil
	}
	out.Phase, out.Reason = cephv1alpha1.StorageProvisioning, ReasonProvisioning
	out.Message = joinSentences(fmt.Sprintf("waiting for %s %s/%s to be Ready (phase: %s)",
		r.Kind.RookKind, r.Config.ClusterNamespace, rook.GetName(), orNone(phase)), repl.Message, defaultClassMessage(out.DefaultClass))
	return out, nil
}

// rookFailure is why Rook's last reconcile of a Rook object failed, from
// its Events; empty when it did not, or no Event says.
func (r *ConsumerReconciler) rookFailure(ctx context.Context, rook client.Object) (string, error) {
	var events corev1.EventList
	if err := r.Events.List(ctx, &events, client.InNamespace(rook.GetNamespace()),
		client.MatchingFields{"involvedObject.uid": string(rook.GetUID())}); err != nil {
		return "", fmt.Errorf("read the Events of %s %s/%s: %w", r.Kind.RookKind, rook.GetNamespace(), rook.GetName(), err)
	}
	why, _ := RookFailure(events.Items, rook.GetUID())
	return why, nil
}

func degradedByForeign(out consumerOutcome, foreign string) consumerOutcome {
	if foreign == "" {
		return out
	}
	out.Phase, out.Reason = cephv1alpha1.StorageDegraded, ReasonForeignObject
	out.Message = foreign + " already exists and is not owned by this resource; it is left untouched: delete or rename it"
	return out
}

// ensureRookObject creates the Rook object, or patches the fields we own
// when they differ. A same-named object we do not control is reported,
// never touched.
func (r *ConsumerReconciler) ensureRookObject(ctx context.Context, obj client.Object, repl Replication) (client.Object, string, error) {
	want := r.Kind.RenderRook(obj, r.Config, repl)
	have := r.Kind.NewRookObject()
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), have)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return nil, "", fmt.Errorf("create %s %s/%s: %w", r.Kind.RookKind, want.GetNamespace(), want.GetName(), err)
		}
		return want, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("read %s %s/%s: %w", r.Kind.RookKind, want.GetNamespace(), want.GetName(), err)
	}
	if !IsControlledBy(have, obj.GetUID()) {
		return nil, fmt.Sprintf("%s %s/%s", r.Kind.RookKind, have.GetNamespace(), have.GetName()), nil
	}
	base := have.DeepCopyObject().(client.Object)
	r.Kind.PatchRook(have, want)
	labels := have.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[ManagedByLabel] = ManagedByValue
	have.SetLabels(labels)
	// Optimistic: the patch may replace a list (a filesystem's dataPools)
	// whole, and a stale read of it must not undo another writer's edit.
	if err := patchIfChanged(ctx, r.Client, base, have, client.MergeFromWithOptimisticLock{}); err != nil {
		return nil, "", fmt.Errorf("patch %s %s/%s: %w", r.Kind.RookKind, have.GetNamespace(), have.GetName(), err)
	}
	return have, "", nil
}

// patchIfChanged sends the merge patch from base to obj, or nothing when
// the two are equal: an unchanged object costs no write. opts apply to the
// patch sent (an optimistic lock, say), not to the comparison.
func patchIfChanged(ctx context.Context, c client.Client, base, obj client.Object, opts ...client.MergeFromOption) error {
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return err
	}
	if string(data) == "{}" {
		return nil
	}
	return c.Patch(ctx, obj, client.MergeFromWithOptions(base, opts...))
}

// defaultClass decides, for a consumer that asks for the cluster's default
// StorageClass, whether it gets it: the oldest asker (ties on name) does.
func (r *ConsumerReconciler) defaultClass(ctx context.Context, obj client.Object) (*defaultClassOutcome, error) {
	if !r.Kind.WantsDefaultClass(obj) {
		return nil, nil
	}
	askers, err := r.defaultAskers(ctx)
	if err != nil {
		return nil, err
	}
	if len(askers) == 0 || askers[0].GetUID() == obj.GetUID() {
		return &defaultClassOutcome{Held: true}, nil
	}
	return &defaultClassOutcome{Message: fmt.Sprintf("not the default StorageClass: older %s %s asked first and holds it",
		r.Kind.Kind, askers[0].GetName())}, nil
}

// defaultAskers lists the live consumers asking for the default class,
// oldest first.
func (r *ConsumerReconciler) defaultAskers(ctx context.Context) ([]client.Object, error) {
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list); err != nil {
		return nil, err
	}
	var askers []client.Object
	eachObject(list, func(o client.Object) {
		if o.GetDeletionTimestamp().IsZero() && r.Kind.WantsDefaultClass(o) {
			askers = append(askers, o)
		}
	})
	sort.Slice(askers, func(i, j int) bool {
		a, b := askers[i].GetCreationTimestamp(), askers[j].GetCreationTimestamp()
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return askers[i].GetName() < askers[j].GetName()
	})
	return askers, nil
}

func defaultClassMessage(d *defaultClassOutcome) string {
	if d == nil || d.Held {
		return ""
	}
	return d.Message
}

// announceReplicationChange makes a resize that moves data
// visible as an Event; the condition is set with the status.
func (r *ConsumerReconciler) announceReplicationChange(obj client.Object, change string) {
	if change == "" || r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "ReplicationChanged", "Resize", "%s", change)
}

func (r *ConsumerReconciler) writeStatus(ctx context.Context, obj client.Object, out consumerOutcome) error {
	prev := r.Kind.Status(obj)
	want := consumerStatus(*prev, out, obj.GetGeneration(), r.Now())
	if equality.Semantic.DeepEqual(*prev, want) {
		return nil
	}
	patch := statusPatch(want)
	if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("write status of %s %s: %w", r.Kind.Kind, obj.GetName(), err)
	}
	logf.FromContext(ctx).V(1).Info("status written", "phase", want.Phase, "message", want.Message)
	return nil
}

// byDerivedName maps a derived object (ours or in the way) back to the
// consumer its name belongs to.
func (r *ConsumerReconciler) byDerivedName(namespace string) handler.MapFunc {
	prefix := r.Kind.DerivedName("")
	return func(_ context.Context, o client.Object) []reconcile.Request {
		if o.GetNamespace() != namespace || !strings.HasPrefix(o.GetName(), prefix) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: strings.TrimPrefix(o.GetName(), prefix)}}}
	}
}

// all enqueues every consumer of the kind (the union's node count changed).
func (r *ConsumerReconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list); err != nil {
		logf.FromContext(ctx).Error(err, "listing consumers", "kind", r.Kind.Kind)
		return nil
	}
	var reqs []reconcile.Request
	eachObject(list, func(o client.Object) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: o.GetName()}})
	})
	return reqs
}

// defaultClassRequesters enqueues every consumer asking for the default
// class when one asker comes, goes or changes its mind.
func (r *ConsumerReconciler) defaultClassRequesters(ctx context.Context, _ client.Object) []reconcile.Request {
	askers, err := r.defaultAskers(ctx)
	if err != nil {
		logf.FromContext(ctx).Error(err, "listing default class askers")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(askers))
	for _, a := range askers {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Name: a.GetName()}})
	}
	return reqs
}

func defaultRequestChanged() predicate.Predicate {
	wants := func(o client.Object) bool { return blockStorageKind.WantsDefaultClass(o) }
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

func eachObject(list client.ObjectList, fn func(client.Object)) {
	switch l := list.(type) {
	case *cephv1alpha1.BlockStorageList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	case *cephv1alpha1.FileStorageList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	case *cephv1alpha1.ObjectStorageList:
		for i := range l.Items {
			fn(&l.Items[i])
		}
	}
}

func joinSentences(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
