package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// StoragePhase summarises a consumer kind (BlockStorage, FileStorage,
// ObjectStorage).
// +kubebuilder:validation:Enum=Provisioning;Ready;Degraded
type StoragePhase string

const (
	// StorageProvisioning: the derived objects exist and the Rook object has
	// not reported Ready yet.
	StorageProvisioning StoragePhase = "Provisioning"
	// StorageReady: the Rook object reports Ready; the StorageClass is usable.
	StorageReady StoragePhase = "Ready"
	// StorageDegraded: the consumer cannot be reconciled without operator
	// action (no DiskPool contributes disks, a foreign object holds a derived
	// name, ...); status.message says why.
	StorageDegraded StoragePhase = "Degraded"
)

// StorageStatus is the status shared by the three consumer kinds. It
// describes the derived StorageClass, not live Ceph state.
type StorageStatus struct {
	// +optional
	Phase StoragePhase `json:"phase,omitempty"`
	// StorageClassName is the derived StorageClass: what a
	// PersistentVolumeClaim (or ObjectBucketClaim) references.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// Replicas is the replica count in effect after sizing against the
	// number of nodes that contribute disks.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// FailureDomain is the CRUSH failure domain in effect: host or osd.
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// Message explains clamping of replicas or why the phase is Degraded.
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StorageStatus returns the status every consumer kind shares.
func (b *BlockStorage) StorageStatus() *StorageStatus { return &b.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (b *BlockStorage) RequestedReplicas() *int32 { return b.Spec.Replicas }

// StorageStatus returns the status every consumer kind shares.
func (f *FileStorage) StorageStatus() *StorageStatus { return &f.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (f *FileStorage) RequestedReplicas() *int32 { return f.Spec.Replicas }

// StorageStatus returns the status every consumer kind shares.
func (o *ObjectStorage) StorageStatus() *StorageStatus { return &o.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (o *ObjectStorage) RequestedReplicas() *int32 { return o.Spec.Replicas }
