package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ObjectStorageSpec asks for S3 buckets served by RGW.
type ObjectStorageSpec struct {
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
	// GatewayInstances is the number of RGW pods behind the store's Service.
	// Rook sets no limit; 20 gateways serve far more than one store of a
	// plugin-managed cluster needs, and an unbounded count would let anyone
	// who may write an ObjectStorage fill the cluster with pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self <= 20",message="gatewayInstances must be at most 20: each is an RGW pod with its own CPU and memory, and 20 serve far more than one object store needs"
	// +optional
	GatewayInstances int32 `json:"gatewayInstances,omitempty"`
}

// ObjectStorage derives a CephObjectStore and a bucket StorageClass, both
// named cephobj-<name>, over the OSDs every DiskPool contributes. Workloads
// consume it through ObjectBucketClaims that reference the class.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=os,categories=ceph-storage
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 30 && !self.metadata.name.contains('.')",message="metadata.name must be at most 30 characters without dots: the derived CephObjectStore cephobj-<name> must stay within Rook's 38 and name the Service rook-ceph-rgw-cephobj-<name>"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Storage Class",type=string,JSONPath=`.status.storageClassName`
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.status.replicas`
// +kubebuilder:printcolumn:name="Failure Domain",type=string,JSONPath=`.status.failureDomain`
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.deviceClass`
// +kubebuilder:printcolumn:name="Usable",type=string,JSONPath=`.status.capacity.usable`
// +kubebuilder:printcolumn:name="Gateways",type=integer,JSONPath=`.spec.gatewayInstances`,priority=1
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ObjectStorage struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ObjectStorageSpec `json:"spec,omitempty"`
	// +optional
	Status StorageStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ObjectStorageList is a list of ObjectStorages.
type ObjectStorageList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ObjectStorage `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ObjectStorage{}, &ObjectStorageList{})
}
