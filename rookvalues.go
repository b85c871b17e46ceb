package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CephClusterName is the name of the one CephCluster per cluster; every
// DiskPool feeds it and every consumer's Rook object sits on it.
const CephClusterName = "rook-ceph"

// RookChartName is the operator chart in the chart repository.
const RookChartName = "rook-ceph"

// DiscoveryInterval is how often the discovery daemon re-probes, on top of
// udev events. Rook's default of 60m leaves a new disk invisible for up to
// an hour after an operator plugs it in; five minutes is cheap by comparison.
const DiscoveryInterval = "5m"

// dataDirHostPath is where Rook keeps mon and config state on each node.
const dataDirHostPath = "/var/lib/rook"

// ManagedByLabel marks every object the plugin renders.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "fundament-ceph-rook"
)

// RookValues are the Helm values for the Rook operator chart.
//
//   - enableDiscoveryDaemon: discovery's ConfigMaps are the Disk inventory.
//   - discoveryDaemonInterval: see DiscoveryInterval.
//   - allowLoopDevices: only in the dev loop-device mode; on a real node a
//     loop device is somebody's image file.
//   - crds.enabled: the chart installs Rook's CRDs.
//   - enableOBCWatchOperatorNamespace: the chart default, set explicitly;
//     the bucket provisioner is named after the CephCluster namespace
//     either way.
//
// The CSI driver and bucket provisioner name prefixes (csi.csiDriverNamePrefix,
// obcProvisionerNamePrefix) are left at the chart's defaults: the
// StorageClass renderers depend on them.
func RookValues(cfg Config) map[string]any {
	return map[string]any{
		"crds":                            map[string]any{"enabled": true},
		"enableDiscoveryDaemon":           true,
		"discoveryDaemonInterval":         DiscoveryInterval,
		"allowLoopDevices":                cfg.DevLoopDevices,
		"enableOBCWatchOperatorNamespace": true,
	}
}

// BootstrapCephCluster is the singleton CephCluster the plugin creates at
// install. It selects no devices: useAllNodes and useAllDevices are false
// so Ceph never takes a disk nobody chose, and the DiskPool reconciler fills
// spec.storage.nodes from the disk union (RenderStorageNodes).
func BootstrapCephCluster(cfg Config) *cephv1.CephCluster {
	return &cephv1.CephCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      CephClusterName,
			Namespace: cfg.ClusterNamespace,
			Labels:    map[string]string{ManagedByLabel: ManagedByValue},
		},
		Spec: cephv1.ClusterSpec{
			CephVersion:     cephv1.CephVersionSpec{Image: cfg.CephImage},
			DataDirHostPath: dataDirHostPath,
			Mon:             cephv1.MonSpec{Count: cfg.MonCount, AllowMultiplePerNode: cfg.AllowMultiplePerNode},
			Mgr:             cephv1.MgrSpec{Count: cfg.MgrCount, AllowMultiplePerNode: cfg.AllowMultiplePerNode},
			Dashboard:       cephv1.DashboardSpec{Enabled: true},
			Storage: cephv1.StorageScopeSpec{
				UseAllNodes: false,
				Selection:   cephv1.Selection{UseAllDevices: ptrTo(false)},
			},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }
