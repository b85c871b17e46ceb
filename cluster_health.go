package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// clusterHealthReconciler makes the plugin's own status follow the storage
// cluster: degraded, with the CephCluster's message, while it reports
// Failure or HEALTH_ERR, is being deleted, or is gone; running otherwise,
// saying what Ceph warns about under HEALTH_WARN.
type clusterHealthReconciler struct {
	Client  client.Client
	Cluster types.NamespacedName
	Host    pluginruntime.Host
	// Presence is told when the CephCluster comes or goes
	// (ClusterView.Subscribe): a CephCluster missing at start-up sends no
	// event of its own.
	Presence <-chan event.GenericEvent
}

func (r *clusterHealthReconciler) SetupWithManager(mgr manager.Manager) error {
	cluster := newCephClusterObject()
	return builder.ControllerManagedBy(mgr).
		Named("clusterhealth").
		For(cluster, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.Cluster.Namespace && o.GetName() == r.Cluster.Name
		}), healthChanged())).
		WatchesRawSource(source.Channel(r.Presence, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: r.Cluster}}
		}))).
		Complete(r)
}

func (r *clusterHealthReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	cluster := newCephClusterObject()
	err := r.Client.Get(ctx, r.Cluster, cluster)
	if apierrors.IsNotFound(err) {
		r.Host.ReportStatus(PluginStatusForMissingCluster(r.Cluster))
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, err
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

// PluginStatusForMissingCluster is the plugin's status while its
// CephCluster does not exist: loud, since every disk and consumer waits on
// it, and saying what the operator can do (see ensureCephCluster for why
// the plugin does not create it again).
func PluginStatusForMissingCluster(cluster types.NamespacedName) pluginruntime.PluginStatus {
	return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: fmt.Sprintf(
		"storage cluster: CephCluster %s was deleted and is not created again (a new cluster would not own the OSDs on the disks); "+
			"to recover, restore it with the rook-ceph-mon Secret and rook-ceph-mon-endpoints ConfigMap it owned, Secret and ConfigMap first (Rook's disaster recovery); "+
			"to start over, wipe the disks and %s on every node, delete ConfigMap %s/%s and restart the plugin",
		cluster, dataDirHostPath, cluster.Namespace, ClusterRecordName)}
}

// PluginStatusForCluster is the plugin status a CephCluster implies.
func PluginStatusForCluster(cluster *unstructured.Unstructured) pluginruntime.PluginStatus {
	if cluster.GetDeletionTimestamp() != nil {
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: fmt.Sprintf(
			"storage cluster: CephCluster %s/%s is being deleted (Rook holds it while pools, filesystems or object stores use it); once gone it is not created again",
			cluster.GetNamespace(), cluster.GetName())}
	}
	phase, _, _ := unstructured.NestedString(cluster.Object, "status", "phase")
	health, _, _ := unstructured.NestedString(cluster.Object, "status", "ceph", "health")
	message, _, _ := unstructured.NestedString(cluster.Object, "status", "message")
	if phase == "Failure" || health == "HEALTH_ERR" {
		if message == "" {
			message = fmt.Sprintf("CephCluster %s/%s reports phase %q, health %q", cluster.GetNamespace(), cluster.GetName(), phase, health)
		}
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "storage cluster: " + message}
	}
	if health == "HEALTH_WARN" {
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: runningStatus.Message + "; " + cephWarning(cluster)}
	}
	return runningStatus
}

// cephWarning says what Ceph warns about, as Rook copies it into the
// CephCluster's status: each health check by name with its message, sorted
// by name. A warning leaves the storage serving (an OSD or a mon down, PGs
// degraded while Ceph re-replicates), so the plugin stays running, but the
// platform's view of the plugin says what Ceph says.
func cephWarning(cluster *unstructured.Unstructured) string {
	details, _, _ := unstructured.NestedMap(cluster.Object, "status", "ceph", "details")
	checks := make([]string, 0, len(details))
	for _, name := range slices.Sorted(maps.Keys(details)) {
		message, _, _ := unstructured.NestedString(details, name, "message")
		checks = append(checks, name+": "+message)
	}
	if len(checks) == 0 {
		return "Ceph reports HEALTH_WARN"
	}
	return message.Bound("Ceph reports HEALTH_WARN (" + strings.Join(checks, "; ") + ")")
}
