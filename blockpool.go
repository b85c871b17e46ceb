package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// RenderBlockPool is the CephBlockPool ceph-<name> of a BlockStorage, in
// the CephCluster's namespace, controlled by the BlockStorage.
//
// Apply it with a merge patch (controllerutil.CreateOrPatch), never an
// Update or server-side apply: the Go types predate Rook v1.18 and would
// drop or claim fields they do not know.
func RenderBlockPool(bs *cephv1alpha1.BlockStorage, clusterNamespace string, r Replication) *cephv1.CephBlockPool {
	return &cephv1.CephBlockPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephBlockPool"},
		ObjectMeta: derivedMeta(BlockPoolName(bs.Name), clusterNamespace, bs, "BlockStorage"),
		Spec:       cephv1.NamedBlockPoolSpec{PoolSpec: replicatedPool(r)},
	}
}

// replicatedPool is a replicated pool sized by r. Size 1 carries
// requireSafeReplicaSize: false, without which Ceph refuses the pool.
//
// enableCrushUpdates is always on: Rook v1.18 changes an existing pool's
// CRUSH rule only when it is set (pkg/daemon/ceph/client/pool.go,
// updatePoolCrushRule). Without it a pool created with failure domain osd
// keeps letting every replica sit on one host after replication moves it
// to host, while the consumer's status says host; and keeps its old
// class's rule when the device class changes.
//
// A device class makes the pool's CRUSH rule take only OSDs of that class
// (Rook: ceph osd crush rule create-replicated <rule> default <domain>
// <class>); none, every OSD, as before classes existed.
func replicatedPool(r Replication) cephv1.PoolSpec {
	return cephv1.PoolSpec{
		FailureDomain:      r.FailureDomain,
		DeviceClass:        string(r.DeviceClass),
		EnableCrushUpdates: true,
		Replicated: cephv1.ReplicatedSpec{
			Size:                   uint(r.Size),
			RequireSafeReplicaSize: r.RequireSafeReplicaSize,
		},
	}
}

// derivedMeta names a derived object, labels it as the plugin's and makes
// the consumer its controller.
func derivedMeta(name, namespace string, owner metav1.Object, ownerKind string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       namespace,
		Labels:          map[string]string{cephv1alpha1.ManagedByLabel: cephv1alpha1.ManagedByValue},
		OwnerReferences: []metav1.OwnerReference{controllerReference(owner, ownerKind)},
	}
}
