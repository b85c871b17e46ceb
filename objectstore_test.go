package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

func objectStorage(name string, gateways int32) *cephv1alpha1.ObjectStorage {
	return &cephv1alpha1.ObjectStorage{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec:       cephv1alpha1.ObjectStorageSpec{GatewayInstances: gateways},
	}
}

func TestRenderObjectStore(t *testing.T) {
	cases := []struct {
		name      string
		gateways  int32
		requested *int32
		nodes     int
		wantInst  int32
		wantSize  uint
		wantSafe  bool
	}{
		{name: "two gateways on three nodes", gateways: 2, nodes: 3, wantInst: 2, wantSize: 3, wantSafe: true},
		{name: "one replica on a single node turns the safety check off", gateways: 1, requested: ptrTo(int32(1)), nodes: 1, wantInst: 1, wantSize: 1, wantSafe: false},
		{name: "an unset gateway count (the CRD defaults it) still runs one", gateways: 0, nodes: 2, wantInst: 1, wantSize: 2, wantSafe: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustReplication(t, tc.requested, tc.nodes)
			got := RenderObjectStore(objectStorage("s3", tc.gateways), "rook-ceph", storePlacement(r))
			assert.Equal(t, "cephobj-s3", got.Name)
			assert.Equal(t, "rook-ceph", got.Namespace)
			assert.Equal(t, tc.wantInst, got.Spec.Gateway.Instances)
			assert.Equal(t, int32(80), got.Spec.Gateway.Port)
			assert.True(t, got.Spec.PreservePoolsOnDelete, "deleting the ObjectStorage keeps its pools and data")
			assert.Equal(t, tc.wantSize, got.Spec.MetadataPool.Replicated.Size)
			assert.Equal(t, tc.wantSize, got.Spec.DataPool.Replicated.Size)
			assert.Equal(t, tc.wantSafe, got.Spec.MetadataPool.Replicated.RequireSafeReplicaSize)
			assert.Equal(t, tc.wantSafe, got.Spec.DataPool.Replicated.RequireSafeReplicaSize)
			assert.Equal(t, r.FailureDomain, got.Spec.DataPool.FailureDomain)
			assert.True(t, IsControlledBy(got, "uid-s3"))
		})
	}
}

// TestObjectStoresAgreeOnTheSharedRootPool: Rook applies each store's
// metadataPool spec to the .rgw.root pool every store shares, so every
// ObjectStorage renders the same metadata pools on the same nodes, sized
// automatically, whatever replicas it asked for; only the data pool
// follows the request.
func TestObjectStoresAgreeOnTheSharedRootPool(t *testing.T) {
	const nodes = 3
	auto := RenderObjectStore(objectStorage("auto", 1), "rook-ceph", storePlacement(mustReplication(t, nil, nodes)))
	for _, requested := range []int32{1, 2, 3} {
		t.Run(fmt.Sprintf("replicas %d", requested), func(t *testing.T) {
			got := RenderObjectStore(objectStorage("asked", 1), "rook-ceph", storePlacement(mustReplication(t, ptrTo(requested), nodes)))
			assert.Equal(t, auto.Spec.MetadataPool, got.Spec.MetadataPool, "metadata pools as every other store has them")
			assert.Equal(t, uint(3), got.Spec.MetadataPool.Replicated.Size)
			assert.Equal(t, rook.FailureDomainHost, got.Spec.MetadataPool.FailureDomain)
			assert.Equal(t, uint(requested), got.Spec.DataPool.Replicated.Size, "the data pool as asked")
		})
	}
}
