package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// FileStorageSpec asks for CephFS (ReadWriteMany) volumes.
type FileStorageSpec struct {
	// Replicas is how many copies Ceph keeps of both the metadata and the
	// data pool. Absent means min(3, nodes contributing disks); an explicit
	// count is clamped to that node count.
	// With a deviceClass nothing is clamped down: automatic keeps at least
	// 2 copies and what the pools have, an explicit count is kept, and a
	// class on fewer nodes than the copies is refused (TooFewNodesOfClass);
	// one copy on a class only with replicas: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self <= 3",message="replicas must be at most 3: the plugin keeps min(3, nodes) copies, and a fourth would cost a disk's worth of every byte for no failure domain it could add"
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// DeviceClass is the kind of disk the data pool lives on: hdd, ssd or nvme,
	// the Disk type the plugin gives each OSD as its Ceph device class. The
	// pool's CRUSH rule then takes only OSDs of that class, and replicas
	// are sized against the nodes with disks of it. Absent: every OSD.
	// Changing it moves the data onto the other class's OSDs.
	// +optional
	DeviceClass DiskType `json:"deviceClass,omitempty"`
	// MetadataDeviceClass is the device class of the metadata pool. Absent
	// with deviceClass set: the fastest class present (nvme, then ssd, then
	// hdd) whose nodes give the metadata the data's replicas and failure
	// domain, else deviceClass. Absent with deviceClass absent: every OSD.
	// +optional
	MetadataDeviceClass DiskType `json:"metadataDeviceClass,omitempty"`
	// MetadataServers is the number of active MDS daemons; each is paired
	// with a standby.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self <= 50",message="metadataServers must be at most 50: Rook's CephFilesystem allows at most 50 active MDS daemons, each with a standby pod"
	// +optional
	MetadataServers int32 `json:"metadataServers,omitempty"`
}

// FileStorage derives a CephFilesystem and a CephFS StorageClass, both named
// cephfs-<name>, over the OSDs every DiskPool contributes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fs,categories=ceph-storage
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 53 && !self.metadata.name.contains('.')",message="metadata.name must be at most 53 characters without dots: Rook puts each MDS daemon id, cephfs-<name>-<one or two letters>, in label values (at most 63)"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Storage Class",type=string,JSONPath=`.status.storageClassName`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Failure Domain",type=string,JSONPath=`.status.failureDomain`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.deviceClass`
// +kubebuilder:printcolumn:name="Usable",type=string,JSONPath=`.status.capacity.usable`
// +kubebuilder:printcolumn:name="MDS",type=integer,JSONPath=`.spec.metadataServers`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type FileStorage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec FileStorageSpec `json:"spec,omitempty"`
	// +optional
	Status StorageStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// FileStorageList is a list of FileStorages.
type FileStorageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []FileStorage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&FileStorage{}, &FileStorageList{})
}
