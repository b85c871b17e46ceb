package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

// DiskPoolStatusReconciler is the second of the DiskPools' two jobs: it
// writes each pool's status from what the device-list job last computed
// (the ClusterView's snapshot). Its only work items are the pools that job
// hands on, so a status never runs ahead of the CephCluster: a pool says
// Ready once its disks were patched in, not before.
type DiskPoolStatusReconciler struct {
	Client client.Client
	View   *ClusterView
	// Pools is where the device-list job hands on the pools to write.
	Pools <-chan event.GenericEvent
	Clock clock.PassiveClock
}

// SetupWithManager registers the controller.
func (r *DiskPoolStatusReconciler) SetupWithManager(mgr manager.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return builder.ControllerManagedBy(mgr).
		Named("diskpool-status").
		WatchesRawSource(source.Channel(r.Pools, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// Reconcile writes one pool's status.
func (r *DiskPoolStatusReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	snapshot := r.View.snapshot()
	if snapshot == nil {
		return reconcile.Result{}, nil // the device-list job's first run hands every pool on
	}
	var pool cephv1alpha1.DiskPool
	if err := r.Client.Get(ctx, client.ObjectKey{Name: req.Name}, &pool); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	report, ok := snapshot.reports[pool.Name]
	if !pool.DeletionTimestamp.IsZero() || !ok || report.Generation != pool.Generation {
		// Being deleted, edited since the snapshot, or found to agree by a
		// later job: the device-list job hands the pool on again if need be.
		return reconcile.Result{}, nil
	}
	ref := &cephv1alpha1.ObjectReference{Namespace: r.View.Cluster.Namespace, Name: r.View.Cluster.Name}
	want := report.DiskPoolStatus(pool.Status, ref, r.Clock.Now())
	if equality.Semantic.DeepEqual(pool.Status, want) {
		return reconcile.Result{}, nil
	}
	if err := r.Client.Status().Patch(ctx, &pool, patch.Status(want)); err != nil {
		return reconcile.Result{}, fmt.Errorf("write status of DiskPool %s: %w", pool.Name, err)
	}
	return reconcile.Result{}, nil
}
