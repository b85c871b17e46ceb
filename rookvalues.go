package main

import (
	"slices"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CephClusterName is the name of the one CephCluster per cluster; every
// DiskPool feeds it and every consumer's Rook object sits on it.
const CephClusterName = "rook-ceph"

// DiscoveryInterval is how often the discovery daemon re-probes, on top of
// udev events. Rook's default of 60m leaves a new disk invisible for up to
// an hour after an operator plugs it in; five minutes is cheap by comparison.
const DiscoveryInterval = "5m"

// dataDirHostPath is where Rook keeps mon and config state on each node.
const dataDirHostPath = "/var/lib/rook"

// RookValues are the Helm values for the Rook operator chart.
//
//   - enableDiscoveryDaemon: discovery's ConfigMaps are the Disk inventory.
//   - discoveryDaemonInterval: see DiscoveryInterval.
//   - allowLoopDevices: only in the dev loop-device mode; on a real node a
//     loop device is somebody's image file.
//   - crds.enabled: the chart installs Rook's CRDs.
//   - enableOBCWatchOperatorNamespace: the chart default, set explicitly,
//     because the bucket provisioner's name depends on it: true makes it
//     <CephCluster namespace>.ceph.rook.io/bucket, the name the bucket
//     StorageClasses carry (BucketProvisioner); false would make it plain
//     ceph.rook.io/bucket (pkg/operator/ceph/object,
//     GetObjectBucketProvisioner).
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
	cluster := &cephv1.CephCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      CephClusterName,
			Namespace: cfg.ClusterNamespace,
			Labels:    map[string]string{cephv1alpha1.ManagedByLabel: cephv1alpha1.ManagedByValue},
		},
		Spec: cephv1.ClusterSpec{
			DataDirHostPath: dataDirHostPath,
			Dashboard:       cephv1.DashboardSpec{Enabled: true},
			Storage: cephv1.StorageScopeSpec{
				UseAllNodes: false,
				Selection:   cephv1.Selection{UseAllDevices: ptrTo(false)},
			},
		},
	}
	ApplyClusterSettings(&cluster.Spec, cfg)
	return cluster
}

// ApplyClusterSettings sets the CephCluster fields the configuration owns:
// the Ceph image, the mon and mgr counts and whether metrics run; and
// allowDeviceClassUpdate, which keeps CRUSH's classes as prepared. On a
// CephCluster the plugin created they follow the configuration at every
// start, so that a changed CEPH_IMAGE, MON_COUNT or METRICS reaches Rook
// (an image change is Rook's upgrade of every daemon; a count change adds
// or removes mons and mgrs; metrics off removes the ceph-exporters and
// disables the mgr's Prometheus module, on again brings both back). It
// reports whether anything changed.
func ApplyClusterSettings(spec *cephv1.ClusterSpec, cfg Config) bool {
	before := clusterSettings(spec)
	spec.CephVersion.Image = cfg.CephImage
	spec.Mon.Count, spec.Mon.AllowMultiplePerNode = cfg.MonCount, cfg.AllowMultiplePerNode
	spec.Mgr.Count, spec.Mgr.AllowMultiplePerNode = cfg.MgrCount, cfg.AllowMultiplePerNode
	spec.Monitoring.MetricsDisabled = !cfg.Metrics
	// The class each device's Disk gives it (RenderStorageNodes, a
	// per-device config.deviceClass) reaches only OSDs prepared after it:
	// Rook v1.18.11 compares an existing OSD's class with the node-level
	// config alone (spec.go makeDeployment, osd.go getOSDPropsForNode), so
	// nothing restarts or moves. What this flag does is keep CRUSH's class
	// of every OSD equal to the class its Deployment carries (the one it
	// was prepared with): after each OSD reconcile Rook sets that class
	// back on an OSD whose CRUSH class differs (osd.go
	// updateDeviceClassIfChanged), so the tiers the plugin counts from
	// Disks stay the ones CRUSH has (docs/rook-contract.md, tiers), and a
	// Disk whose OSD's Deployment carries another class than its type
	// says so (osdclass.go, ClassMismatch).
	spec.Storage.AllowDeviceClassUpdate = true
	return !slices.Equal(before, clusterSettings(spec))
}

func clusterSettings(spec *cephv1.ClusterSpec) []any {
	return []any{spec.CephVersion.Image, spec.Mon.Count, spec.Mon.AllowMultiplePerNode,
		spec.Mgr.Count, spec.Mgr.AllowMultiplePerNode, spec.Monitoring.MetricsDisabled, spec.Storage.AllowDeviceClassUpdate}
}

func ptrTo[T any](v T) *T { return &v }
