package main

import (
	"context"
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
	// Budget is what a consumer asks of Ceph's budgets on nodes nodes:
	// its pools' sizes and the failure domains they have had, read from
	// its Rook object (none yet: nil histories).
	Budget(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, nodes int) (ConsumerBudget, error)
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
	renderRook     func(obj T, cfg Config, r Replication) R
	// patchRook copies the fields the plugin owns from want into have, so
	// a merge patch from the old have touches nothing a concurrent writer
	// set (nor fields Rook's older Go types do not know).
	patchRook func(have, want R)
	// failureDomain is the failure domain of the Rook object's pools (the
	// plugin writes the consumer's to all of them but an object store's
	// metadata pools).
	failureDomain func(R) string
	// metadataFailureDomain is set for a kind whose metadata pools
	// replicate apart from the consumer (an object store's, as automatic
	// sizing says): their domain, recorded in its own history.
	metadataFailureDomain func(R) string
	rookPhase             func(R) string
	renderClass           func(obj T, cfg Config) *storagev1.StorageClass
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

func (k kind[T, R]) Budget(ctx context.Context, c client.Reader, namespace string, consumer consumerObject, nodes int) (ConsumerBudget, error) {
	repl, err := ComputeReplication(consumer.RequestedReplicas(), nodes)
	if err != nil {
		repl = Replication{Nodes: nodes} // no nodes yet: sizes 0, counted as 1
	}
	rook := k.newRook()
	name := k.derivedName(consumer.GetName())
	switch err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, rook); {
	case apierrors.IsNotFound(err):
		return k.budgetOf(consumer.GetName(), repl, rook, false), nil
	case err != nil:
		return ConsumerBudget{}, fmt.Errorf("read %s %s/%s: %w", k.rookKind, namespace, name, err)
	}
	return k.budgetOf(consumer.GetName(), repl, rook, true), nil
}

// budgetOf is a consumer's budget sized by repl, with the failure domain
// histories of its Rook object when it exists.
func (k kind[T, R]) budgetOf(consumer string, repl Replication, rook R, exists bool) ConsumerBudget {
	b := ConsumerBudget{Kind: k.kind, Name: consumer, Size: repl.Size}
	if k.metadataFailureDomain != nil {
		b.MetadataSize = repl.Automatic().Size
	}
	if !exists {
		return b
	}
	b.FailureDomains = recordedDomains(rook, FailureDomainsAnnotation, k.failureDomain)
	if k.metadataFailureDomain != nil {
		b.MetadataFailureDomains = recordedDomains(rook, MetadataFailureDomainsAnnotation, k.metadataFailureDomain)
	}
	return b
}

// domainRecords are the failure domain histories the kind keeps on its
// Rook object: the annotation each lives in and the domain it follows.
func (k kind[T, R]) domainRecords() map[string]func(R) string {
	records := map[string]func(R) string{FailureDomainsAnnotation: k.failureDomain}
	if k.metadataFailureDomain != nil {
		records[MetadataFailureDomainsAnnotation] = k.metadataFailureDomain
	}
	return records
}

// recordedDomains is a failure domain history of a Rook object: the record
// in annotation, or the current domain for an object written before the
// record existed.
func recordedDomains[R client.Object](rook R, annotation string, domain func(R) string) []string {
	history := NextFailureDomains(rook.GetAnnotations()[annotation], domain(rook), "")
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
	renderRook: func(o *cephv1alpha1.BlockStorage, cfg Config, r Replication) *cephv1.CephBlockPool {
		return RenderBlockPool(o, cfg.ClusterNamespace, r)
	},
	patchRook: func(have, want *cephv1.CephBlockPool) {
		patchPool(&have.Spec.PoolSpec, want.Spec.PoolSpec)
	},
	failureDomain: func(p *cephv1.CephBlockPool) string { return p.Spec.FailureDomain },
	rookPhase:     blockPoolPhase,
	renderClass: func(o *cephv1alpha1.BlockStorage, cfg Config) *storagev1.StorageClass {
		return RenderRBDStorageClass(o, cfg)
	},
	renderSnapshotClass: RenderRBDSnapshotClass,
	wantsDefaultClass:   func(o *cephv1alpha1.BlockStorage) bool { return o.Spec.Default },
}

var fileStorageKind = kind[*cephv1alpha1.FileStorage, *cephv1.CephFilesystem]{
	kind:        "FileStorage",
	rookKind:    "CephFilesystem",
	newObject:   func() *cephv1alpha1.FileStorage { return &cephv1alpha1.FileStorage{} },
	newList:     func() client.ObjectList { return &cephv1alpha1.FileStorageList{} },
	newRook:     func() *cephv1.CephFilesystem { return &cephv1.CephFilesystem{} },
	derivedName: FilesystemName,
	renderRook: func(o *cephv1alpha1.FileStorage, cfg Config, r Replication) *cephv1.CephFilesystem {
		return RenderFilesystem(o, cfg.ClusterNamespace, r)
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
	failureDomain: func(f *cephv1.CephFilesystem) string { return f.Spec.MetadataPool.FailureDomain },
	rookPhase:     filesystemPhase,
	renderClass: func(o *cephv1alpha1.FileStorage, cfg Config) *storagev1.StorageClass {
		return RenderCephFSStorageClass(o, cfg)
	},
	renderSnapshotClass: RenderCephFSSnapshotClass,
}

var objectStorageKind = kind[*cephv1alpha1.ObjectStorage, *cephv1.CephObjectStore]{
	kind:        "ObjectStorage",
	rookKind:    "CephObjectStore",
	newObject:   func() *cephv1alpha1.ObjectStorage { return &cephv1alpha1.ObjectStorage{} },
	newList:     func() client.ObjectList { return &cephv1alpha1.ObjectStorageList{} },
	newRook:     func() *cephv1.CephObjectStore { return &cephv1.CephObjectStore{} },
	derivedName: ObjectStoreName,
	renderRook: func(o *cephv1alpha1.ObjectStorage, cfg Config, r Replication) *cephv1.CephObjectStore {
		return RenderObjectStore(o, cfg.ClusterNamespace, r)
	},
	patchRook: func(have, want *cephv1.CephObjectStore) {
		patchPool(&have.Spec.MetadataPool, want.Spec.MetadataPool)
		patchPool(&have.Spec.DataPool, want.Spec.DataPool)
		have.Spec.PreservePoolsOnDelete = want.Spec.PreservePoolsOnDelete
		have.Spec.Gateway.Port = want.Spec.Gateway.Port
		have.Spec.Gateway.Instances = want.Spec.Gateway.Instances
	},
	failureDomain:         func(o *cephv1.CephObjectStore) string { return o.Spec.DataPool.FailureDomain },
	metadataFailureDomain: func(o *cephv1.CephObjectStore) string { return o.Spec.MetadataPool.FailureDomain },
	rookPhase:             objectStorePhase,
	renderClass: func(o *cephv1alpha1.ObjectStorage, cfg Config) *storagev1.StorageClass {
		return RenderBucketStorageClass(o, cfg)
	},
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
