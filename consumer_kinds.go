package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// consumerKinds are the consumer kinds, one ConsumerReconciler each; the
// manager's cache scope and the caches Start waits for follow this list.
var consumerKinds = []consumerKind{blockStorageKind, fileStorageKind, objectStorageKind}

// consumerObject is any consumer, as the ConsumerReconciler reads it.
type consumerObject interface {
	client.Object
	StorageStatus() *cephv1alpha1.StorageStatus
	RequestedReplicas() *int32
	RequestedDeviceClass() cephv1alpha1.DiskType
}

// consumerKind is one consumer kind as the plugin's setup, its cache and
// the tests see it. Its one implementation is kind[T, R].
type consumerKind interface {
	Kind() string
	RookKind() string
	NewObject() consumerObject
	NewRookObject() client.Object
	// DerivedName is the name of both derived objects of a consumer.
	DerivedName(consumer string) string
	// Budget is what a consumer asks of Ceph's budgets over tiers: its
	// pools' sizes and classes and the placements they have had, read
	// from its Rook object (none yet: nil histories).
	Budget(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, tiers Tiers) (ConsumerBudget, error)
	// Place is where and how a consumer's pools replicate over tiers,
	// held being what its Rook object's pools have now (zero: none yet),
	// which a device class never lowers.
	Place(consumer consumerObject, tiers Tiers, held Placement) (Placement, error)
	// Kept reads the consumer's Rook object and says where its pools are
	// or are going (kind.kept); ok is false when it has none to keep.
	Kept(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, tiers Tiers) (place Placement, ok bool, err error)
	// List lists the consumers of the kind.
	List(ctx context.Context, c client.Reader) ([]consumerObject, error)
	// setupReconciler registers the kind's ConsumerReconciler.
	setupReconciler(mgr manager.Manager, r consumerDeps) error
}

// kind describes a consumer kind whose objects are T and whose derived
// Rook object is R: everything kind-specific is here, typed, so the
// generic ConsumerReconciler[T, R] never asks what kind it runs.
type kind[T consumerObject, R client.Object] struct {
	kind, rookKind string
	newObject      func() T
	newList        func() client.ObjectList
	newRook        func() R
	derivedName    func(consumer string) string
	renderRook     func(obj T, cfg Config, p Placement) R
	// patchRook copies the fields the plugin owns from want into have, so
	// a merge patch from the old have touches nothing a concurrent writer
	// set (nor fields Rook's older Go types do not know).
	patchRook func(have, want R)
	// failureDomain is the placement (PoolPlacement) of the Rook object's
	// data pool.
	failureDomain func(R) string
	// held is the placement the Rook object's pools have now: what a
	// device class may not lower, and what a refused consumer keeps.
	held func(R) Placement
	// metadataFailureDomain is set for a kind with metadata pools, which
	// may be placed apart from the data (their own class; an object
	// store's replicate as automatic sizing says): their placement,
	// recorded in its own history.
	metadataFailureDomain func(R) string
	// metadataSeed, when set, is the history a metadata record starts
	// from on an object written before it had one: a filesystem's data
	// and metadata pools shared one record until classes could part them.
	metadataSeed string
	// metadataPools, set with metadataPlacement, names the Ceph pools the
	// metadata placement places, for messages.
	metadataPools func(consumer string) []string
	// metadataPlacement is set for a kind with metadata pools: their
	// replication, the data's being data, have the copies they have now.
	metadataPlacement func(obj T, data Replication, have int32, tiers Tiers) (Replication, error)
	rookPhase         func(R) string
	renderClass       func(obj T, cfg Config) *storagev1.StorageClass
	// renderSnapshotClass is an optional capability: set for a kind whose
	// volumes can be snapshotted (snapshotclass.go).
	renderSnapshotClass func(obj T, cfg Config) *snapshotv1.VolumeSnapshotClass
	// wantsDefaultClass is an optional capability: set for a kind whose
	// consumers may ask for the cluster's default StorageClass.
	wantsDefaultClass func(T) bool
}

func (k kind[T, R]) Kind() string                       { return k.kind }
func (k kind[T, R]) RookKind() string                   { return k.rookKind }
func (k kind[T, R]) NewObject() consumerObject          { return k.newObject() }
func (k kind[T, R]) NewRookObject() client.Object       { return k.newRook() }
func (k kind[T, R]) DerivedName(consumer string) string { return k.derivedName(consumer) }

func (k kind[T, R]) List(ctx context.Context, c client.Reader) ([]consumerObject, error) {
	items, err := k.list(ctx, c)
	out := make([]consumerObject, 0, len(items))
	for _, o := range items {
		out = append(out, o)
	}
	return out, err
}

func (k kind[T, R]) Budget(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, tiers Tiers) (ConsumerBudget, error) {
	rook, exists, err := k.readRook(ctx, c, namespace, consumer)
	if err != nil {
		return ConsumerBudget{}, err
	}
	place, ok := k.kept(consumer, tiers, rook, exists)
	if !ok {
		// No disks (of its class) yet: sizes 0, counted as 1.
		place = Placement{Data: Replication{DeviceClass: consumer.RequestedDeviceClass()}}
		place.Metadata = place.Data
	}
	return k.budgetOf(consumer.GetName(), place, rook, exists), nil
}

func (k kind[T, R]) Kept(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, tiers Tiers) (Placement, bool, error) {
	rook, exists, err := k.readRook(ctx, c, namespace, consumer)
	if err != nil {
		return Placement{}, false, err
	}
	place, ok := k.kept(consumer, tiers, rook, exists)
	return place, ok, nil
}

// readRook reads the consumer's Rook object; exists is false when there
// is none.
func (k kind[T, R]) readRook(ctx context.Context, c client.Reader, namespace string, consumer consumerObject) (R, bool, error) {
	rook := k.newRook()
	name := k.derivedName(consumer.GetName())
	switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rook); {
	case apierrors.IsNotFound(err):
		return rook, false, nil
	case err != nil:
		return rook, false, fmt.Errorf("read %s %s/%s: %w", k.rookKind, namespace, name, err)
	}
	return rook, true, nil
}

// kept is where a consumer's pools are, or are going: its placement over
// tiers (Place, from what its Rook object holds), or, when that is refused
// (a class without disks, or on too few nodes), what its Rook object
// holds, for then nothing is written and nothing moves. ok is false when
// it is refused and has no Rook object: it has no pools.
func (k kind[T, R]) kept(consumer consumerObject, tiers Tiers, rook R, exists bool) (Placement, bool) {
	var held Placement
	if exists {
		held = k.held(rook)
	}
	place, err := k.Place(consumer, tiers, held)
	switch {
	case err == nil:
		return place, true
	case exists:
		return held, true
	}
	return Placement{}, false
}

// Place sizes the consumer's data pool on its class's tier
// (TierReplication) and places its metadata pools as the kind does, held
// being what its Rook object's pools have now. A refusal names the pools
// it is about.
func (k kind[T, R]) Place(consumer consumerObject, tiers Tiers, held Placement) (Placement, error) {
	obj, ok := consumer.(T)
	if !ok {
		return Placement{}, fmt.Errorf("a %s is not a %T", k.kind, consumer)
	}
	name := k.kind + " " + obj.GetName()
	data, err := TierReplication(obj.RequestedReplicas(), held.Data.Size, obj.RequestedDeviceClass(), tiers)
	if err != nil {
		return Placement{}, refusalOf(err, name)
	}
	place := Placement{Data: data, Metadata: data}
	if k.metadataPlacement != nil {
		place.Metadata, err = k.metadataPlacement(obj, data, held.Metadata.Size, tiers)
	}
	return place, refusalOf(err, name+"'s metadata")
}

// refusalOf names the pools a TooFewNodesOfClassError is about; any other
// error is returned as it is.
func refusalOf(err error, pools string) error {
	var few *TooFewNodesOfClassError
	if errors.As(err, &few) {
		few.Pools = pools
	}
	return err
}

// budgetOf is a consumer's budget as placed, with the placement histories
// of its Rook object when it exists (else the placements it will be
// created with).
func (k kind[T, R]) budgetOf(consumer string, place Placement, rook R, exists bool) ConsumerBudget {
	b := ConsumerBudget{Kind: k.kind, Name: consumer, Size: place.Data.Size,
		DeviceClass: place.Data.DeviceClass, MetadataClass: place.Metadata.DeviceClass}
	if k.metadataFailureDomain != nil {
		b.MetadataSize = place.Metadata.Size
	}
	if !exists {
		if place.Data.FailureDomain != "" {
			b.FailureDomains = []string{PoolPlacement(place.Data.FailureDomain, place.Data.DeviceClass)}
			b.MetadataFailureDomains = []string{PoolPlacement(place.Metadata.FailureDomain, place.Metadata.DeviceClass)}
		}
		return b
	}
	records := k.domainRecords()
	b.FailureDomains = recordedDomains(rook, records[0])
	if len(records) > 1 {
		b.MetadataFailureDomains = recordedDomains(rook, records[1])
	}
	return b
}

// placementRecord is one placement history the kind keeps on its Rook
// object: the annotation it lives in, the annotation it starts from when
// it has none yet (seed, optional), and the placement it follows.
type placementRecord[R client.Object] struct {
	annotation, seed string
	of               func(R) string
}

// domainRecords are the placement histories the kind keeps, the data
// pool's first.
func (k kind[T, R]) domainRecords() []placementRecord[R] {
	records := []placementRecord[R]{{annotation: cephv1alpha1.FailureDomainsAnnotation, of: k.failureDomain}}
	if k.metadataFailureDomain != nil {
		records = append(records, placementRecord[R]{annotation: cephv1alpha1.MetadataFailureDomainsAnnotation, seed: k.metadataSeed, of: k.metadataFailureDomain})
	}
	return records
}

// history is the record as stored, or its seed's for an object written
// before it had one.
func (rec placementRecord[R]) history(rook R) string {
	annotations := rook.GetAnnotations()
	if h, ok := annotations[rec.annotation]; ok || rec.seed == "" {
		return h
	}
	return annotations[rec.seed]
}

// recordedDomains is a placement history of a Rook object: the record, or
// the current placement for an object written before the record existed.
func recordedDomains[R client.Object](rook R, rec placementRecord[R]) []string {
	history := NextFailureDomains(rec.history(rook), rec.of(rook), "")
	if history == "" {
		return nil
	}
	return strings.Split(history, ",")
}

// list lists the consumers of the kind, typed.
func (k kind[T, R]) list(ctx context.Context, c client.Reader) ([]T, error) {
	list := k.newList()
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list %ss: %w", k.kind, err)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, item := range items {
		o, ok := item.(T)
		if !ok {
			return nil, fmt.Errorf("a %s list holds a %T", k.kind, item)
		}
		out = append(out, o)
	}
	return out, nil
}

// asConsumer is o as the kind's type, when it is one.
func (k kind[T, R]) asConsumer(o client.Object) (T, bool) {
	t, ok := o.(T)
	return t, ok
}

// supportsDefaultClass says whether the kind has the default-class
// capability.
func (k kind[T, R]) supportsDefaultClass() bool { return k.wantsDefaultClass != nil }

// wantsDefault says whether a consumer asks for the default class.
func (k kind[T, R]) wantsDefault(o T) bool {
	return k.wantsDefaultClass != nil && k.wantsDefaultClass(o)
}

func (k kind[T, R]) setupReconciler(mgr manager.Manager, deps consumerDeps) error {
	r := &ConsumerReconciler[T, R]{Kind: k, consumerDeps: deps}
	return r.SetupWithManager(mgr)
}

func blockPoolPhase(p *cephv1.CephBlockPool) string {
	if p.Status == nil {
		return ""
	}
	return string(p.Status.Phase)
}

func filesystemPhase(f *cephv1.CephFilesystem) string {
	if f.Status == nil {
		return ""
	}
	return string(f.Status.Phase)
}

func objectStorePhase(o *cephv1.CephObjectStore) string {
	if o.Status == nil {
		return ""
	}
	return string(o.Status.Phase)
}

var blockStorageKind = kind[*cephv1alpha1.BlockStorage, *cephv1.CephBlockPool]{
	kind:        "BlockStorage",
	rookKind:    "CephBlockPool",
	newObject:   func() *cephv1alpha1.BlockStorage { return &cephv1alpha1.BlockStorage{} },
	newList:     func() client.ObjectList { return &cephv1alpha1.BlockStorageList{} },
	newRook:     func() *cephv1.CephBlockPool { return &cephv1.CephBlockPool{} },
	derivedName: BlockPoolName,
	renderRook: func(o *cephv1alpha1.BlockStorage, cfg Config, p Placement) *cephv1.CephBlockPool {
		return RenderBlockPool(o, cfg.ClusterNamespace, p.Data)
	},
	patchRook: func(have, want *cephv1.CephBlockPool) {
		patchPool(&have.Spec.PoolSpec, want.Spec.PoolSpec)
	},
	failureDomain: func(p *cephv1.CephBlockPool) string { return placementOf(p.Spec.PoolSpec) },
	rookPhase:     blockPoolPhase,
	renderClass: func(o *cephv1alpha1.BlockStorage, cfg Config) *storagev1.StorageClass {
		return RenderRBDStorageClass(o, cfg)
	},
	renderSnapshotClass: RenderRBDSnapshotClass,
	wantsDefaultClass:   func(o *cephv1alpha1.BlockStorage) bool { return o.Spec.Default },
	held: func(p *cephv1.CephBlockPool) Placement {
		held := heldReplication(p.Spec.PoolSpec)
		return Placement{Data: held, Metadata: held}
	},
}

var fileStorageKind = kind[*cephv1alpha1.FileStorage, *cephv1.CephFilesystem]{
	kind:        "FileStorage",
	rookKind:    "CephFilesystem",
	newObject:   func() *cephv1alpha1.FileStorage { return &cephv1alpha1.FileStorage{} },
	newList:     func() client.ObjectList { return &cephv1alpha1.FileStorageList{} },
	newRook:     func() *cephv1.CephFilesystem { return &cephv1.CephFilesystem{} },
	derivedName: FilesystemName,
	renderRook: func(o *cephv1alpha1.FileStorage, cfg Config, p Placement) *cephv1.CephFilesystem {
		return RenderFilesystem(o, cfg.ClusterNamespace, p)
	},
	patchRook: func(have, want *cephv1.CephFilesystem) {
		patchPool(&have.Spec.MetadataPool.PoolSpec, want.Spec.MetadataPool.PoolSpec)
		for _, wantPool := range want.Spec.DataPools {
			found := false
			for i := range have.Spec.DataPools {
				if have.Spec.DataPools[i].Name == wantPool.Name {
					patchPool(&have.Spec.DataPools[i].PoolSpec, wantPool.PoolSpec)
					found = true
				}
			}
			if !found {
				have.Spec.DataPools = append(have.Spec.DataPools, wantPool)
			}
		}
		have.Spec.PreserveFilesystemOnDelete = want.Spec.PreserveFilesystemOnDelete
		have.Spec.MetadataServer.ActiveCount = want.Spec.MetadataServer.ActiveCount
		have.Spec.MetadataServer.ActiveStandby = want.Spec.MetadataServer.ActiveStandby
	},
	failureDomain: func(f *cephv1.CephFilesystem) string {
		for _, pool := range f.Spec.DataPools {
			if pool.Name == FilesystemDataPool {
				return placementOf(pool.PoolSpec)
			}
		}
		return placementOf(f.Spec.MetadataPool.PoolSpec)
	},
	metadataFailureDomain: func(f *cephv1.CephFilesystem) string { return placementOf(f.Spec.MetadataPool.PoolSpec) },
	metadataSeed:          cephv1alpha1.FailureDomainsAnnotation,
	metadataPlacement: func(o *cephv1alpha1.FileStorage, data Replication, have int32, tiers Tiers) (Replication, error) {
		return MetadataReplication(data, o.Spec.Replicas, have, o.Spec.MetadataDeviceClass, tiers)
	},
	metadataPools: func(consumer string) []string { return []string{FilesystemMetadataPoolName(FilesystemName(consumer))} },
	rookPhase:     filesystemPhase,
	renderClass: func(o *cephv1alpha1.FileStorage, cfg Config) *storagev1.StorageClass {
		return RenderCephFSStorageClass(o, cfg)
	},
	renderSnapshotClass: RenderCephFSSnapshotClass,
	held: func(f *cephv1.CephFilesystem) Placement {
		held := Placement{Metadata: heldReplication(f.Spec.MetadataPool.PoolSpec)}
		for _, pool := range f.Spec.DataPools {
			if pool.Name == FilesystemDataPool {
				held.Data = heldReplication(pool.PoolSpec)
			}
		}
		return held
	},
}

var objectStorageKind = kind[*cephv1alpha1.ObjectStorage, *cephv1.CephObjectStore]{
	kind:        "ObjectStorage",
	rookKind:    "CephObjectStore",
	newObject:   func() *cephv1alpha1.ObjectStorage { return &cephv1alpha1.ObjectStorage{} },
	newList:     func() client.ObjectList { return &cephv1alpha1.ObjectStorageList{} },
	newRook:     func() *cephv1.CephObjectStore { return &cephv1.CephObjectStore{} },
	derivedName: ObjectStoreName,
	renderRook: func(o *cephv1alpha1.ObjectStorage, cfg Config, p Placement) *cephv1.CephObjectStore {
		return RenderObjectStore(o, cfg.ClusterNamespace, p)
	},
	patchRook: func(have, want *cephv1.CephObjectStore) {
		patchPool(&have.Spec.MetadataPool, want.Spec.MetadataPool)
		patchPool(&have.Spec.DataPool, want.Spec.DataPool)
		have.Spec.PreservePoolsOnDelete = want.Spec.PreservePoolsOnDelete
		have.Spec.Gateway.Port = want.Spec.Gateway.Port
		have.Spec.Gateway.Instances = want.Spec.Gateway.Instances
	},
	failureDomain:         func(o *cephv1.CephObjectStore) string { return placementOf(o.Spec.DataPool) },
	metadataFailureDomain: func(o *cephv1.CephObjectStore) string { return placementOf(o.Spec.MetadataPool) },
	metadataPlacement: func(_ *cephv1alpha1.ObjectStorage, data Replication, _ int32, tiers Tiers) (Replication, error) {
		return SharedMetadataReplication(data, tiers)
	},
	metadataPools: func(consumer string) []string { return ObjectStoreMetadataPoolNames(ObjectStoreName(consumer)) },
	rookPhase:     objectStorePhase,
	renderClass: func(o *cephv1alpha1.ObjectStorage, cfg Config) *storagev1.StorageClass {
		return RenderBucketStorageClass(o, cfg)
	},
	held: func(o *cephv1.CephObjectStore) Placement {
		return Placement{Data: heldReplication(o.Spec.DataPool), Metadata: heldReplication(o.Spec.MetadataPool)}
	},
}

// placementOf is a pool spec's entry in a placement history.
func placementOf(p cephv1.PoolSpec) string {
	return PoolPlacement(p.FailureDomain, cephv1alpha1.DiskType(p.DeviceClass))
}

// heldReplication is the replication a pool spec of ours has now.
func heldReplication(p cephv1.PoolSpec) Replication {
	return Replication{
		Size:                   int32(min(p.Replicated.Size, maxReplicas)),
		FailureDomain:          p.FailureDomain,
		RequireSafeReplicaSize: p.Replicated.RequireSafeReplicaSize,
		DeviceClass:            cephv1alpha1.DiskType(p.DeviceClass),
	}
}

// patchPool copies the replication a consumer decides onto a pool spec,
// with enableCrushUpdates, without which Rook keeps an existing pool's old
// CRUSH rule when the failure domain or device class changes
// (replicatedPool).
func patchPool(have *cephv1.PoolSpec, want cephv1.PoolSpec) {
	have.FailureDomain = want.FailureDomain
	have.DeviceClass = want.DeviceClass
	have.EnableCrushUpdates = want.EnableCrushUpdates
	have.Replicated.Size = want.Replicated.Size
	have.Replicated.RequireSafeReplicaSize = want.Replicated.RequireSafeReplicaSize
}
