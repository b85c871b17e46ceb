package main

import (
	"fmt"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func blockStorage(name string) *cephv1alpha1.BlockStorage {
	return &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}
}

func mustReplication(t testing.TB, requested *int32, nodes int) Replication {
	t.Helper()
	r, err := ComputeReplication(requested, nodes)
	require.NoError(t, err)
	return r
}

func TestRenderBlockPool(t *testing.T) {
	cases := []struct {
		name        string
		nodes       int
		wantSize    uint
		wantDomain  string
		wantSafeRep bool
	}{
		{name: "three nodes replicate three times across hosts", nodes: 3, wantSize: 3, wantDomain: "host", wantSafeRep: true},
		{name: "a single node is size 1 on osd with requireSafeReplicaSize false", nodes: 1, wantSize: 1, wantDomain: "osd", wantSafeRep: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RenderBlockPool(blockStorage("fast"), "rook-ceph", mustReplication(t, nil, tc.nodes))
			assert.Equal(t, "ceph-fast", got.Name)
			assert.Equal(t, "rook-ceph", got.Namespace)
			assert.Equal(t, tc.wantSize, got.Spec.Replicated.Size)
			assert.Equal(t, tc.wantDomain, got.Spec.FailureDomain)
			assert.Equal(t, tc.wantSafeRep, got.Spec.Replicated.RequireSafeReplicaSize)
			assert.Empty(t, got.Spec.DeviceClass, "no tiering: every pool spans the one OSD set")
		})
	}
}

func TestRenderBlockPoolIsControlledByItsBlockStorage(t *testing.T) {
	got := RenderBlockPool(blockStorage("fast"), "rook-ceph", mustReplication(t, nil, 2))
	assert.True(t, IsControlledBy(got, "uid-fast"))
	ref := metav1.GetControllerOf(got)
	require.NotNil(t, ref)
	assert.Equal(t, "ceph.fundament.io/v1alpha1", ref.APIVersion)
	assert.Equal(t, "BlockStorage", ref.Kind)
	assert.Equal(t, "fast", ref.Name)
	assert.Equal(t, cephv1alpha1.ManagedByValue, got.Labels[cephv1alpha1.ManagedByLabel])
}

// TestEveryPoolEnablesCrushUpdates: Rook changes an existing pool's CRUSH
// rule (its failure domain) only with enableCrushUpdates, so every pool
// the plugin writes sets it, or a move from osd to host never reaches Ceph.
func TestEveryPoolEnablesCrushUpdates(t *testing.T) {
	r := mustReplication(t, nil, 2)
	fs := RenderFilesystem(fileStorage("shared", 1), "rook-ceph", samePlacement(r))
	store := RenderObjectStore(objectStorage("s3", 1), "rook-ceph", storePlacement(r))
	pools := map[string]cephv1.PoolSpec{
		"CephBlockPool":                 RenderBlockPool(blockStorage("fast"), "rook-ceph", r).Spec.PoolSpec,
		"CephFilesystem metadata pool":  fs.Spec.MetadataPool.PoolSpec,
		"CephObjectStore metadata pool": store.Spec.MetadataPool,
		"CephObjectStore data pool":     store.Spec.DataPool,
	}
	for i, p := range fs.Spec.DataPools {
		pools[fmt.Sprintf("CephFilesystem data pool %d (%s)", i, p.Name)] = p.PoolSpec
	}
	require.Len(t, pools, 5)
	for name, pool := range pools {
		t.Run(name, func(t *testing.T) {
			assert.True(t, pool.EnableCrushUpdates, "a changed failure domain must reach the pool's CRUSH rule")
			assert.Equal(t, "host", pool.FailureDomain)
			assert.Equal(t, uint(2), pool.Replicated.Size)
			assert.Zero(t, pool.ErasureCoded, "replicated, never erasure coded: Rook cannot convert a pool later")
		})
	}
}
