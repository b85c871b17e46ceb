package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// clusterHealthReconciler makes the plugin's own status follow the storage
// cluster: degraded, with the CephCluster's message, while it reports
// Failure or HEALTH_ERR; running otherwise.
type clusterHealthReconciler struct {
	Client  client.Client
	Cluster types.NamespacedName
	Host    pluginruntime.Host
}

func (r *clusterHealthReconciler) SetupWithManager(mgr manager.Manager) error {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephClusterGVK)
	return builder.ControllerManagedBy(mgr).
		Named("clusterhealth").
		For(cluster, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Cluster.Namespace && o.GetName() == r.Cluster.Name
		}), healthChanged())).
		Complete(r)
}

func (r *clusterHealthReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	cluster := &unstructured.Unstructured{}
	cluster.SetGroupVersionKind(cephClusterGVK)
	if err := r.Client.Get(ctx, r.Cluster, cluster); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	r.Host.ReportStatus(PluginStatusForCluster(cluster))
	return reconcile.Result{}, nil
}

// healthChanged passes CephCluster updates that change what the plugin's
// status is computed from, not every device-list patch.
func healthChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldU, okOld := e.ObjectOld.(*unstructured.Unstructured)
		newU, okNew := e.ObjectNew.(*unstructured.Unstructured)
		return !okOld || !okNew || PluginStatusForCluster(oldU) != PluginStatusForCluster(newU)
	}}
}

// PluginStatusForCluster is the plugin status a CephCluster's status implies.
func PluginStatusForCluster(cluster *unstructured.Unstructured) pluginruntime.PluginStatus {
	phase, _, _ := unstructured.NestedString(cluster.Object, "status", "phase")
	health, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "health")
	message, _, _ := unstructured.NestedString(cluster.Object, "status", "message")
	if phase == "Failure" || health == "HEALTH_ERR" {
		if message == "" {
			message = fmt.Sprintf("CephCluster %s/%s reports phase %q, health %q", cluster.GetNamespace(), cluster.GetName(), phase, health)
		}
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "storage cluster: " + message}
	}
	return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}
}
