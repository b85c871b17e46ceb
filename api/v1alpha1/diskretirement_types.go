package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DiskRetirementSpec names the disk to retire and, optionally, the disk
// that replaces it. Both are fixed once created: a different request is a
// different DiskRetirement.
// +kubebuilder:validation:XValidation:rule="self.disk == oldSelf.disk && has(self.replacement) == has(oldSelf.replacement) && (!has(self.replacement) || self.replacement == oldSelf.replacement)",message="a DiskRetirement's disk and replacement cannot change; delete it (possible until the OSD is purged) and create another"
// +kubebuilder:validation:XValidation:rule="!(has(self.suspend) && self.suspend) || (has(oldSelf.suspend) && oldSelf.suspend)",message="a DiskRetirement cannot be suspended again once it proceeds; delete it to cancel (possible until the OSD is purged)"
// +kubebuilder:validation:XValidation:rule="!has(self.replacement) || self.replacement != self.disk",message="a disk cannot replace itself"
type DiskRetirementSpec struct {
	// Disk is the name of the Disk to retire. It must be in use by a
	// DiskPool.
	// A Disk's name is a DNS-1123 label (DiskName), nothing else: what the
	// status and Events echo of it cannot carry other characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Disk string `json:"disk"`
	// Replacement is the name of an available Disk that joins the retired
	// disk's pool first: the retirement waits until it is an OSD, so the
	// cluster's capacity never dips. The plugin adds it to the pool's
	// spec.disks.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Replacement string `json:"replacement,omitempty"`
	// Suspend stops the retirement after its checks, before anything is
	// touched: the preflight is in the status, phase Suspended. Setting it
	// to false lets the retirement proceed (the console's confirmation);
	// deleting it cancels. As a Job's spec.suspend, but one-way.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Acknowledge finishes a retirement whose purged OSD's device the
	// plugin cannot wipe (its node is gone or NotReady, or the device no
	// longer proves to be the OSD's disk): WipedByHand says the operator
	// wiped it, DiskGone that it is no longer in the node. The plugin then
	// takes it out of the CephCluster without wiping it. It counts only
	// once the OSD is purged; the status says when it is asked for.
	// +kubebuilder:validation:Enum=WipedByHand;DiskGone
	// +optional
	Acknowledge WipeAcknowledgement `json:"acknowledge,omitempty"`
}

// WipeAcknowledgement is the operator's word on a device the plugin could
// not wipe.
type WipeAcknowledgement string

const (
	// WipedByHand: the operator wiped the device (Rook's teardown steps).
	WipedByHand WipeAcknowledgement = "WipedByHand"
	// DiskGone: the disk is no longer in the node.
	DiskGone WipeAcknowledgement = "DiskGone"
)

// OSDState is an OSD's state in Ceph's OSD map.
type OSDState struct {
	Up bool `json:"up"`
	In bool `json:"in"`
}

// DiskRetirementPhase is where a retirement is.
// +kubebuilder:validation:Enum=Pending;Suspended;WaitingForReplacement;Draining;StoppingOSD;Removing;Wiping;Aborting;Retired;Refused;Failed;Cancelled
type DiskRetirementPhase string

const (
	// RetirementPending: accepted and checked (or waiting for its turn);
	// nothing touched yet.
	RetirementPending DiskRetirementPhase = "Pending"
	// RetirementSuspended: every check passed and spec.suspend holds it
	// before anything is touched.
	RetirementSuspended DiskRetirementPhase = "Suspended"
	// RetirementWaitingForReplacement: the replacement is in the pool and
	// the retirement waits until it is an OSD.
	RetirementWaitingForReplacement DiskRetirementPhase = "WaitingForReplacement"
	// RetirementDraining: the OSD is marked out while it still runs, and
	// Ceph copies its PGs elsewhere from a full set of copies; the
	// retirement waits until Ceph says the OSD is safe to destroy.
	RetirementDraining DiskRetirementPhase = "Draining"
	// RetirementStoppingOSD: Ceph said the OSD is safe to destroy; its
	// Deployment is scaled to zero and the retirement waits until its pod
	// is gone and Ceph sees it down.
	RetirementStoppingOSD DiskRetirementPhase = "StoppingOSD"
	// RetirementRemoving: the OSD is purged from Ceph (which checks once
	// more that it is safe to destroy) and its Deployment deleted. It
	// cannot be cancelled from here on.
	RetirementRemoving DiskRetirementPhase = "Removing"
	// RetirementWiping: the device is wiped on its node, once its BlueStore
	// label is checked to name the purged OSD, so that Rook does not find
	// the OSD on it again; then it leaves the CephCluster.
	RetirementWiping DiskRetirementPhase = "Wiping"
	// RetirementAborting: a retirement that cannot finish (cancelled, Ceph
	// refused, no progress) gives back what it changed: the OSD is started
	// again and marked in.
	RetirementAborting DiskRetirementPhase = "Aborting"
	// RetirementRetired: the OSD is gone from Ceph, the device is wiped and
	// out of the CephCluster. Terminal.
	RetirementRetired DiskRetirementPhase = "Retired"
	// RetirementRefused: a check refused the retirement; nothing was
	// touched. Terminal.
	RetirementRefused DiskRetirementPhase = "Refused"
	// RetirementFailed: the retirement was aborted and everything given
	// back (the OSD up and in, its device listed); the message says why.
	// Terminal.
	RetirementFailed DiskRetirementPhase = "Failed"
	// RetirementCancelled: deleted before the OSD was purged; everything
	// was given back. Terminal.
	RetirementCancelled DiskRetirementPhase = "Cancelled"
)

// PreflightCheck is one check made before anything is touched.
type PreflightCheck struct {
	// Name identifies the check: Hosts and Copies (the consumers'),
	// CephPools, Capacity, PGsPerOSD and Health (what Ceph says).
	Name string `json:"name"`
	// Passed says whether the retirement may proceed on this check.
	Passed bool `json:"passed"`
	// Message says what was measured against what.
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message"`
}

// DiskRetirementStatus is the retirement's progress.
type DiskRetirementStatus struct {
	// +optional
	Phase DiskRetirementPhase `json:"phase,omitempty"`
	// Message says what happens now, or why it stopped.
	// +optional
	Message string `json:"message,omitempty"`
	// Pool is the DiskPool the disk belongs to.
	// +optional
	Pool string `json:"pool,omitempty"`
	// Node and Device are where the disk is (its stable path when it has
	// one).
	// +optional
	Node string `json:"node,omitempty"`
	// +optional
	Device string `json:"device,omitempty"`
	// OSDID is the Ceph OSD on the device, as Rook's OSD Deployment says;
	// absent when the device carries none.
	// +optional
	OSDID *int32 `json:"osdID,omitempty"`
	// Preflight are the checks made before anything was touched.
	// +listType=map
	// +listMapKey=name
	// +optional
	Preflight []PreflightCheck `json:"preflight,omitempty"`
	// OSDUUID is the OSD's UUID, as Rook's Deployment and Ceph's OSD map
	// both say; the device's BlueStore label must name it before the
	// device is drained or wiped.
	// +optional
	OSDUUID string `json:"osdUUID,omitempty"`
	// DeviceLabel is the OSD UUID the device's BlueStore label named when
	// it was read and named another OSD than the one Rook recorded at the
	// device's kernel name (kernel names change across reboots; Rook's OSD
	// pods find their device by OSD ID and never update the recorded
	// name). From then on the disk's OSD is the one with this UUID on the
	// disk's node, and its checks run again for that OSD.
	// +optional
	DeviceLabel string `json:"deviceLabel,omitempty"`
	// OSDBefore is the OSD's state in Ceph when the retirement checked it,
	// before anything was touched: an abort gives back exactly that (an
	// OSD that was out stays out, and one that is not up is never marked
	// in).
	// +optional
	OSDBefore *OSDState `json:"osdBefore,omitempty"`
	// DeviceIdentity is the device's identity when its label was read
	// (size, udev serial and WWN, a loop device's backing file): a zap
	// that finds no label wipes the device only when it is that disk.
	// +optional
	DeviceIdentity string `json:"deviceIdentity,omitempty"`
	// DiskGone says the disk could not be read (or is gone from its node)
	// while Ceph had its OSD down: the OSD is drained by Ceph's recovery,
	// purged by its ID, and the device is not wiped.
	// +optional
	DiskGone bool `json:"diskGone,omitempty"`
	// MarkedOut says the plugin marked the OSD out. An abort marks it in
	// again only when it was in before (OSDBefore) and Ceph sees it up.
	// +optional
	MarkedOut bool `json:"markedOut,omitempty"`
	// OSDStopped says the plugin scaled the OSD's Deployment to zero. A
	// retirement that is aborted scales it back, and only then.
	// +optional
	OSDStopped bool `json:"osdStopped,omitempty"`
	// Purged says Ceph purged the OSD: nothing can be given back from here.
	// +optional
	Purged bool `json:"purged,omitempty"`
	// PGsLeft is the fewest PGs Ceph has mapped to the OSD since its drain
	// began (the drain's low-water mark).
	// +optional
	PGsLeft *int32 `json:"pgsLeft,omitempty"`
	// ObjectsToMove is the fewest object copies Ceph had to recover or move
	// (degraded plus misplaced, cluster-wide) since the drain began: a
	// drain progresses when this or PGsLeft reaches a new low.
	// +optional
	ObjectsToMove *int64 `json:"objectsToMove,omitempty"`
	// Progressed is when PGsLeft or ObjectsToMove last fell (or the current wait began): a
	// wait that makes no progress for the plugin's stall limit is aborted.
	// +optional
	Progressed *metav1.Time `json:"progressed,omitempty"`
	// CephJob is the Ceph Job the retirement waits on, in the CephCluster's
	// namespace; CephJobs counts those it made (the next one's sequence).
	// +optional
	CephJob string `json:"cephJob,omitempty"`
	// +optional
	CephJobs int32 `json:"cephJobs,omitempty"`
	// AskedCephAt is when the last answer from Ceph was read.
	// +optional
	AskedCephAt *metav1.Time `json:"askedCephAt,omitempty"`
	// AbortReason is why an abort runs; the terminal message names it.
	// +optional
	AbortReason string `json:"abortReason,omitempty"`
	// Wiped says the purged OSD's device was wiped; LeftUnwiped says why
	// it was not (its disk is gone, or the operator acknowledged it):
	// either ends the wipe, and the OSD's Deployment goes.
	// +optional
	Wiped bool `json:"wiped,omitempty"`
	// +optional
	LeftUnwiped string `json:"leftUnwiped,omitempty"`
	// LeftOut says why an abort left the OSD out that the retirement had
	// marked out: it did not come up (an OSD marked in while down takes
	// PGs it cannot serve), its disk is dead, or Ceph did not answer.
	// +optional
	LeftOut string `json:"leftOut,omitempty"`
	// ManualSteps is what the operator must still do by hand.
	// +optional
	ManualSteps string `json:"manualSteps,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DiskRetirement asks the plugin to take one disk out of Ceph safely, in
// Ceph's own order: find its OSD, check with Ceph that the cluster can
// lose it, mark it out while it runs, wait until Ceph says it is safe to
// destroy, stop it, purge it, wipe the device and only then take the device
// out of the CephCluster. One retirement runs at a time. Deleting it
// cancels the retirement (giving back what it changed) until the purge.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=dret,categories=ceph-storage
// +kubebuilder:printcolumn:name="Disk",type=string,JSONPath=`.spec.disk`
// +kubebuilder:printcolumn:name="Replacement",type=string,JSONPath=`.spec.replacement`
// +kubebuilder:printcolumn:name="OSD",type=integer,JSONPath=`.status.osdID`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="PGs left",type=integer,JSONPath=`.status.pgsLeft`
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type DiskRetirement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec DiskRetirementSpec `json:"spec"`
	// +optional
	Status DiskRetirementStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// DiskRetirementList is a list of DiskRetirements.
type DiskRetirementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DiskRetirement `json:"items"`
}

func init() {
	SchemeBuilder.Register(&DiskRetirement{}, &DiskRetirementList{})
}
