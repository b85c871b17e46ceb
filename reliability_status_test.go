package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
)

// Objects the API server accepts but the plugin cannot satisfy say why in
// their status, naming what is in the way. (The controller tests cover a
// consumer without disks, replicas clamped to the nodes, a foreign
// StorageClass or CephBlockPool, a contested default class and StorageClass
// drift; these are the rest.)
func TestReliabilityUnsatisfiableObjectsSayWhy(t *testing.T) {
	h := newHarness(t)
	h.start()
	ns := h.cfg.OperatorNamespace
	devices := []simulate.Device{
		simulate.NewDevice("why-1", 0, simulate.HDD), simulate.NewDevice("why-1", 1, simulate.InUse), simulate.NewDevice("why-1", 2, simulate.SSD),
	}
	data, err := simulate.DevicesJSON(devices)
	require.NoError(t, err)
	createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, "why-1", data))
	disks := h.waitDisks("why-1", 3)
	free, inUse, later := disks["/dev/sdb"].Name, disks["/dev/sdc"].Name, disks["/dev/sdd"].Name

	poolCases := []struct {
		name  string
		disks []string
		// want are phrases the pool's message and Ready condition carry.
		want []string
	}{
		{"why-missing", []string{"why-no-such-disk"}, []string{"why-no-such-disk"}},
		{"why-in-use", []string{inUse}, []string{inUse, "filesystem ext4"}},
	}
	older := h.createPool("why-older", free)
	h.eventually("the older pool is Ready", func() error { return h.poolPhase(older, cephv1alpha1.DiskPoolReady) })
	poolCases = append(poolCases, struct {
		name  string
		disks []string
		want  []string
	}{"why-younger", []string{free}, []string{free, "why-older"}})
	for _, tc := range poolCases {
		t.Run("DiskPool "+tc.name, func(t *testing.T) {
			pool := h.createPool(tc.name, tc.disks...)
			h.eventually(tc.name+" is Degraded", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolDegraded) })
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool))
			ready := readyCondition(pool.Status.Conditions)
			require.NotNil(t, ready)
			assert.Equal(t, metav1.ConditionFalse, ready.Status)
			assert.Equal(t, pool.Generation, pool.Status.ObservedGeneration)
			for _, phrase := range tc.want {
				assert.Contains(t, pool.Status.Message, phrase)
				assert.Contains(t, ready.Message, phrase)
			}
		})
	}

	t.Run("a pool whose node left keeps its disk and says it is missing", func(t *testing.T) {
		pool := h.createPool("why-gone", later)
		h.eventually("why-gone is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
		h.removeDiscovery("why-1")
		h.eventually("why-gone names its missing disk", func() error {
			if err := h.poolPhase(pool, cephv1alpha1.DiskPoolReady); err != nil {
				return err
			}
			if !strings.Contains(pool.Status.Message, "disk "+later+" is missing") {
				return fmt.Errorf("message %q", pool.Status.Message)
			}
			return nil
		})
		assert.Contains(t, pool.Status.Message, "keeps its place in the CephCluster until it is taken out of this pool")
	})

	t.Run("a FileStorage and an ObjectStorage whose StorageClass name is taken", func(t *testing.T) {
		for _, obj := range []consumerObject{
			&cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "why-file"}, Spec: cephv1alpha1.FileStorageSpec{MetadataServers: 1}},
			&cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "why-object"}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 1}},
		} {
			kind := kindOf(obj)
			taken := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: kind.DerivedName(obj.GetName())}, Provisioner: "example.com/other"}
			require.NoError(t, h.c.Create(h.ctx, taken))
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(taken), taken))
			h.createConsumer(obj)
			h.eventually(kind.Kind()+" is Degraded naming the class", func() error {
				if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					return err
				}
				s := obj.StorageStatus()
				if s.Phase != cephv1alpha1.StorageDegraded || !strings.Contains(s.Message, "StorageClass "+taken.Name+" already exists and is not owned by this resource") {
					return fmt.Errorf("%s status %+v", kind.Kind(), s)
				}
				return nil
			})
			var after storagev1.StorageClass
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(taken), &after))
			assert.Equal(t, taken.ResourceVersion, after.ResourceVersion, "the foreign class is left untouched")
		}
	})

	t.Run("without the CephCluster, pools and consumers name it", func(t *testing.T) {
		cluster := h.cluster()
		require.NoError(t, h.c.Delete(h.ctx, cluster))
		h.eventually("the CephCluster is gone", func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(cluster), cluster); err == nil {
				return fmt.Errorf("still there")
			}
			return nil
		})
		named := "CephCluster " + h.cfg.ClusterNamespace + "/" + CephClusterName
		block := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "why-no-cluster"}}
		h.createConsumer(block)
		h.eventually("the BlockStorage is Degraded naming the CephCluster", func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(block), block); err != nil {
				return err
			}
			if block.Status.Phase != cephv1alpha1.StorageDegraded || !strings.Contains(block.Status.Message, named) {
				return fmt.Errorf("status %+v", block.Status)
			}
			return nil
		})
		pool := h.createPool("why-no-cluster", free)
		h.eventually("the DiskPool is Degraded naming the CephCluster", func() error {
			if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
				return err
			}
			if pool.Status.Phase != cephv1alpha1.DiskPoolDegraded || !strings.Contains(pool.Status.Message, named) {
				return fmt.Errorf("status %+v", pool.Status)
			}
			return nil
		})
		ready := readyCondition(pool.Status.Conditions)
		require.NotNil(t, ready)
		assert.Equal(t, ReasonNoCephCluster, ready.Reason)
	})
}

func readyCondition(conds []metav1.Condition) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == cephv1alpha1.ConditionReady {
			return &conds[i]
		}
	}
	return nil
}
