package main

import (
	"context"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

// Rook's names around its discovery daemon (Rook v1.18,
// pkg/operator/discover/discover.go and pkg/operator/ceph/controller).
const (
	RookDiscoverDaemonSet   = "rook-discover"
	RookOperatorConfigMap   = "rook-ceph-operator-config"
	rookAllowLoopDevicesEnv = "CEPH_VOLUME_ALLOW_LOOP_DEVICES"
)

// DiscoveryMissesLoopDevices says whether Rook's discovery DaemonSet was
// built without loop devices allowed. Rook v1.18 rebuilds the DaemonSet
// before it reads ROOK_CEPH_ALLOW_LOOP_DEVICES from its config
// (pkg/operator/ceph/controller.go, ReconcileConfig.reconcile calls
// reconcileDiscoveryDaemon, then SetAllowLoopDevices), so after an operator
// start the first DaemonSet lists no loop devices, and nothing makes Rook
// reconcile its config again. Seen on the e2e cluster.
func DiscoveryMissesLoopDevices(ds *appsv1.DaemonSet) bool {
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == rookAllowLoopDevicesEnv && e.Value == "true" {
				return false
			}
		}
	}
	return true
}

// LoopDiscoveryReconciler runs only in the dev loop-device mode. When
// Rook's discovery DaemonSet misses loop devices, it touches Rook's config
// ConfigMap (an annotation naming the DaemonSet generation), which makes
// Rook reconcile its config once more, now with loop devices allowed.
type LoopDiscoveryReconciler struct {
	Client    client.Client
	Namespace string
}

func (r *LoopDiscoveryReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ds := &appsv1.DaemonSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, ds); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if !DiscoveryMissesLoopDevices(ds) {
		return reconcile.Result{}, nil
	}
	config := &corev1.ConfigMap{}
	config.Namespace, config.Name = r.Namespace, RookOperatorConfigMap
	body := patch.Merge(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		cephv1alpha1.ReconcileForLoopDevicesAnnotation: strconv.FormatInt(ds.Generation, 10),
	}}})
	if err := r.Client.Patch(ctx, config, body); err != nil {
		return reconcile.Result{}, fmt.Errorf("ask Rook to apply its loop-device setting: %w", client.IgnoreNotFound(err))
	}
	return reconcile.Result{}, nil
}

func (r *LoopDiscoveryReconciler) SetupWithManager(mgr ctrl.Manager) error {
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetName() == RookDiscoverDaemonSet
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("loopdiscovery").
		For(&appsv1.DaemonSet{}, builder.WithPredicates(ours)).
		Complete(r)
}
