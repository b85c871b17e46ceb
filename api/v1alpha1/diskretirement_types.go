package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RetiredAnnotation marks a Disk whose OSD was removed by a DiskRetirement:
// its value is "osd.<id>" (or "no-osd"). A retired Disk leaves the
// CephCluster's device list although a DiskPool still names it, and stays
// out until someone removes the annotation (after wiping the disk). It is
// on the Disk, not only on the retirement, so that deleting a finished
// DiskRetirement cannot bring the device back.
const RetiredAnnotation = "ceph.fundament.io/retired"

// DiskRetirementSpec names the disk to retire and, optionally, the disk
// that replaces it. Both are fixed once created: a different request is a
// different DiskRetirement.
// +kubebuilder:validation:XValidation:rule="self.disk == oldSelf.disk && has(self.replacement) == has(oldSelf.replacement) && (!has(self.replacement) || self.replacement == oldSelf.replacement)",message="a DiskRetirement's disk and replacement cannot change; delete it (possible until its removal Job starts) and create another"
// +kubebuilder:validation:XValidation:rule="!(has(self.suspend) && self.suspend) || (has(oldSelf.suspend) && oldSelf.suspend)",message="a DiskRetirement cannot be suspended again once it proceeds; delete it to cancel (possible until its removal Job starts)"
// +kubebuilder:validation:XValidation:rule="!has(self.replacement) || self.replacement != self.disk",message="a disk cannot replace itself"
type DiskRetirementSpec struct {
	// Disk is the name of the Disk to retire. It must be in use by a
	// DiskPool.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Disk string `json:"disk"`
	// Replacement is the name of an available Disk that joins the retired
	// disk's pool first: the retirement waits until it is an OSD, so the
	// cluster's capacity never dips. The plugin adds it to the pool's
	// spec.disks.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Replacement string `json:"replacement,omitempty"`
	// Suspend stops the retirement after its checks, before anything is
	// touched: the preflight is in the status, phase Suspended. Setting it
	// to false lets the retirement proceed (the console's confirmation);
	// deleting it cancels. As a Job's spec.suspend, but one-way.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// DiskRetirementPhase is where a retirement is.
// +kubebuilder:validation:Enum=Pending;Suspended;WaitingForReplacement;StoppingOSD;Removing;Retired;Refused;Failed;Cancelled
type DiskRetirementPhase string

const (
	// RetirementPending: accepted, not yet checked.
	RetirementPending DiskRetirementPhase = "Pending"
	// RetirementSuspended: every check passed and spec.suspend holds it
	// before anything is touched.
	RetirementSuspended DiskRetirementPhase = "Suspended"
	// RetirementWaitingForReplacement: the replacement is in the pool and
	// the retirement waits until it is an OSD.
	RetirementWaitingForReplacement DiskRetirementPhase = "WaitingForReplacement"
	// RetirementStoppingOSD: the preflight passed; the OSD's Deployment is
	// scaled to zero, since Rook's removal Job skips an OSD that is up.
	RetirementStoppingOSD DiskRetirementPhase = "StoppingOSD"
	// RetirementRemoving: Rook's removal Job runs; it waits until Ceph says
	// the OSD is safe to destroy. It cannot be cancelled from here on.
	RetirementRemoving DiskRetirementPhase = "Removing"
	// RetirementRetired: the OSD is gone and the device is out of the
	// CephCluster. Terminal.
	RetirementRetired DiskRetirementPhase = "Retired"
	// RetirementRefused: a check refused the retirement; nothing was
	// touched. Terminal.
	RetirementRefused DiskRetirementPhase = "Refused"
	// RetirementFailed: the removal Job failed; the device is still listed
	// and its OSD was started again. Terminal.
	RetirementFailed DiskRetirementPhase = "Failed"
	// RetirementCancelled: deleted before its Job started; the OSD runs on.
	RetirementCancelled DiskRetirementPhase = "Cancelled"
)

// PreflightCheck is one check made before anything is touched.
type PreflightCheck struct {
	// Name identifies the check: Hosts, Copies, Capacity or Health.
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
	// OSDStopped says the plugin scaled the OSD's Deployment to zero. A
	// retirement that fails or is cancelled scales it back, and only then.
	// +optional
	OSDStopped bool `json:"osdStopped,omitempty"`
	// JobName is Rook's OSD removal Job, in the CephCluster's namespace.
	// +optional
	JobName string `json:"jobName,omitempty"`
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

// DiskRetirement asks the plugin to take one disk out of Ceph safely: find
// its OSD, check that the cluster can lose it, run Rook's OSD removal Job,
// and only then take the device out of the CephCluster. Deleting it
// cancels the retirement until the Job starts.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=dret,categories=ceph-storage
// +kubebuilder:printcolumn:name="Disk",type=string,JSONPath=`.spec.disk`
// +kubebuilder:printcolumn:name="Replacement",type=string,JSONPath=`.spec.replacement`
// +kubebuilder:printcolumn:name="OSD",type=integer,JSONPath=`.status.osdID`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
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
