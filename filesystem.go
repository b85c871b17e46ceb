package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// FilesystemDataPool is the name of the CephFilesystem's one data pool
// entry. Rook names the Ceph pool <fs>-<this>, and the CephFS StorageClass
// must name that pool (FilesystemDataPoolName) or PVCs fail.
const FilesystemDataPool = "data"

// FilesystemDataPoolName is the Ceph pool that holds a filesystem's data:
// <fs>-data.
func FilesystemDataPoolName(fsName string) string { return fsName + "-" + FilesystemDataPool }

// FilesystemMetadataPoolName is the Ceph pool that holds a filesystem's
// metadata: <fs>-metadata, as Rook names an unnamed metadata pool
// (pkg/operator/ceph/file/filesystem.go generateMetaDataPoolName).
func FilesystemMetadataPoolName(fsName string) string { return fsName + "-metadata" }

// RenderFilesystem is the CephFilesystem cephfs-<name> of a FileStorage, in
// the CephCluster's namespace, controlled by the FileStorage. The data pool
// is placed as p.Data, the metadata pool as p.Metadata (the same size and
// failure domain, maybe a faster class: MetadataReplication). It runs spec.metadataServers
// active MDS daemons, each with a standby (activeStandby), so a crashed
// MDS fails over without an operator. preserveFilesystemOnDelete is always
// true: deleting the FileStorage removes the CephFilesystem object, never
// the data.
func RenderFilesystem(fs *cephv1alpha1.FileStorage, clusterNamespace string, p Placement) *cephv1.CephFilesystem {
	active := fs.Spec.MetadataServers
	if active < 1 {
		active = 1
	}
	return &cephv1.CephFilesystem{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephFilesystem"},
		ObjectMeta: derivedMeta(FilesystemName(fs.Name), clusterNamespace, fs, "FileStorage"),
		Spec: cephv1.FilesystemSpec{
			MetadataPool:               cephv1.NamedPoolSpec{PoolSpec: replicatedPool(p.Metadata)},
			DataPools:                  []cephv1.NamedPoolSpec{{Name: FilesystemDataPool, PoolSpec: replicatedPool(p.Data)}},
			PreserveFilesystemOnDelete: true,
			MetadataServer:             cephv1.MetadataServerSpec{ActiveCount: active, ActiveStandby: true},
		},
	}
}
