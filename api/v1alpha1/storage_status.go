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
	// SnapshotClassName is the derived VolumeSnapshotClass (BlockStorage
	// and FileStorage only), of the StorageClass's name: what a
	// VolumeSnapshot of one of its volumes references. Empty while the
	// snapshot API is not installed or a foreign class holds the name; the
	// SnapshotClass condition says why.
	// +optional
	SnapshotClassName string `json:"snapshotClassName,omitempty"`
	// Replicas is the replica count in effect after sizing against the
	// number of nodes that contribute disks.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// FailureDomain is the CRUSH failure domain in effect: host or osd.
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// DeviceClass is the device class the data pool is on (its CRUSH rule
	// takes only OSDs of it); empty: every OSD.
	// +optional
	DeviceClass DiskType `json:"deviceClass,omitempty"`
	// MetadataDeviceClass is the device class a FileStorage's or an
	// ObjectStorage's metadata pools are on; empty: every OSD.
	// +optional
	MetadataDeviceClass DiskType `json:"metadataDeviceClass,omitempty"`
	// MetadataReplicas is the copies a FileStorage's or an ObjectStorage's
	// metadata pools keep: a device class never lowers them, so they
	// decide which classes can take the metadata (the console reads them
	// to say before saving where a DiskPool edit moves it). Absent for a
	// BlockStorage, whose pool is its data's.
	// +optional
	MetadataReplicas int32 `json:"metadataReplicas,omitempty"`
	// Message explains clamping of replicas or why the phase is Degraded.
	// +optional
	Message string `json:"message,omitempty"`
	// Capacity is how much the consumer can store at its replica count.
	// Every consumer shares the same OSD set: the figures of two consumers
	// are not added together, and what one writes the others lose.
	// +optional
	Capacity *ConsumerCapacity `json:"capacity,omitempty"`
	// CephBudget is the consumer's share of Ceph's budgets: the pools, CRUSH
	// rules and placement group copies its Rook object makes. Absent until
	// the Rook object exists.
	// +optional
	CephBudget *CephBudgetUse `json:"cephBudget,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CapacitySource says what a consumer's capacity is computed from.
// +kubebuilder:validation:Enum=Ceph;Disks
type CapacitySource string

const (
	// CapacityFromCeph: the CephCluster's status.ceph.capacity.bytesTotal,
	// the raw capacity of the OSDs Ceph runs.
	CapacityFromCeph CapacitySource = "Ceph"
	// CapacityFromDisks: the summed sizes of the Disks the DiskPools feed,
	// before Ceph reports (no OSD may run on them yet).
	CapacityFromDisks CapacitySource = "Disks"
)

// ConsumerCapacity is the usable capacity a consumer's replication implies
// over the shared OSD set: usableBytes = rawBytes x Ceph's full ratio /
// replicas (docs/rook-contract.md, "Usable capacity").
type ConsumerCapacity struct {
	// Usable is usableBytes as a person reads it ("1.8 TiB").
	// +optional
	Usable string `json:"usable,omitempty"`
	// UsableBytes is how many bytes the consumer can store before Ceph
	// stops writes (the full ratio), were nothing else stored.
	// +optional
	UsableBytes int64 `json:"usableBytes,omitempty"`
	// RawBytes is the shared OSD set's raw capacity, before replication.
	// +optional
	RawBytes int64 `json:"rawBytes,omitempty"`
	// FullRatioPercent is the share of raw capacity Ceph fills before it
	// refuses writes: the CephCluster's spec.storage.fullRatio, or Ceph's
	// mon_osd_full_ratio default (95).
	// +optional
	FullRatioPercent int32 `json:"fullRatioPercent,omitempty"`
	// +optional
	Source CapacitySource `json:"source,omitempty"`
}

// CephBudgetUse is what one consumer asks of Ceph's budgets.
type CephBudgetUse struct {
	// Pools is how many Ceph pools the consumer's Rook object makes.
	Pools int32 `json:"pools"`
	// CrushRules is how many CRUSH rules they take: one per pool, and one
	// more for each failure domain a pool was moved to (Rook keeps the old).
	CrushRules int32 `json:"crushRules"`
	// PGCopies is the sum over its pools of placement groups times
	// replicas, at creation: Ceph spreads them over the OSDs, and its
	// autoscaler may grow them (the plugin's budget counts that too).
	PGCopies int32 `json:"pgCopies"`
}

// StorageStatus returns the status every consumer kind shares.
func (b *BlockStorage) StorageStatus() *StorageStatus { return &b.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (b *BlockStorage) RequestedReplicas() *int32 { return b.Spec.Replicas }

// RequestedDeviceClass is spec.deviceClass ("": every OSD).
func (b *BlockStorage) RequestedDeviceClass() DiskType { return b.Spec.DeviceClass }

// StorageStatus returns the status every consumer kind shares.
func (f *FileStorage) StorageStatus() *StorageStatus { return &f.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (f *FileStorage) RequestedReplicas() *int32 { return f.Spec.Replicas }

// RequestedDeviceClass is spec.deviceClass ("": every OSD).
func (f *FileStorage) RequestedDeviceClass() DiskType { return f.Spec.DeviceClass }

// StorageStatus returns the status every consumer kind shares.
func (o *ObjectStorage) StorageStatus() *StorageStatus { return &o.Status }

// RequestedReplicas is spec.replicas (nil: automatic).
func (o *ObjectStorage) RequestedReplicas() *int32 { return o.Spec.Replicas }

// RequestedDeviceClass is spec.deviceClass ("": every OSD).
func (o *ObjectStorage) RequestedDeviceClass() DiskType { return o.Spec.DeviceClass }
