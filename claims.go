package main

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// Derived object names. A consumer's name is operator-chosen and a
// StorageClass is cluster-scoped, so an unprefixed name could collide with
// a class that is already there (a BlockStorage called local-path would take
// over k3d's default class and garbage-collect it on delete). The prefix
// makes collisions unlikely; the controller-reference check on the derived
// objects is what makes them harmless.
const (
	blockPrefix  = "ceph-"
	filePrefix   = "cephfs-"
	objectPrefix = "cephobj-"
)

// BlockPoolName names both the CephBlockPool and the RBD StorageClass of a
// BlockStorage: ceph-<name>.
func BlockPoolName(blockStorage string) string { return blockPrefix + blockStorage }

// FilesystemName names both the CephFilesystem and the CephFS StorageClass
// of a FileStorage: cephfs-<name>.
func FilesystemName(fileStorage string) string { return filePrefix + fileStorage }

// ObjectStoreName names both the CephObjectStore and the bucket
// StorageClass of an ObjectStorage: cephobj-<name>.
func ObjectStoreName(objectStorage string) string { return objectPrefix + objectStorage }

// ClaimOwners decides, for every disk any live DiskPool lists, which pool
// owns it: the oldest pool (by creationTimestamp, ties broken by name).
// Nothing stops two pools from listing the same disk; the younger one skips
// it and the disk is counted once. The same answer fills Disk.status.claimedBy,
// so the inventory and the reconcilers never disagree.
//
// Pools being deleted own nothing. The pools are sorted once and each disk
// is decided the first time a pool lists it: O(P log P + total disk names),
// not a scan of all pools per disk. The input slice is not reordered.
func ClaimOwners(pools []cephv1alpha1.DiskPool) map[string]string {
	return claimOwners(pools, nil, listedCount(pools))
}

// ClaimOwnersOf is ClaimOwners answered for the named disks only (a disk no
// live pool lists has no entry): what one node's inventory needs. Its map
// holds a node's disks, not every claimed disk; at 10,000 disks that map
// was half of what a restart allocated, once per discovery ConfigMap.
func ClaimOwnersOf(pools []cephv1alpha1.DiskPool, disks map[string]bool) map[string]string {
	return claimOwners(pools, disks, len(disks))
}

// claimOwners decides the owners of the disks in only (of every disk when
// only is nil).
func claimOwners(pools []cephv1alpha1.DiskPool, only map[string]bool, size int) map[string]string {
	owners := make(map[string]string, size)
	for _, pool := range byAge(pools) {
		for _, disk := range pool.Spec.Disks {
			if only != nil && !only[disk] {
				continue
			}
			if _, taken := owners[disk]; !taken {
				owners[disk] = pool.Name
			}
		}
	}
	return owners
}

// byAge returns the live pools, oldest first, ties broken by name.
func byAge(pools []cephv1alpha1.DiskPool) []*cephv1alpha1.DiskPool {
	live := make([]*cephv1alpha1.DiskPool, 0, len(pools))
	for i := range pools {
		if pools[i].DeletionTimestamp == nil {
			live = append(live, &pools[i])
		}
	}
	slices.SortFunc(live, cephv1alpha1.OlderFirst)
	return live
}

// DefaultClassHolder decides, among the live consumers asking for the
// cluster's default StorageClass, which one holds it: the oldest, ties on
// name (cephv1alpha1.OlderFirst, the rule that also decides contested disks). ok is
// false when nobody asks.
func DefaultClassHolder[O metav1.Object](askers []O) (holder O, ok bool) {
	var live []O
	for _, a := range askers {
		if a.GetDeletionTimestamp().IsZero() {
			live = append(live, a)
		}
	}
	if len(live) == 0 {
		return holder, false
	}
	return slices.MinFunc(live, cephv1alpha1.OlderFirst), true
}

// controllerReference makes a consumer the controller owner of a derived
// object, so deleting the consumer garbage-collects it. A namespaced
// dependent may have a cluster-scoped owner.
func controllerReference(owner metav1.Object, kind string) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         cephv1alpha1.GroupVersion.String(),
		Kind:               kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptrTo(true),
		BlockOwnerDeletion: ptrTo(true),
	}
}

// IsControlledBy reports whether obj's controller reference points at the
// owner with this UID. Ownership is decided by UID, never by name: a
// same-named object without such a reference is foreign and is never
// adopted, updated or deleted.
func IsControlledBy(obj metav1.Object, owner types.UID) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && owner != "" && ref.UID == owner
}

// listedCount is how many disk names the pools list, duplicates included
// (to size maps: at 10,000 disks, growing them was a tenth of a union).
func listedCount(pools []cephv1alpha1.DiskPool) int {
	n := 0
	for i := range pools {
		n += len(pools[i].Spec.Disks)
	}
	return n
}
