package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DiskPoolSpec is the operator's choice of disks to give to Ceph.
type DiskPoolSpec struct {
	// Disks are names of Disk objects. Each becomes an OSD of the shared
	// CephCluster unless an older DiskPool already lists it. Removing a disk
	// from this list removes it from the CephCluster's device list but does
	// not remove its OSD: that needs a manual purge in Ceph.
	// Each is a Disk's name, as discovery makes them (DiskName: a DNS-1123
	// label); at most 10,000, the scale the plugin is measured at.
	// +listType=set
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Disks []string `json:"disks,omitempty"`
}

// DiskPoolPhase summarises a DiskPool's contribution.
// +kubebuilder:validation:Enum=Ready;Degraded
type DiskPoolPhase string

const (
	// DiskPoolReady: at least one listed disk resolved and feeds the cluster.
	DiskPoolReady DiskPoolPhase = "Ready"
	// DiskPoolDegraded: no listed disk resolved.
	DiskPoolDegraded DiskPoolPhase = "Degraded"
)

// DiskPoolStatus describes the pool's own contribution of disks, not any
// derived object: pools carry no replication of their own.
type DiskPoolStatus struct {
	// +optional
	Phase DiskPoolPhase `json:"phase,omitempty"`
	// SelectedDiskCount is how many of spec.disks resolved to a usable Disk
	// owned by this pool. It is not the number of running OSDs: Rook creates
	// those asynchronously.
	// +optional
	SelectedDiskCount int32 `json:"selectedDiskCount"`
	// RawCapacity is the summed size of the selected disks. It is not usable
	// capacity: every pool feeds the same OSD set and data is replicated.
	// +optional
	RawCapacity *resource.Quantity `json:"rawCapacity,omitempty"`
	// DisplayRawCapacity is rawCapacity as a person reads it ("36.4 TiB").
	// +optional
	DisplayRawCapacity string `json:"displayRawCapacity,omitempty"`
	// Message explains skipped disks (missing, unusable, or owned by an
	// older pool).
	// +optional
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// CephCluster is the CephCluster the pool's disks go to (the plugin's
	// configured one): where the console reads the cluster's capacity.
	// +optional
	CephCluster *ObjectReference `json:"cephCluster,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ObjectReference names a namespaced object.
type ObjectReference struct {
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// DiskPool contributes disks to the cluster's single CephCluster. Several
// pools may exist; they all feed one OSD set, so a pool neither isolates
// nor tiers storage.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=dp,categories=ceph-storage
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Disks",type=integer,JSONPath=`.status.selectedDiskCount`
// +kubebuilder:printcolumn:name="Raw Capacity",type=string,JSONPath=`.status.displayRawCapacity`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DiskPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec DiskPoolSpec `json:"spec,omitempty"`
	// +optional
	Status DiskPoolStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DiskPoolList is a list of DiskPools.
type DiskPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DiskPool `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DiskPool{}, &DiskPoolList{})
}
