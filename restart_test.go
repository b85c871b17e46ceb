package main

import (
	"fmt"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// A converged plugin that restarts finds nothing to change: zero writes to
// Disks, pools, consumers, Rook objects or StorageClasses.
func TestRestartAfterConvergenceWritesNothing(t *testing.T) {
	h := newHarness(t)
	h.start()
	for i := 1; i <= 3; i++ {
		h.publishDiscovery(fmt.Sprintf("restart-%d", i), workerDevices(i)...)
	}
	var names []string
	for i := 1; i <= 3; i++ {
		d := h.waitDisks(fmt.Sprintf("restart-%d", i), 5)
		names = append(names, d["/dev/sdb"].Name, d["/dev/sdd"].Name, d["/dev/sde"].Name)
	}
	pool := h.createPool("restart", names...)
	two := int32(2)
	consumers := []client.Object{
		&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "restart-block"}, Spec: cephv1alpha1.BlockStorageSpec{Default: true}},
		&cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "restart-file"}, Spec: cephv1alpha1.FileStorageSpec{Replicas: &two, MetadataServers: 1}},
		&cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "restart-object"}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 1}},
	}
	for _, c := range consumers {
		h.createConsumer(c)
	}
	h.eventually("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
	block := consumers[0].(*cephv1alpha1.BlockStorage)
	h.waitPhase(block, func() cephv1alpha1.StorageStatus { return block.Status }, cephv1alpha1.StorageProvisioning)
	var rbd cephv1.CephBlockPool
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "ceph-restart-block"}, &rbd))
	h.markReady(&rbd)
	h.waitPhase(block, func() cephv1alpha1.StorageStatus { return block.Status }, cephv1alpha1.StorageReady)
	file := consumers[1].(*cephv1alpha1.FileStorage)
	h.waitPhase(file, func() cephv1alpha1.StorageStatus { return file.Status }, cephv1alpha1.StorageProvisioning)
	object := consumers[2].(*cephv1alpha1.ObjectStorage)
	h.waitPhase(object, func() cephv1alpha1.StorageStatus { return object.Status }, cephv1alpha1.StorageProvisioning)

	// Let the first run settle: no write for a while.
	h.eventually("the first run is quiet", func() error {
		before := h.writes.total()
		time.Sleep(time.Second)
		if after := h.writes.total(); after != before {
			return fmt.Errorf("%d writes in the last second", after-before)
		}
		return nil
	})
	h.stop()

	restarted := &writeCounter{}
	h.writes = restarted
	h.start()
	time.Sleep(3 * time.Second) // every controller has listed and reconciled its objects
	assert.Empty(t, restarted.snapshot(), "a restart after convergence must not write")
}
