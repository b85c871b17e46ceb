package main

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/fundament-oss/ceph-rook/internal/patch"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// snapshotClassOutcome is what a reconcile concluded of a consumer's
// VolumeSnapshotClass: its SnapshotClass condition, and the class's name
// when it is the consumer's and in place.
type snapshotClassOutcome struct {
	Name    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// snapshotClassWatch starts the watch of VolumeSnapshotClasses once their
// CRD serves v1. It cannot be set up with the controller: a watch of a
// kind the API server does not serve fails the manager's start, and the
// snapshot CRDs may be installed at any time after the plugin.
type snapshotClassWatch struct {
	mu      sync.Mutex
	started bool
	ctrl    controller.Controller
	cache   cache.Cache
	mapFunc handler.MapFunc
}

func (w *snapshotClassWatch) ensure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return nil
	}
	src := source.Kind[client.Object](w.cache, &snapshotv1.VolumeSnapshotClass{}, handler.EnqueueRequestsFromMapFunc(w.mapFunc))
	if err := w.ctrl.Watch(src); err != nil {
		return fmt.Errorf("watch VolumeSnapshotClasses: %w", err)
	}
	w.started = true
	return nil
}

// watchSnapshotAPI adds what brings a consumer back when its snapshot
// class's circumstances change: the snapshot CRD coming, going or changing
// its versions (metadata only: the full CRDs of the cluster are large),
// and a snapshot controller starting or stopping to lead.
func (r *ConsumerReconciler[T, R]) watchSnapshotAPI(b *builder.Builder) *builder.Builder {
	named := func(name string) predicate.Predicate {
		return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == name })
	}
	return b.
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, handler.EnqueueRequestsFromMapFunc(r.all),
			builder.WithPredicates(named(SnapshotClassCRD))).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(r.all),
			builder.WithPredicates(named(SnapshotControllerLease), holderChanged()))
}

// holderChanged passes a Lease's creation and deletion and a change of its
// holder, not its renewals (every few seconds).
func holderChanged() predicate.Predicate {
	holder := func(o client.Object) string {
		if l, ok := o.(*coordinationv1.Lease); ok && l.Spec.HolderIdentity != nil {
			return *l.Spec.HolderIdentity
		}
		return ""
	}
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool { return holder(e.ObjectOld) != holder(e.ObjectNew) },
	}
}

// ensureSnapshotClass creates the consumer's VolumeSnapshotClass, or
// restores the fields of its own that someone edited; it never touches a
// class it does not control. The snapshot API's absence is an outcome, not
// an error: the consumer's volumes work without snapshots.
func (r *ConsumerReconciler[T, R]) ensureSnapshotClass(ctx context.Context, obj T) (*snapshotClassOutcome, error) {
	crd, err := r.snapshotCRD(ctx)
	if err != nil {
		return nil, err
	}
	if reason, message, refused := SnapshotAPIRefusal(crd); refused {
		return &snapshotClassOutcome{Status: metav1.ConditionFalse, Reason: reason, Message: message}, nil
	}
	if err := r.snapshotClasses.ensure(); err != nil {
		return nil, err
	}
	want := r.Kind.renderSnapshotClass(obj, r.Config)
	have := &snapshotv1.VolumeSnapshotClass{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: want.Name}, have); {
	case apierrors.IsNotFound(err):
		if err := r.Client.Create(ctx, want); err != nil {
			return nil, fmt.Errorf("create VolumeSnapshotClass %s: %w", want.Name, err)
		}
	case err != nil:
		return nil, fmt.Errorf("read VolumeSnapshotClass %s: %w", want.Name, err)
	case !IsControlledBy(have, obj.GetUID()):
		return &snapshotClassOutcome{Status: metav1.ConditionFalse, Reason: ReasonForeignObject,
			Message: foreignMessage("VolumeSnapshotClass " + want.Name)}, nil
	default:
		if err := r.restoreSnapshotClass(ctx, obj, have, want); err != nil {
			return nil, err
		}
	}
	return r.snapshotControllerOutcome(ctx, want)
}

// snapshotCRD is the CRD serving VolumeSnapshotClasses, nil when there is
// none. It is read from the API server: only its metadata is cached.
func (r *ConsumerReconciler[T, R]) snapshotCRD(ctx context.Context) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	switch err := r.Live.Get(ctx, client.ObjectKey{Name: SnapshotClassCRD}, crd); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read CRD %s: %w", SnapshotClassCRD, err)
	}
	return crd, nil
}

// restoreSnapshotClass puts back what someone changed in a class of ours,
// and says so in an Event.
func (r *ConsumerReconciler[T, R]) restoreSnapshotClass(ctx context.Context, obj T, have, want *snapshotv1.VolumeSnapshotClass) error {
	drift := SnapshotClassDrift(want, have)
	if len(drift) == 0 {
		return nil
	}
	base := have.DeepCopy()
	have.Driver, have.DeletionPolicy, have.Parameters = want.Driver, want.DeletionPolicy, want.Parameters
	if have.Labels == nil {
		have.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		have.Labels[k] = v
	}
	if err := patch.IfChanged(ctx, r.Client, base, have, client.MergeFromWithOptimisticLock{}); err != nil {
		return fmt.Errorf("restore VolumeSnapshotClass %s: %w", have.Name, err)
	}
	r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(EventSnapshotClassRestored), "Update",
		"VolumeSnapshotClass %s was edited (%s): restored", have.Name, strings.Join(drift, "; "))
	return nil
}

// snapshotControllerOutcome is the outcome once the class is in place:
// Ready when a snapshot controller leads, Unknown when none was seen (one
// may run without leader election, which leaves no trace).
func (r *ConsumerReconciler[T, R]) snapshotControllerOutcome(ctx context.Context, class *snapshotv1.VolumeSnapshotClass) (*snapshotClassOutcome, error) {
	var leases coordinationv1.LeaseList
	if err := r.Client.List(ctx, &leases); err != nil {
		return nil, fmt.Errorf("read the snapshot controller's Lease: %w", err)
	}
	out := &snapshotClassOutcome{Name: class.Name, Status: metav1.ConditionTrue, Reason: ReasonSnapshotClassReady,
		Message: fmt.Sprintf("VolumeSnapshotClass %s (driver %s, deletionPolicy %s) is in place", class.Name, class.Driver, class.DeletionPolicy)}
	if !SnapshotControllerLeads(leases.Items) {
		out.Status, out.Reason = metav1.ConditionUnknown, ReasonNoSnapshotController
		out.Message += fmt.Sprintf(", but no snapshot controller was seen leading (no Lease %s has a holder): VolumeSnapshots stay unready until one runs", SnapshotControllerLease)
	}
	return out, nil
}
