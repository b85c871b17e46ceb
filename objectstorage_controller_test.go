package main

import (
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestObjectStorageDerivesAStoreAndBucketClass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("obj", 1)
	store := &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: "s3"}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 2}}
	h.createConsumer(store)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageProvisioning)

	assert.Equal(t, int32(1), store.Status.Replicas)
	assert.Equal(t, "osd", store.Status.FailureDomain, "a single node still provisions, on the osd domain")
	var rgw cephv1.CephObjectStore
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "cephobj-s3"}, &rgw))
	assert.True(t, rgw.Spec.PreservePoolsOnDelete)
	assert.Equal(t, int32(2), rgw.Spec.Gateway.Instances)
	assert.False(t, rgw.Spec.DataPool.Replicated.RequireSafeReplicaSize, "size 1 needs the safety check off")
	var sc storagev1.StorageClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "cephobj-s3"}, &sc))
	assert.Equal(t, h.cfg.ClusterNamespace+".ceph.rook.io/bucket", sc.Provisioner, "the bucket provisioner follows the CephCluster namespace")
	assert.Equal(t, "cephobj-s3", sc.Parameters["objectStoreName"])

	t.Run("a gateway edit patches the store and keeps fields the old Rook types do not know", func(t *testing.T) {
		// spec.gateway.rgwConfig is new in Rook v1.18; the typed module the
		// plugin compiles against drops it on decode, so only a patch of
		// what changed keeps it.
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"gateway":{"rgwConfig":{"rgw_thread_pool_size":"512"}}}}`))
		require.NoError(t, h.c.Patch(h.ctx, &rgw, patch))
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(store), store))
		store.Spec.GatewayInstances = 3
		require.NoError(t, h.c.Update(h.ctx, store))
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(cephv1.SchemeGroupVersion.WithKind("CephObjectStore"))
		h.eventually("three gateways", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&rgw), live))
			if n, _, _ := unstructured.NestedInt64(live.Object, "spec", "gateway", "instances"); n != 3 {
				return errNotYet
			}
			return nil
		})
		value, _, _ := unstructured.NestedString(live.Object, "spec", "gateway", "rgwConfig", "rgw_thread_pool_size")
		assert.Equal(t, "512", value, "another writer's v1.18 field survives the plugin's patch")
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&rgw), &rgw))
	})

	h.markReady(&rgw)
	h.waitPhase(store, func() cephv1alpha1.StorageStatus { return store.Status }, cephv1alpha1.StorageReady)
}
