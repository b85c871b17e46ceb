package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DiskType is the kind of medium behind a block device.
// +kubebuilder:validation:Enum=hdd;ssd;nvme
type DiskType string

const (
	DiskTypeHDD  DiskType = "hdd"
	DiskTypeSSD  DiskType = "ssd"
	DiskTypeNVMe DiskType = "nvme"
)

// DiskState says whether a disk can be given to Ceph.
// +kubebuilder:validation:Enum=Available;InUse;Missing
type DiskState string

const (
	// DiskAvailable: discovery reports the device empty and ceph-volume (when
	// it ran) accepts it.
	DiskAvailable DiskState = "Available"
	// DiskInUse: something is on the device (a filesystem, partitions, an
	// OSD); status.reason says what.
	DiskInUse DiskState = "InUse"
	// DiskMissing: discovery no longer reports the device. The Disk is kept
	// (never deleted) so pools that list it keep their meaning.
	DiskMissing DiskState = "Missing"
)

// DiskStatus is what discovery observed about one block device.
type DiskStatus struct {
	// NodeName is the Kubernetes node the device is attached to.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	NodeName string `json:"nodeName,omitempty"`
	// Path is the kernel path (/dev/sdb): what lsblk shows, but the kernel
	// may reassign it on the next boot.
	// +optional
	// +kubebuilder:validation:MaxLength=255
	Path string `json:"path,omitempty"`
	// StablePath is the /dev/disk/by-id/ link that survives reboots; empty
	// when the device has none (loop devices, some virtual disks).
	// +optional
	// +kubebuilder:validation:MaxLength=255
	StablePath string `json:"stablePath,omitempty"`
	// Size is the capacity of the device.
	// +optional
	Size *resource.Quantity `json:"size,omitempty"`
	// DisplaySize is size as a person reads it ("3.6 TiB"), for kubectl
	// get and the console; size is exact.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	DisplaySize string `json:"displaySize,omitempty"`
	// Type is hdd, ssd or nvme.
	// +optional
	Type DiskType `json:"type,omitempty"`
	// Rotational is true for spinning disks.
	// +optional
	Rotational bool `json:"rotational,omitempty"`
	// Model is the device's model string (udev ID_MODEL).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Model string `json:"model,omitempty"`
	// Serial is the device's serial (udev ID_SERIAL).
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Serial string `json:"serial,omitempty"`
	// WWN is the device's World Wide Name, when it has one.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	WWN string `json:"wwn,omitempty"`
	// Filesystem is the filesystem discovery found on the device, if any.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Filesystem string `json:"filesystem,omitempty"`
	// Available is true when the device can be added to a DiskPool.
	// +optional
	Available bool `json:"available,omitempty"`
	// ClaimedBy names the DiskPool that owns this disk: the oldest pool
	// listing it (ties broken by name).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClaimedBy string `json:"claimedBy,omitempty"`
	// State is Available, InUse or Missing.
	// +optional
	State DiskState `json:"state,omitempty"`
	// Reason explains a state other than Available, e.g. "filesystem ext4",
	// "partitioned", "rejected by ceph-volume: ...".
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Reason string `json:"reason,omitempty"`
	// LastSeenTime is when discovery last reported the device.
	// +optional
	LastSeenTime *metav1.Time `json:"lastSeenTime,omitempty"`
	// OSD is the Ceph OSD Rook runs on the device, as its Deployment
	// records it (the device's path on its node); absent while none does,
	// and kept as last seen while the disk is Missing.
	// +optional
	OSD *DiskOSD `json:"osd,omitempty"`
	// ClassMismatch, when set, says that the OSD's device class is not
	// the disk's type, and what that means: the tiers count the disk by
	// its type, while Ceph places data by the OSD's CRUSH class.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	ClassMismatch string `json:"classMismatch,omitempty"`
}

// DiskOSD is the OSD Rook runs on a disk. Its fields are always written:
// a status merge patch replaces them one by one.
type DiskOSD struct {
	// ID is the OSD's number: osd.<id> in Ceph, Deployment
	// rook-ceph-osd-<id>.
	ID int32 `json:"id"`
	// DeviceClass is the device class the OSD's Deployment carries
	// (ROOK_OSD_DEVICE_CLASS): the one it was prepared with, which Rook
	// keeps the OSD's CRUSH class at (the plugin sets
	// allowDeviceClassUpdate). Empty when the Deployment names none.
	// +kubebuilder:validation:MaxLength=256
	DeviceClass string `json:"deviceClass"`
}

// Disk is a block device found by Rook's discovery daemon. The plugin
// publishes Disks; operators do not create or edit them. A Disk's name is
// derived from its node and its stable identity, so it survives a kernel
// rename of the device.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=dsk,categories=ceph-storage
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.nodeName`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.status.path`
// +kubebuilder:printcolumn:name="Size",type=string,JSONPath=`.status.displaySize`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.status.type`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Claimed By",type=string,JSONPath=`.status.claimedBy`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`,priority=1
// +kubebuilder:printcolumn:name="OSD Class",type=string,JSONPath=`.status.osd.deviceClass`,priority=1
// +kubebuilder:printcolumn:name="Stable Path",type=string,JSONPath=`.status.stablePath`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Disk struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Status DiskStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DiskList is a list of Disks.
type DiskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Disk `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Disk{}, &DiskList{})
}
