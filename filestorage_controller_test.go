package main

import (
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestFileStorageDerivesAFilesystemAndCephFSClass(t *testing.T) {
	h := newHarness(t)
	h.start()
	h.withPooledNodes("fs", 3)
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Spec: cephv1alpha1.FileStorageSpec{MetadataServers: 2}}
	h.createConsumer(fs)
	h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageProvisioning)

	assert.Equal(t, int32(3), fs.Status.Replicas, "automatic sizing: min(3, nodes)")
	assert.Equal(t, "cephfs-shared", fs.Status.StorageClassName)
	var cephfs cephv1.CephFilesystem
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: "cephfs-shared"}, &cephfs))
	assert.True(t, cephfs.Spec.PreserveFilesystemOnDelete)
	assert.Equal(t, int32(2), cephfs.Spec.MetadataServer.ActiveCount)
	assert.True(t, cephfs.Spec.MetadataServer.ActiveStandby)
	assert.Equal(t, uint(3), cephfs.Spec.MetadataPool.Replicated.Size)
	var sc storagev1.StorageClass
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Name: "cephfs-shared"}, &sc))
	assert.Equal(t, "cephfs-shared-data", sc.Parameters["pool"], "the class names the data pool")
	assert.Equal(t, h.cfg.OperatorNamespace+".cephfs.csi.ceph.com", sc.Provisioner)

	t.Run("an edit patches the filesystem and keeps other writers' fields", func(t *testing.T) {
		// Another writer sets a field the plugin does not own.
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"metadataServer":{"priorityClassName":"from-someone-else"}}}`))
		require.NoError(t, h.c.Patch(h.ctx, &cephfs, patch))
		h.update(fs, func() { fs.Spec.MetadataServers = 1 })
		h.eventually("one active MDS", func() error {
			require.NoError(t, h.c.Get(h.ctx, client.ObjectKeyFromObject(&cephfs), &cephfs))
			if cephfs.Spec.MetadataServer.ActiveCount != 1 {
				return errNotYet
			}
			return nil
		})
		assert.Equal(t, "from-someone-else", cephfs.Spec.MetadataServer.PriorityClassName)
	})

	h.markReady(&cephfs)
	h.waitPhase(fs, func() cephv1alpha1.StorageStatus { return fs.Status }, cephv1alpha1.StorageReady)
}
