package main

import (
	"testing"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// separateNamespaces puts the operator and the cluster in different
// namespaces, so a provisioner or parameter that follows the wrong one shows.
// LoadConfig never gives this (the CephCluster lives in the operator
// namespace); the renderers keep the two apart, and these tests pin which
// value follows which.
func separateNamespaces() Config {
	cfg := testConfig()
	cfg.OperatorNamespace, cfg.ClusterNamespace = "rook-operator", "ceph-cluster"
	return cfg
}

func TestStorageClassProvisionersFollowTheRightNamespace(t *testing.T) {
	cfg := separateNamespaces()
	cases := []struct {
		name string
		sc   *storagev1.StorageClass
		want string
	}{
		{name: "RBD's CSI driver follows the operator namespace", sc: RenderRBDStorageClass(blockStorage("fast"), cfg), want: "rook-operator.rbd.csi.ceph.com"},
		{name: "CephFS's CSI driver follows the operator namespace", sc: RenderCephFSStorageClass(fileStorage("shared", 1), cfg), want: "rook-operator.cephfs.csi.ceph.com"},
		{name: "the bucket provisioner follows the CephCluster namespace", sc: RenderBucketStorageClass(objectStorage("s3", 1), cfg), want: "ceph-cluster.ceph.rook.io/bucket"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.sc.Provisioner)
		})
	}
}

func TestStorageClassesSetEveryImmutableFieldExplicitly(t *testing.T) {
	cfg := testConfig()
	for _, sc := range []*storagev1.StorageClass{
		RenderRBDStorageClass(blockStorage("fast"), cfg),
		RenderCephFSStorageClass(fileStorage("shared", 1), cfg),
		RenderBucketStorageClass(objectStorage("s3", 1), cfg),
	} {
		t.Run(sc.Name, func(t *testing.T) {
			assert.NotEmpty(t, sc.Provisioner)
			assert.NotEmpty(t, sc.Parameters)
			require.NotNil(t, sc.ReclaimPolicy, "reclaimPolicy left to the server default reads back as drift")
			assert.Equal(t, corev1.PersistentVolumeReclaimDelete, *sc.ReclaimPolicy)
			require.NotNil(t, sc.VolumeBindingMode, "volumeBindingMode left to the server default reads back as drift")
			assert.Equal(t, storagev1.VolumeBindingImmediate, *sc.VolumeBindingMode)
			assert.Empty(t, sc.Namespace)
			assert.Equal(t, cephv1alpha1.ManagedByValue, sc.Labels[cephv1alpha1.ManagedByLabel])
		})
	}
}

func TestRenderRBDStorageClass(t *testing.T) {
	cfg := separateNamespaces()
	got := RenderRBDStorageClass(blockStorage("fast"), cfg)
	assert.Equal(t, "ceph-fast", got.Name)
	assert.Equal(t, map[string]string{
		"clusterID":                 "ceph-cluster",
		"pool":                      "ceph-fast",
		"imageFormat":               "2",
		"imageFeatures":             "layering",
		"csi.storage.k8s.io/fstype": "ext4",
		"csi.storage.k8s.io/provisioner-secret-name":            "rook-csi-rbd-provisioner",
		"csi.storage.k8s.io/provisioner-secret-namespace":       "ceph-cluster",
		"csi.storage.k8s.io/controller-expand-secret-name":      "rook-csi-rbd-provisioner",
		"csi.storage.k8s.io/controller-expand-secret-namespace": "ceph-cluster",
		"csi.storage.k8s.io/node-stage-secret-name":             "rook-csi-rbd-node",
		"csi.storage.k8s.io/node-stage-secret-namespace":        "ceph-cluster",
	}, got.Parameters)
	assert.Equal(t, "ceph-fast", RenderBlockPool(blockStorage("fast"), cfg.ClusterNamespace, mustReplication(t, nil, 1)).Name,
		"the class's pool is the rendered CephBlockPool")
	require.NotNil(t, got.AllowVolumeExpansion)
	assert.True(t, *got.AllowVolumeExpansion)
	assert.True(t, IsControlledBy(got, "uid-fast"))

	t.Run("not the default class unless asked", func(t *testing.T) {
		assert.NotContains(t, got.Annotations, DefaultClassAnnotation)
	})
	t.Run("spec.default marks the cluster default class", func(t *testing.T) {
		bs := blockStorage("fast")
		bs.Spec.Default = true
		assert.Equal(t, "true", RenderRBDStorageClass(bs, cfg).Annotations[DefaultClassAnnotation])
	})
}

func TestRenderCephFSStorageClass(t *testing.T) {
	cfg := separateNamespaces()
	cfg.CephFSMounter = MounterFuse
	got := RenderCephFSStorageClass(fileStorage("shared", 1), cfg)
	assert.Equal(t, "cephfs-shared", got.Name)
	assert.Equal(t, map[string]string{
		"clusterID": "ceph-cluster",
		"fsName":    "cephfs-shared",
		"pool":      "cephfs-shared-data",
		"mounter":   "fuse",
		"csi.storage.k8s.io/provisioner-secret-name":            "rook-csi-cephfs-provisioner",
		"csi.storage.k8s.io/provisioner-secret-namespace":       "ceph-cluster",
		"csi.storage.k8s.io/controller-expand-secret-name":      "rook-csi-cephfs-provisioner",
		"csi.storage.k8s.io/controller-expand-secret-namespace": "ceph-cluster",
		"csi.storage.k8s.io/node-stage-secret-name":             "rook-csi-cephfs-node",
		"csi.storage.k8s.io/node-stage-secret-namespace":        "ceph-cluster",
	}, got.Parameters)
	require.NotNil(t, got.AllowVolumeExpansion)
	assert.True(t, *got.AllowVolumeExpansion, "CephFS volumes grow online")
	assert.True(t, IsControlledBy(got, "uid-shared"))
}

func TestRenderBucketStorageClass(t *testing.T) {
	cfg := separateNamespaces()
	got := RenderBucketStorageClass(objectStorage("s3", 1), cfg)
	assert.Equal(t, "cephobj-s3", got.Name)
	assert.Equal(t, map[string]string{
		"objectStoreName":      "cephobj-s3",
		"objectStoreNamespace": "ceph-cluster",
		"region":               "nl-1",
	}, got.Parameters)
	assert.True(t, IsControlledBy(got, "uid-s3"))

	t.Run("the region follows the S3 region setting", func(t *testing.T) {
		cfg.S3Region = "eu-central"
		assert.Equal(t, "eu-central", RenderBucketStorageClass(objectStorage("s3", 1), cfg).Parameters["region"])
	})
}

func TestStorageClassDrift(t *testing.T) {
	cfg := testConfig()
	want := RenderRBDStorageClass(blockStorage("fast"), cfg)
	retain := corev1.PersistentVolumeReclaimRetain
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	cases := []struct {
		name   string
		mutate func(sc *storagev1.StorageClass)
		want   []string
	}{
		{name: "an identical class has no drift", mutate: func(*storagev1.StorageClass) {}},
		{
			name:   "server-defaulted fields read back as what was rendered",
			mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy, sc.VolumeBindingMode = nil, nil },
		},
		{
			name: "mutable fields are not drift",
			mutate: func(sc *storagev1.StorageClass) {
				sc.AllowVolumeExpansion = ptrTo(false)
				sc.Annotations = map[string]string{"x": "y"}
			},
		},
		{
			name:   "a different provisioner",
			mutate: func(sc *storagev1.StorageClass) { sc.Provisioner = "other.csi" },
			want:   []string{`provisioner is "other.csi", want "rook-ceph.rbd.csi.ceph.com"`},
		},
		{
			name:   "reclaim policy and binding mode",
			mutate: func(sc *storagev1.StorageClass) { sc.ReclaimPolicy, sc.VolumeBindingMode = &retain, &wait },
			want: []string{
				`reclaimPolicy is "Retain", want "Delete"`,
				`volumeBindingMode is "WaitForFirstConsumer", want "Immediate"`,
			},
		},
		{
			name: "changed, missing and extra parameters, sorted",
			mutate: func(sc *storagev1.StorageClass) {
				sc.Parameters = map[string]string{}
				for k, v := range want.Parameters {
					sc.Parameters[k] = v
				}
				sc.Parameters["pool"] = "other"
				delete(sc.Parameters, "imageFormat")
				sc.Parameters["zz"] = "1"
			},
			want: []string{
				`parameters.imageFormat is missing, want "2"`,
				`parameters.pool is "other", want "ceph-fast"`,
				`parameters.zz is "1", want it absent`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			have := want.DeepCopy()
			tc.mutate(have)
			assert.Equal(t, tc.want, StorageClassDrift(want, have))
		})
	}
}

func TestStorageClassDriftMessage(t *testing.T) {
	assert.Equal(t,
		`StorageClass ceph-fast differs in immutable fields (parameters.pool is "other", want "ceph-fast"): delete it so it can be re-created`,
		StorageClassDriftMessage("ceph-fast", []string{`parameters.pool is "other", want "ceph-fast"`}))
}
