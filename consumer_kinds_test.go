package main

import (
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rookPools are the pool specs of a derived Rook object, by name.
func rookPools(obj client.Object) map[string]*cephv1.PoolSpec {
	switch o := obj.(type) {
	case *cephv1.CephBlockPool:
		return map[string]*cephv1.PoolSpec{"pool": &o.Spec.PoolSpec}
	case *cephv1.CephFilesystem:
		pools := map[string]*cephv1.PoolSpec{"metadata pool": &o.Spec.MetadataPool.PoolSpec}
		for i := range o.Spec.DataPools {
			pools["data pool "+o.Spec.DataPools[i].Name] = &o.Spec.DataPools[i].PoolSpec
		}
		return pools
	case *cephv1.CephObjectStore:
		return map[string]*cephv1.PoolSpec{"metadata pool": &o.Spec.MetadataPool, "data pool": &o.Spec.DataPool}
	}
	panic("not a derived Rook object")
}

// TestPatchRookCopiesEnableCrushUpdates: a pool written before the plugin
// set enableCrushUpdates gets it on its next reconcile, so that its
// failure domain can change; rendering alone would reach new pools only.
func TestPatchRookCopiesEnableCrushUpdates(t *testing.T) {
	t.Run("BlockStorage", func(t *testing.T) { checkPatchCopiesCrushUpdates(t, blockStorageKind, blockStorage("fast")) })
	t.Run("FileStorage", func(t *testing.T) { checkPatchCopiesCrushUpdates(t, fileStorageKind, fileStorage("shared", 1)) })
	t.Run("ObjectStorage", func(t *testing.T) { checkPatchCopiesCrushUpdates(t, objectStorageKind, objectStorage("s3", 1)) })
}

func checkPatchCopiesCrushUpdates[T consumerObject, R client.Object](t *testing.T, k kind[T, R], consumer T) {
	have := k.renderRook(consumer, testConfig(), samePlacement(mustReplication(t, nil, 1)))
	for _, pool := range rookPools(have) {
		pool.EnableCrushUpdates = false // as the plugin wrote it before
	}
	want := k.renderRook(consumer, testConfig(), samePlacement(mustReplication(t, nil, 2)))
	k.patchRook(have, want)
	pools := rookPools(have)
	require.NotEmpty(t, pools)
	for name, pool := range pools {
		assert.True(t, pool.EnableCrushUpdates, "%s", name)
		assert.Equal(t, "host", pool.FailureDomain, "%s", name)
	}
}
