package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRookValues(t *testing.T) {
	t.Run("discovery runs, more often than Rook's hourly default", func(t *testing.T) {
		v := RookValues(testConfig())
		assert.Equal(t, true, v["enableDiscoveryDaemon"])
		assert.Equal(t, "5m", v["discoveryDaemonInterval"])
		assert.Equal(t, map[string]any{"enabled": true}, v["crds"])
	})
	t.Run("loop devices are refused outside dev mode", func(t *testing.T) {
		assert.Equal(t, false, RookValues(testConfig())["allowLoopDevices"])
	})
	t.Run("loop devices are allowed in dev loop-device mode", func(t *testing.T) {
		cfg := testConfig()
		cfg.DevLoopDevices = true
		assert.Equal(t, true, RookValues(cfg)["allowLoopDevices"])
	})
	t.Run("the provisioner name prefixes the renderers rely on stay at the chart default", func(t *testing.T) {
		v := RookValues(testConfig())
		assert.NotContains(t, v, "obcProvisionerNamePrefix")
		assert.NotContains(t, v, "csi")
	})
	t.Run("the bucket provisioner is named after the cluster namespace, as the bucket classes say", func(t *testing.T) {
		assert.Equal(t, true, RookValues(testConfig())["enableOBCWatchOperatorNamespace"],
			"false names Rook's provisioner ceph.rook.io/bucket, which no bucket StorageClass names")
		assert.Equal(t, testConfig().ClusterNamespace+".ceph.rook.io/bucket", BucketProvisioner(testConfig()))
	})
}

func TestBootstrapCephCluster(t *testing.T) {
	cfg := testConfig()
	cfg.ClusterNamespace, cfg.MonCount, cfg.MgrCount, cfg.AllowMultiplePerNode = "ceph", 1, 1, true
	got := BootstrapCephCluster(cfg)
	assert.Equal(t, "rook-ceph", got.Name)
	assert.Equal(t, "ceph", got.Namespace)
	assert.Equal(t, cfg.CephImage, got.Spec.CephVersion.Image)
	assert.Equal(t, 1, got.Spec.Mon.Count)
	assert.True(t, got.Spec.Mon.AllowMultiplePerNode)
	assert.Equal(t, 1, got.Spec.Mgr.Count)
	assert.True(t, got.Spec.Mgr.AllowMultiplePerNode)
	assert.Equal(t, "/var/lib/rook", got.Spec.DataDirHostPath)
	assert.False(t, got.Spec.Storage.UseAllNodes, "Ceph must never take a node's disks unasked")
	require.NotNil(t, got.Spec.Storage.UseAllDevices)
	assert.False(t, *got.Spec.Storage.UseAllDevices, "Ceph must never take a disk nobody chose")
	assert.Empty(t, got.Spec.Storage.Nodes, "the DiskPool reconciler fills the device list")
}
