package main

import (
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// ObjectStorePort is the RGW Service port; TLS is a gateway concern.
const ObjectStorePort = 80

// objectStoreMetadataPools are the metadata pools Rook makes for each
// object store, named <store>.<pool>, beside .rgw.root, which every store
// shares (pkg/operator/ceph/object/objectstore.go metadataPools,
// rootPool): all of them get the store's metadataPool spec.
var objectStoreMetadataPools = []string{"rgw.control", "rgw.meta", "rgw.log", "rgw.buckets.index", "rgw.buckets.non-ec", "rgw.otp"}

// rgwRootPool is the realm pool every object store shares.
const rgwRootPool = ".rgw.root"

// ObjectStoreMetadataPoolNames are the Ceph pools an object store's
// metadataPool spec places: its own six, then .rgw.root.
func ObjectStoreMetadataPoolNames(store string) []string {
	names := make([]string, 0, len(objectStoreMetadataPools)+1)
	for _, pool := range objectStoreMetadataPools {
		names = append(names, store+"."+pool)
	}
	return append(names, rgwRootPool)
}

// RenderObjectStore is the CephObjectStore cephobj-<name> of an
// ObjectStorage, in the CephCluster's namespace, controlled by the
// ObjectStorage. It runs spec.gatewayInstances RGW pods behind the Service
// rook-ceph-rgw-cephobj-<name>. preservePoolsOnDelete is always true:
// deleting the ObjectStorage keeps the cephobj-<name>.rgw.* pools and their
// data.
//
// The data pool is placed as p.Data. The metadata pools are placed as
// p.Metadata: they replicate as automatic sizing says, whatever the
// consumer asked for, on a class every store agrees on
// (SharedMetadataReplication): Rook creates and
// updates the one .rgw.root pool every object store shares with each
// store's metadataPool spec (pkg/operator/ceph/object/objectstore.go,
// CreateObjectStorePools), so stores with different replicas would take
// turns resizing it, and one store's replicas: 1 would leave every store's
// realm configuration with a single copy. Metadata is small; the cost of
// the extra copies is negligible.
func RenderObjectStore(store *cephv1alpha1.ObjectStorage, clusterNamespace string, p Placement) *cephv1.CephObjectStore {
	instances := store.Spec.GatewayInstances
	if instances < 1 {
		instances = 1
	}
	return &cephv1.CephObjectStore{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1.SchemeGroupVersion.String(), Kind: "CephObjectStore"},
		ObjectMeta: derivedMeta(ObjectStoreName(store.Name), clusterNamespace, store, "ObjectStorage"),
		Spec: cephv1.ObjectStoreSpec{
			MetadataPool:          replicatedPool(p.Metadata),
			DataPool:              replicatedPool(p.Data),
			PreservePoolsOnDelete: true,
			Gateway:               cephv1.GatewaySpec{Port: ObjectStorePort, Instances: instances},
		},
	}
}
