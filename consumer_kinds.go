package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	storagev1 "k8s.io/api/storage/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// consumerKinds are the consumer kinds, one ConsumerReconciler each; the
// manager's cache scope and the caches Start waits for follow this list.
var consumerKinds = []consumerKind{blockStorageKind, fileStorageKind, objectStorageKind}

// consumerKind adapts one consumer kind to the generic ConsumerReconciler:
// how to read its spec and status, and how to render and patch the Rook
// object and StorageClass it derives. Everything kind-specific is here.
type consumerKind struct {
	// Kind is the consumer's kind, RookKind the kind of what it derives.
	Kind, RookKind string
	NewObject      func() client.Object
	NewList        func() client.ObjectList
	NewRookObject  func() client.Object
	Replicas       func(client.Object) *int32
	Status         func(client.Object) *cephv1alpha1.StorageStatus
	// DerivedName is the name of both derived objects.
	DerivedName func(consumer string) string
	RenderRook  func(obj client.Object, cfg Config, r Replication) client.Object
	// PatchRook copies the fields the plugin owns from want into have, so
	// a merge patch from the old have touches nothing a concurrent writer
	// set (nor fields Rook's older Go types do not know).
	PatchRook   func(have, want client.Object)
	RookPhase   func(client.Object) string
	RenderClass func(obj client.Object, cfg Config) *storagev1.StorageClass
	// WantsDefaultClass is whether the consumer asks for the cluster's
	// default StorageClass (BlockStorage only).
	WantsDefaultClass func(client.Object) bool
}

var blockStorageKind = consumerKind{
	Kind:          "BlockStorage",
	RookKind:      "CephBlockPool",
	NewObject:     func() client.Object { return &cephv1alpha1.BlockStorage{} },
	NewList:       func() client.ObjectList { return &cephv1alpha1.BlockStorageList{} },
	NewRookObject: func() client.Object { return &cephv1.CephBlockPool{} },
	Replicas:      func(o client.Object) *int32 { return o.(*cephv1alpha1.BlockStorage).Spec.Replicas },
	Status:        func(o client.Object) *cephv1alpha1.StorageStatus { return &o.(*cephv1alpha1.BlockStorage).Status },
	DerivedName:   BlockPoolName,
	RenderRook: func(o client.Object, cfg Config, r Replication) client.Object {
		return RenderBlockPool(o.(*cephv1alpha1.BlockStorage), cfg.ClusterNamespace, r)
	},
	PatchRook: func(have, want client.Object) {
		h, w := have.(*cephv1.CephBlockPool), want.(*cephv1.CephBlockPool)
		patchPool(&h.Spec.PoolSpec, w.Spec.PoolSpec)
	},
	RookPhase: func(o client.Object) string {
		if s := o.(*cephv1.CephBlockPool).Status; s != nil {
			return string(s.Phase)
		}
		return ""
	},
	RenderClass: func(o client.Object, cfg Config) *storagev1.StorageClass {
		return RenderRBDStorageClass(o.(*cephv1alpha1.BlockStorage), cfg)
	},
	WantsDefaultClass: func(o client.Object) bool { return o.(*cephv1alpha1.BlockStorage).Spec.Default },
}

var fileStorageKind = consumerKind{
	Kind:          "FileStorage",
	RookKind:      "CephFilesystem",
	NewObject:     func() client.Object { return &cephv1alpha1.FileStorage{} },
	NewList:       func() client.ObjectList { return &cephv1alpha1.FileStorageList{} },
	NewRookObject: func() client.Object { return &cephv1.CephFilesystem{} },
	Replicas:      func(o client.Object) *int32 { return o.(*cephv1alpha1.FileStorage).Spec.Replicas },
	Status:        func(o client.Object) *cephv1alpha1.StorageStatus { return &o.(*cephv1alpha1.FileStorage).Status },
	DerivedName:   FilesystemName,
	RenderRook: func(o client.Object, cfg Config, r Replication) client.Object {
		return RenderFilesystem(o.(*cephv1alpha1.FileStorage), cfg.ClusterNamespace, r)
	},
	PatchRook: func(have, want client.Object) {
		h, w := have.(*cephv1.CephFilesystem), want.(*cephv1.CephFilesystem)
		patchPool(&h.Spec.MetadataPool.PoolSpec, w.Spec.MetadataPool.PoolSpec)
		for _, wantPool := range w.Spec.DataPools {
			found := false
			for i := range h.Spec.DataPools {
				if h.Spec.DataPools[i].Name == wantPool.Name {
					patchPool(&h.Spec.DataPools[i].PoolSpec, wantPool.PoolSpec)
					found = true
				}
			}
			if !found {
				h.Spec.DataPools = append(h.Spec.DataPools, wantPool)
			}
		}
		h.Spec.PreserveFilesystemOnDelete = w.Spec.PreserveFilesystemOnDelete
		h.Spec.MetadataServer.ActiveCount = w.Spec.MetadataServer.ActiveCount
		h.Spec.MetadataServer.ActiveStandby = w.Spec.MetadataServer.ActiveStandby
	},
	RookPhase: func(o client.Object) string {
		if s := o.(*cephv1.CephFilesystem).Status; s != nil {
			return string(s.Phase)
		}
		return ""
	},
	RenderClass: func(o client.Object, cfg Config) *storagev1.StorageClass {
		return RenderCephFSStorageClass(o.(*cephv1alpha1.FileStorage), cfg)
	},
	WantsDefaultClass: func(client.Object) bool { return false },
}

var objectStorageKind = consumerKind{
	Kind:          "ObjectStorage",
	RookKind:      "CephObjectStore",
	NewObject:     func() client.Object { return &cephv1alpha1.ObjectStorage{} },
	NewList:       func() client.ObjectList { return &cephv1alpha1.ObjectStorageList{} },
	NewRookObject: func() client.Object { return &cephv1.CephObjectStore{} },
	Replicas:      func(o client.Object) *int32 { return o.(*cephv1alpha1.ObjectStorage).Spec.Replicas },
	Status:        func(o client.Object) *cephv1alpha1.StorageStatus { return &o.(*cephv1alpha1.ObjectStorage).Status },
	DerivedName:   ObjectStoreName,
	RenderRook: func(o client.Object, cfg Config, r Replication) client.Object {
		return RenderObjectStore(o.(*cephv1alpha1.ObjectStorage), cfg.ClusterNamespace, r)
	},
	PatchRook: func(have, want client.Object) {
		h, w := have.(*cephv1.CephObjectStore), want.(*cephv1.CephObjectStore)
		patchPool(&h.Spec.MetadataPool, w.Spec.MetadataPool)
		patchPool(&h.Spec.DataPool, w.Spec.DataPool)
		h.Spec.PreservePoolsOnDelete = w.Spec.PreservePoolsOnDelete
		h.Spec.Gateway.Port = w.Spec.Gateway.Port
		h.Spec.Gateway.Instances = w.Spec.Gateway.Instances
	},
	RookPhase: func(o client.Object) string {
		if s := o.(*cephv1.CephObjectStore).Status; s != nil {
			return string(s.Phase)
		}
		return ""
	},
	RenderClass: func(o client.Object, cfg Config) *storagev1.StorageClass {
		return RenderBucketStorageClass(o.(*cephv1alpha1.ObjectStorage), cfg)
	},
	WantsDefaultClass: func(client.Object) bool { return false },
}

// patchPool copies the replication a consumer decides onto a pool spec,
// with enableCrushUpdates, without which Rook keeps an existing pool's old
// CRUSH rule when the failure domain changes (replicatedPool).
func patchPool(have *cephv1.PoolSpec, want cephv1.PoolSpec) {
	have.FailureDomain = want.FailureDomain
	have.EnableCrushUpdates = want.EnableCrushUpdates
	have.Replicated.Size = want.Replicated.Size
	have.Replicated.RequireSafeReplicaSize = want.Replicated.RequireSafeReplicaSize
}
