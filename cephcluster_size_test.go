package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/patch"
)

func TestCheckCephClusterSize(t *testing.T) {
	tests := []struct {
		name string
		size CephClusterSize
		want string // "" fits
	}{
		{"well within", CephClusterSize{Bytes: 500_000, AnnotationBytes: 80_000, Devices: 10_000}, ""},
		{"at the limit", CephClusterSize{Bytes: 1_400_000, AnnotationBytes: 200_000, Devices: 23_000}, ""},
		{"one byte over", CephClusterSize{Bytes: 1_400_001, Devices: 23_001},
			"with 23001 devices listed the CephCluster would be 1.3 MiB of JSON, over the 1.3 MiB the plugin writes (FUNP_CEPHCLUSTER_MAX_BYTES"},
		// Short names fit many devices in the object, but the record of
		// them (8 bytes each) passes the annotations' 256 KiB first.
		{"annotations over the API server's limit", CephClusterSize{Bytes: 1_300_000, AnnotationBytes: 262_145, Devices: 32_700},
			"with 32700 devices listed the CephCluster's annotations would be 256.0 KiB, over the API server's 256.0 KiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckCephClusterSize(tc.size, defaultCephClusterMaxBytes)
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
		})
	}
}

// byIDDevices is n devices as discovery names them on real hardware: 20
// to a node, by-id wwn paths, fully qualified node names.
func byIDDevices(n int) ([]any, []DeviceID) {
	var nodes []any
	var ids []DeviceID
	for i := 0; i*20 < n; i++ {
		node := fmt.Sprintf("worker-%04d.rack-%02d.example.internal", i, i%40)
		var devices []any
		for j := 0; j < 20 && i*20+j < n; j++ {
			device := fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%08x", i*20+j)
			devices = append(devices, map[string]any{"name": device})
			ids = append(ids, DeviceID{Node: node, Device: device})
		}
		nodes = append(nodes, map[string]any{"name": node, "devices": devices})
	}
	return nodes, ids
}

// TestTheCephClusterCeilingIsBelowTheAPIServersLimit: the most by-id
// devices the plugin writes into a CephCluster (its default ceiling, as it
// measures the object) are accepted by the real API server, and a list
// some 15 % longer, which the plugin would never write, is refused by
// etcd. The measured numbers are in docs/performance.md.
func TestTheCephClusterCeilingIsBelowTheAPIServersLimit(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	cfg := harnessConfig(t)
	_ = env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cfg.ClusterNamespace}})
	typed := BootstrapCephCluster(cfg)
	require.NoError(t, env.Client.Create(ctx, typed))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), typed) })
	object, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	require.NoError(t, err)
	cluster := &unstructured.Unstructured{Object: object}

	planOf := func(n int) StorageNodesPlan {
		nodes, ids := byIDDevices(n)
		return StorageNodesPlan{Nodes: nodes, Managed: encodeManaged(ids)}
	}
	fits := func(n int) bool {
		size, err := sizeAfterPlan(cluster, planOf(n))
		require.NoError(t, err)
		return CheckCephClusterSize(size, defaultCephClusterMaxBytes) == ""
	}
	// The most devices (in steps of 20) the plugin writes.
	lo, hi := 0, 40_000
	for hi-lo > 20 {
		if mid := (lo + hi) / 2 / 20 * 20; fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	t.Logf("the plugin writes at most %d by-id devices into a CephCluster", lo)
	assert.GreaterOrEqual(t, lo, 20_000, "the ceiling must leave room for the benchmark's 10,000 disks twice over")

	write := func(n int) error {
		plan := planOf(n)
		body := map[string]any{
			"metadata": map[string]any{"annotations": map[string]any{cephv1alpha1.ManagedDevicesAnnotation: plan.Managed}},
			"spec":     map[string]any{"storage": map[string]any{"nodes": plan.Nodes}},
		}
		return env.Client.Patch(ctx, typed, client.RawPatch(types.MergePatchType, patch.MustJSON(body)))
	}
	require.NoError(t, write(lo), "the API server takes what the plugin writes at its ceiling")
	err = write(lo * 115 / 100)
	require.Error(t, err, "a list 15 % past the plugin's ceiling must be one etcd refuses, or the ceiling is needlessly low")
	assert.Contains(t, err.Error(), "request is too large")
}

// TestAPoolEditThatWouldOverflowTheCephClusterIsRefused: with the ceiling
// lowered to 3 KiB (the CephCluster with two devices is about 1), a pool of
// 60 disks does not fit beside a small one (some 3 KiB more): it
// is Degraded, reason CephClusterTooLarge, and the CephCluster keeps the
// devices it had; a disk the small pool gives up still leaves it; and once
// the big pool is cut down, its disks go in.
func TestAPoolEditThatWouldOverflowTheCephClusterIsRefused(t *testing.T) {
	h := newHarness(t)
	h.cfg.CephClusterMaxBytes = 3 << 10
	h.start()
	h.publishDiscovery("small-1", hdd("sdb", "0x5b1b"), hdd("sdc", "0x5b1c"))
	small := h.waitDisks("small-1", 2)
	smallPool := h.createPool("small", small["/dev/sdb"].Name, small["/dev/sdc"].Name)
	h.eventually("the small pool is Ready", func() error { return h.poolPhase(smallPool, cephv1alpha1.DiskPoolReady) })

	var big []string
	for n := 1; n <= 3; n++ {
		node := fmt.Sprintf("big-%d", n)
		var devices []device
		for i := range 20 {
			devices = append(devices, hdd(fmt.Sprintf("sd%c", 'b'+i), fmt.Sprintf("0x5b%d%02d", n, i)))
		}
		h.publishDiscovery(node, devices...)
		for _, d := range h.waitDisks(node, 20) {
			big = append(big, d.Name)
		}
	}
	before := h.clusterDevices()
	bigPool := h.createPool("big", big...)
	h.eventually("the big pool says the CephCluster would be too large", func() error {
		if err := h.poolPhase(bigPool, cephv1alpha1.DiskPoolDegraded); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(bigPool.Status.Conditions, cephv1alpha1.ConditionReady)
		if ready == nil || ready.Reason != ReasonCephClusterTooLarge {
			return fmt.Errorf("status %q: %+v", bigPool.Status.Message, ready)
		}
		return nil
	})
	assert.Contains(t, bigPool.Status.Message, "devices listed the CephCluster would be")
	assert.Contains(t, bigPool.Status.Message, "over the 3.0 KiB the plugin writes")
	assert.Equal(t, before, h.clusterDevices(), "the device list is left as it was")
	require.NoError(t, h.poolPhase(smallPool, cephv1alpha1.DiskPoolReady), "the pool whose disks are listed is untouched")

	// A removal makes the list shorter: it is written while the additions wait.
	h.editPool(smallPool.Name, func(p *cephv1alpha1.DiskPool) { p.Spec.Disks = p.Spec.Disks[:1] })
	h.eventually("the disk the small pool gave up leaves the CephCluster", func() error {
		if got := h.clusterDevices()["small-1"]; len(got) != 1 {
			return fmt.Errorf("small-1 lists %v", got)
		}
		return nil
	})
	require.NoError(t, h.poolPhase(bigPool, cephv1alpha1.DiskPoolDegraded))

	h.editPool(bigPool.Name, func(p *cephv1alpha1.DiskPool) { p.Spec.Disks = p.Spec.Disks[:10] })
	h.eventually("cut down, the big pool's disks go in", func() error { return h.poolPhase(bigPool, cephv1alpha1.DiskPoolReady) })
	listed := 0
	for node, devices := range h.clusterDevices() {
		if strings.HasPrefix(node, "big-") {
			listed += len(devices)
		}
	}
	assert.Equal(t, 10, listed)
}
