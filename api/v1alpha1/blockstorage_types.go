package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BlockStorageSpec asks for RBD (ReadWriteOnce) volumes.
type BlockStorageSpec struct {
	// Replicas is how many copies Ceph keeps. Absent means min(3, nodes
	// contributing disks); an explicit count is clamped to that node count.
	// With a deviceClass nothing is clamped down: automatic keeps at least
	// 2 copies and what the pools have, an explicit count is kept, and a
	// class on fewer nodes than the copies is refused (TooFewNodesOfClass);
	// one copy on a class only with replicas: 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self <= 3",message="replicas must be at most 3: the plugin keeps min(3, nodes) copies, and a fourth would cost a disk's worth of every byte for no failure domain it could add"
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// DeviceClass is the kind of disk the pool lives on: hdd, ssd or nvme,
	// the Disk type the plugin gives each OSD as its Ceph device class. The
	// pool's CRUSH rule then takes only OSDs of that class, and replicas
	// are sized against the nodes with disks of it. Absent: every OSD.
	// Changing it moves the data onto the other class's OSDs.
	// +optional
	DeviceClass DiskType `json:"deviceClass,omitempty"`
	// Default marks the derived StorageClass as the cluster default.
	// +optional
	Default bool `json:"default,omitempty"`
}

// BlockStorage derives a CephBlockPool and an RBD StorageClass, both named
// ceph-<name>, over the OSDs every DiskPool contributes.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=bs,categories=ceph-storage
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 248",message="metadata.name must be at most 248 characters: the derived CephBlockPool and StorageClass ceph-<name> must stay within 253"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Storage Class",type=string,JSONPath=`.status.storageClassName`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Failure Domain",type=string,JSONPath=`.status.failureDomain`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.deviceClass`
// +kubebuilder:printcolumn:name="Usable",type=string,JSONPath=`.status.capacity.usable`
// +kubebuilder:printcolumn:name="Default",type=boolean,JSONPath=`.spec.default`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type BlockStorage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec BlockStorageSpec `json:"spec,omitempty"`
	// +optional
	Status StorageStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// BlockStorageList is a list of BlockStorages.
type BlockStorageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BlockStorage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BlockStorage{}, &BlockStorageList{})
}
