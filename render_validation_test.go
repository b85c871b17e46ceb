package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// The Rook Go types date from about Rook v1.16 and serialise some empty
// fields; the API server runs Rook v1.18's CRDs. These tests create every
// rendered object with fieldValidation=Strict, so an unknown or misspelt
// field, a value outside an enum or range, or a missing required field is
// a failure rather than silently pruned.

var strict = client.FieldValidation(metav1.FieldValidationStrict)

func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	err := controlPlane.Env(t).Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
}

// createStrict creates obj with strict field validation and removes it when
// the test ends. obj then holds the API server's answer: the object as
// stored, defaults applied.
func createStrict(t *testing.T, obj client.Object) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, obj, strict), "%T %s rejected", obj, obj.GetName())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
}

// withLiveOwner creates the consumer each of obj's owner references names
// and points the reference at its UID. The owner must exist: the garbage
// collector runs in this package and deletes an object whose owner does
// not, at any moment, so a made-up UID makes the object vanish between a
// test's create and its next read.
func withLiveOwner[T client.Object](t *testing.T, obj T) T {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	refs := obj.GetOwnerReferences()
	for j, ref := range refs {
		owner := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
		owner.SetAPIVersion(ref.APIVersion)
		owner.SetKind(ref.Kind)
		owner.SetName(ref.Name)
		switch err := env.Client.Create(ctx, owner); {
		case apierrors.IsAlreadyExists(err):
			require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(owner), owner))
		default:
			require.NoError(t, err, "create owner %s %s", ref.Kind, ref.Name)
			t.Cleanup(func() { _ = env.Client.Delete(ctx, owner) })
		}
		refs[j].UID = owner.GetUID()
	}
	obj.SetOwnerReferences(refs)
	return obj
}

func replicationVariants(t *testing.T) map[string]Replication {
	return map[string]Replication{
		"size 1 on one node":         mustReplication(t, nil, 1),
		"size 2 on two nodes":        mustReplication(t, nil, 2),
		"size 3 on five nodes":       mustReplication(t, nil, 5),
		"3 requested clamped to 2":   mustReplication(t, ptrTo(int32(3)), 2),
		"1 requested on three nodes": mustReplication(t, ptrTo(int32(1)), 3),
		"2 requested on three nodes": mustReplication(t, ptrTo(int32(2)), 3),
	}
}

func TestRenderedCephBlockPoolsAreAccepted(t *testing.T) {
	ensureNamespace(t, "rook-ceph")
	i := 0
	for variant, r := range replicationVariants(t) {
		i++
		t.Run(variant, func(t *testing.T) {
			pool := withLiveOwner(t, RenderBlockPool(blockStorage(fmt.Sprintf("bp%d", i)), "rook-ceph", r))
			createStrict(t, pool)
			got := pool // the create's answer, as stored (see createStrict)
			assert.Equal(t, uint(r.Size), got.Spec.Replicated.Size)
			assert.Equal(t, r.RequireSafeReplicaSize, got.Spec.Replicated.RequireSafeReplicaSize)
			assert.Equal(t, r.FailureDomain, got.Spec.FailureDomain)
		})
	}
	t.Run("the longest BlockStorage name", func(t *testing.T) {
		createStrict(t, withLiveOwner(t, RenderBlockPool(blockStorage(strings.Repeat("b", 248)), "rook-ceph", mustReplication(t, nil, 3))))
	})
}

func TestRenderedCephFilesystemsAreAccepted(t *testing.T) {
	ensureNamespace(t, "rook-ceph")
	i := 0
	for variant, r := range replicationVariants(t) {
		for _, mds := range []int32{1, 3} {
			i++
			t.Run(fmt.Sprintf("%s, %d MDS", variant, mds), func(t *testing.T) {
				fs := withLiveOwner(t, RenderFilesystem(fileStorage(fmt.Sprintf("fs%d", i), mds), "rook-ceph", samePlacement(r)))
				createStrict(t, fs)
				got := fs // the create's answer, as stored (see createStrict)
				assert.Equal(t, mds, got.Spec.MetadataServer.ActiveCount)
				assert.True(t, got.Spec.MetadataServer.ActiveStandby)
				assert.True(t, got.Spec.PreserveFilesystemOnDelete)
				require.Len(t, got.Spec.DataPools, 1)
				assert.Equal(t, FilesystemDataPool, got.Spec.DataPools[0].Name)
			})
		}
	}
	t.Run("the longest FileStorage name", func(t *testing.T) {
		createStrict(t, withLiveOwner(t, RenderFilesystem(fileStorage(strings.Repeat("f", 53), 1), "rook-ceph", samePlacement(mustReplication(t, nil, 3)))))
	})
}

func TestRenderedCephObjectStoresAreAccepted(t *testing.T) {
	ensureNamespace(t, "rook-ceph")
	i := 0
	for variant, r := range replicationVariants(t) {
		for _, gateways := range []int32{1, 4} {
			i++
			t.Run(fmt.Sprintf("%s, %d gateways", variant, gateways), func(t *testing.T) {
				store := withLiveOwner(t, RenderObjectStore(objectStorage(fmt.Sprintf("os%d", i), gateways), "rook-ceph", storePlacement(r)))
				createStrict(t, store)
				got := store // the create's answer, as stored (see createStrict)
				assert.Equal(t, gateways, got.Spec.Gateway.Instances)
				assert.True(t, got.Spec.PreservePoolsOnDelete)
				assert.Equal(t, uint(r.Size), got.Spec.DataPool.Replicated.Size)
			})
		}
	}
	t.Run("the longest ObjectStorage name", func(t *testing.T) {
		createStrict(t, withLiveOwner(t, RenderObjectStore(objectStorage(strings.Repeat("o", 30), 1), "rook-ceph", storePlacement(mustReplication(t, nil, 3)))))
	})
}

func TestRenderedCephClustersAreAccepted(t *testing.T) {
	devConfig := testConfig()
	devConfig.ClusterNamespace = "ceph-dev"
	devConfig.MonCount, devConfig.MgrCount, devConfig.AllowMultiplePerNode, devConfig.DevLoopDevices = 1, 1, true, true
	loop := disk("l", "k3d-server-0", "", 10, cephv1alpha1.DiskAvailable, "")
	loop.Status.Path = "/dev/loop0"

	prodConfig := testConfig()
	prodConfig.ClusterNamespace = "ceph-prod"
	prodConfig.MonCount, prodConfig.MgrCount = 5, 2

	cases := []struct {
		name  string
		cfg   Config
		disks []cephv1alpha1.Disk
	}{
		{name: "the bootstrap cluster with defaults and no devices", cfg: testConfig()},
		{name: "a dev cluster on loop devices", cfg: devConfig, disks: []cephv1alpha1.Disk{loop}},
		{name: "a cluster with by-id devices on several nodes", cfg: prodConfig, disks: []cephv1alpha1.Disk{
			available("a", "worker-1", 100), available("b", "worker-1", 100), available("c", "worker-2.example.com", 100),
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ensureNamespace(t, tc.cfg.ClusterNamespace)
			cluster := BootstrapCephCluster(tc.cfg)
			cluster.Spec.Storage.Nodes = RenderStorageNodes(pointers(tc.disks))
			createStrict(t, cluster)
			var got cephv1.CephCluster
			require.NoError(t, controlPlane.Env(t).Client.Get(context.Background(), client.ObjectKeyFromObject(cluster), &got))
			assert.Len(t, got.Spec.Storage.Nodes, len(cluster.Spec.Storage.Nodes))
			assert.Equal(t, ClusterDevices(cluster), ClusterDevices(&got), "the device list reads back as rendered")
			assert.Equal(t, tc.cfg.MonCount, got.Spec.Mon.Count)
		})
	}
}

func TestRenderedStorageClassesAreAcceptedAndReadBackWithoutDrift(t *testing.T) {
	def := blockStorage("sc-default")
	def.Spec.Default = true
	fuse := testConfig()
	fuse.CephFSMounter = MounterFuse
	other := separateNamespaces()
	cases := []struct {
		name string
		sc   *storagev1.StorageClass
	}{
		{name: "RBD", sc: RenderRBDStorageClass(blockStorage("sc-rbd"), testConfig())},
		{name: "RBD default class", sc: RenderRBDStorageClass(def, testConfig())},
		{name: "RBD in separate namespaces", sc: RenderRBDStorageClass(blockStorage("sc-rbd-ns"), other)},
		{name: "RBD with the longest name", sc: RenderRBDStorageClass(blockStorage(strings.Repeat("r", 248)), testConfig())},
		{name: "CephFS kernel mounter", sc: RenderCephFSStorageClass(fileStorage("sc-fs", 1), testConfig())},
		{name: "CephFS fuse mounter", sc: RenderCephFSStorageClass(fileStorage("sc-fs-fuse", 1), fuse)},
		{name: "CephFS in separate namespaces", sc: RenderCephFSStorageClass(fileStorage("sc-fs-ns", 1), other)},
		{name: "bucket", sc: RenderBucketStorageClass(objectStorage("sc-obj", 1), testConfig())},
		{name: "bucket in separate namespaces", sc: RenderBucketStorageClass(objectStorage("sc-obj-ns", 1), other)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := withLiveOwner(t, tc.sc)
			rendered := sc.DeepCopy()
			createStrict(t, sc)
			got := sc // the create's answer, as stored (see createStrict)
			require.NotNil(t, got.ReclaimPolicy)
			require.NotNil(t, got.VolumeBindingMode)
			assert.Empty(t, StorageClassDrift(rendered, got), "what the server stores is exactly what was rendered")
		})
	}
}

// The control for every test above: strict validation really rejects a
// field the CRD does not know, so "accepted" means the rendered fields all
// exist in Rook v1.18's schema.
func TestStrictValidationRejectsAnUnknownRookField(t *testing.T) {
	ensureNamespace(t, "rook-ceph")
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1",
		"kind":       "CephBlockPool",
		"metadata":   map[string]any{"name": "strict-control", "namespace": "rook-ceph"},
		"spec":       map[string]any{"replicated": map[string]any{"size": int64(1)}, "notARookField": true},
	}}
	err := controlPlane.Env(t).Client.Create(context.Background(), pool, strict)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "notARookField")
}

func TestStorageClassDriftMatchesWhatTheServerRefuses(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	want := withLiveOwner(t, RenderRBDStorageClass(blockStorage("sc-drift"), testConfig()))
	createStrict(t, want)
	var have storagev1.StorageClass
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(want), &have))

	changed := testConfig()
	changed.ClusterNamespace = "elsewhere"
	next := RenderRBDStorageClass(blockStorage("sc-drift"), changed)
	drift := StorageClassDrift(next, &have)
	require.NotEmpty(t, drift)

	update := have.DeepCopy()
	update.Parameters = next.Parameters
	err := env.Client.Update(ctx, update)
	require.Error(t, err, "the API server refuses to change parameters, so the reconciler must report drift instead")
	assert.True(t, apierrors.IsInvalid(err), err.Error())
	assert.Contains(t, err.Error(), "parameters")
}
