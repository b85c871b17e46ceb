package main

import (
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	"github.com/stretchr/testify/assert"
	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestRenderSnapshotClasses(t *testing.T) {
	cfg := Config{OperatorNamespace: "rook-op", ClusterNamespace: "rook-cl"}
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast", UID: "uid-bs"}}
	fs := &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: "shared", UID: "uid-fs"}}
	tests := []struct {
		name       string
		class      *snapshotv1.VolumeSnapshotClass
		wantName   string
		wantDriver string
		wantSecret string
		wantOwner  string
	}{
		{"a BlockStorage's, beside its RBD StorageClass", RenderRBDSnapshotClass(bs, cfg), "ceph-fast", "rook-op.rbd.csi.ceph.com", "rook-csi-rbd-provisioner", "BlockStorage"},
		{"a FileStorage's, beside its CephFS StorageClass", RenderCephFSSnapshotClass(fs, cfg), "cephfs-shared", "rook-op.cephfs.csi.ceph.com", "rook-csi-cephfs-provisioner", "FileStorage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.class
			assert.Equal(t, tt.wantName, c.Name, "the StorageClass's name")
			assert.Empty(t, c.Namespace, "cluster-scoped")
			assert.Equal(t, tt.wantDriver, c.Driver, "the driver follows the operator namespace, as the StorageClass's provisioner")
			assert.Equal(t, snapshotv1.VolumeSnapshotContentDelete, c.DeletionPolicy)
			assert.Equal(t, map[string]string{
				"clusterID": "rook-cl",
				"csi.storage.k8s.io/snapshotter-secret-name":      tt.wantSecret,
				"csi.storage.k8s.io/snapshotter-secret-namespace": "rook-cl",
			}, c.Parameters, "clusterID and the secret follow the CephCluster's namespace")
			assert.Equal(t, "true", c.Labels[VeleroSnapshotClassLabel], "Velero finds it")
			assert.Equal(t, cephv1alpha1.ManagedByValue, c.Labels[cephv1alpha1.ManagedByLabel])
			ref := metav1.GetControllerOf(c)
			if assert.NotNil(t, ref) {
				assert.Equal(t, tt.wantOwner, ref.Kind)
				assert.True(t, *ref.BlockOwnerDeletion)
			}
			assert.Empty(t, SnapshotClassDrift(c, c.DeepCopy()))
		})
	}
}

func TestSnapshotAPIRefusal(t *testing.T) {
	crd := func(versions map[string]bool) *apiextensionsv1.CustomResourceDefinition {
		c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: SnapshotClassCRD}}
		for _, name := range []string{"v1beta1", "v1"} {
			if served, ok := versions[name]; ok {
				c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: served})
			}
		}
		return c
	}
	tests := []struct {
		name        string
		crd         *apiextensionsv1.CustomResourceDefinition
		wantRefused bool
		wantReason  string
		wantIn      string
	}{
		{"not installed", nil, true, ReasonSnapshotAPIMissing, "no CRD volumesnapshotclasses.snapshot.storage.k8s.io"},
		{"v1beta1 only (external-snapshotter before v4)", crd(map[string]bool{"v1beta1": true}), true, ReasonSnapshotAPIVersion, "serves [v1beta1], not snapshot.storage.k8s.io/v1"},
		{"v1 listed but not served", crd(map[string]bool{"v1beta1": true, "v1": false}), true, ReasonSnapshotAPIVersion, "serves [v1beta1]"},
		{"v1 served", crd(map[string]bool{"v1": true}), false, "", ""},
		{"v1 served beside v1beta1", crd(map[string]bool{"v1beta1": true, "v1": true}), false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, message, refused := SnapshotAPIRefusal(tt.crd)
			assert.Equal(t, tt.wantRefused, refused)
			assert.Equal(t, tt.wantReason, reason)
			assert.Contains(t, message, tt.wantIn)
			if refused {
				assert.Contains(t, message, "volumes work without them")
			}
		})
	}
}

func TestSnapshotControllerLeads(t *testing.T) {
	lease := func(holder *string) coordinationv1.Lease {
		return coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: holder}}
	}
	tests := []struct {
		name   string
		leases []coordinationv1.Lease
		want   bool
	}{
		{"no Lease", nil, false},
		{"a Lease nobody holds", []coordinationv1.Lease{lease(nil)}, false},
		{"a Lease released (empty holder)", []coordinationv1.Lease{lease(ptrTo(""))}, false},
		{"a holder", []coordinationv1.Lease{lease(ptrTo("snapshot-controller-7d9"))}, true},
		{"one of two namespaces' Leases held", []coordinationv1.Lease{lease(nil), lease(ptrTo("x"))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, SnapshotControllerLeads(tt.leases))
		})
	}
}

func TestSnapshotClassDrift(t *testing.T) {
	cfg := Config{OperatorNamespace: "rook-op", ClusterNamespace: "rook-cl"}
	want := RenderRBDSnapshotClass(&cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}, cfg)
	tests := []struct {
		name string
		edit func(*snapshotv1.VolumeSnapshotClass)
		want []string
	}{
		{"as rendered", func(*snapshotv1.VolumeSnapshotClass) {}, nil},
		{"another driver", func(c *snapshotv1.VolumeSnapshotClass) { c.Driver = "rbd.csi.ceph.com" },
			[]string{`driver is "rbd.csi.ceph.com", want "rook-op.rbd.csi.ceph.com"`}},
		{"Retain", func(c *snapshotv1.VolumeSnapshotClass) { c.DeletionPolicy = snapshotv1.VolumeSnapshotContentRetain },
			[]string{`deletionPolicy is "Retain", want "Delete"`}},
		{"a parameter changed, one added, one removed", func(c *snapshotv1.VolumeSnapshotClass) {
			c.Parameters = map[string]string{"clusterID": "other", "csi.storage.k8s.io/snapshotter-secret-name": "rook-csi-rbd-provisioner", "snapshotNamePrefix": "x-"}
		}, []string{
			`parameters.clusterID is "other", want "rook-cl"`,
			`parameters.csi.storage.k8s.io/snapshotter-secret-namespace is missing, want "rook-cl"`,
			`parameters.snapshotNamePrefix is "x-", want it absent`,
		}},
		{"the Velero label removed", func(c *snapshotv1.VolumeSnapshotClass) { delete(c.Labels, VeleroSnapshotClassLabel) },
			[]string{`labels.velero.io/csi-volumesnapshot-class is missing, want "true"`}},
		{"someone's own label is theirs", func(c *snapshotv1.VolumeSnapshotClass) { c.Labels["team"] = "storage" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			have := want.DeepCopy()
			tt.edit(have)
			assert.Equal(t, tt.want, SnapshotClassDrift(want, have))
		})
	}
}
