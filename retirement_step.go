package main

import (
	"fmt"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

// RetirementAction is the one thing a retirement's reconcile does to the
// cluster, after its status says it will: a crash between the two finds
// the status and does the action again (each action is idempotent).
type RetirementAction string

const (
	ActNone RetirementAction = ""
	// ActAddReplacement adds the replacement Disk to the pool's spec.disks.
	ActAddReplacement RetirementAction = "AddReplacement"
	// ActScaleDown scales the OSD's Deployment to zero: Rook's removal
	// skips an OSD that is up (pkg/daemon/ceph/osd/remove.go RemoveOSDs).
	ActScaleDown RetirementAction = "ScaleDown"
	// ActCreateJob creates Rook's OSD removal Job.
	ActCreateJob RetirementAction = "CreateJob"
	// ActScaleUp scales the OSD's Deployment back to one.
	ActScaleUp RetirementAction = "ScaleUp"
	// ActMarkRetired puts RetiredAnnotation on the Disk, which takes its
	// device out of the CephCluster's list.
	ActMarkRetired RetirementAction = "MarkRetired"
	// ActRelease removes the retirement's finalizer: it holds nothing any
	// more, and deleting it is immediate.
	ActRelease RetirementAction = "Release"
)

// JobState is what the removal Job's status says.
type JobState struct {
	Exists, Succeeded, Failed bool
	// Message is the failed condition's message.
	Message string
	// Retirement is the DiskRetirement its label names: one Job per OSD.
	Retirement string
}

// RetirementFacts is everything a retirement's next step depends on.
type RetirementFacts struct {
	// Name is the DiskRetirement's, DiskName its spec.disk.
	Name, DiskName string
	Status         cephv1alpha1.DiskRetirementStatus
	Deleting       bool
	// Suspend is spec.suspend: stop after the checks.
	Suspend bool
	// Disk is the retired Disk; nil when there is none of that name.
	Disk *cephv1alpha1.Disk
	// Listed says the disk's device is in the CephCluster's list.
	Listed bool
	// OtherRetirement is another unfinished DiskRetirement of the same disk.
	OtherRetirement string
	// ReplacementName is spec.replacement; Replacement its Disk (nil: none
	// of that name), ReplacementInPool whether the pool lists it,
	// ReplacementJoined whether its device is listed and an OSD runs on it.
	ReplacementName                      string
	Replacement                          *cephv1alpha1.Disk
	ReplacementInPool, ReplacementJoined bool
	// Lookup is the disk's OSD, from Rook's OSD Deployments.
	Lookup OSDLookup
	// Deployment is the Deployment of the OSD the status records; nil when
	// it is gone (Rook's removal deletes it).
	Deployment *OSD
	Job        JobState
	// Preflight are the checks, computed when the retirement is still
	// untouched.
	Preflight []cephv1alpha1.PreflightCheck
}

// RetirementStep is the status a reconcile writes and the action it then
// takes.
type RetirementStep struct {
	Status cephv1alpha1.DiskRetirementStatus
	Action RetirementAction
}

// NextRetirementStep decides a retirement's next step. It touches nothing
// until every check passed, runs at most one Job per OSD, takes the device
// out of the CephCluster only after Rook removed the OSD, and gives back
// what it stopped when it fails or is cancelled.
func NextRetirementStep(f RetirementFacts) RetirementStep {
	switch {
	case retirementFinished(f.Status.Phase):
		return finished(f)
	case f.Status.Phase == cephv1alpha1.RetirementRemoving:
		return removing(f)
	case f.Status.Phase == cephv1alpha1.RetirementStoppingOSD:
		return stopping(f)
	}
	return untouched(f)
}

// retirementFinished: a terminal phase (Retired, Refused, Failed,
// Cancelled); nothing moves it on.
func retirementFinished(p cephv1alpha1.DiskRetirementPhase) bool {
	switch p {
	case cephv1alpha1.RetirementRetired, cephv1alpha1.RetirementRefused,
		cephv1alpha1.RetirementFailed, cephv1alpha1.RetirementCancelled:
		return true
	}
	return false
}

// untouchedPhase: nothing of the cluster's was touched yet (the phases
// untouched decides), so the preflight is computed.
func untouchedPhase(p cephv1alpha1.DiskRetirementPhase) bool {
	return !retirementFinished(p) && p != cephv1alpha1.RetirementRemoving && p != cephv1alpha1.RetirementStoppingOSD
}

// step is the status with phase and message replaced.
func step(f RetirementFacts, phase cephv1alpha1.DiskRetirementPhase, action RetirementAction, format string, args ...any) RetirementStep {
	s := f.Status
	s.Phase = phase
	s.Message = fmt.Sprintf(format, args...)
	return RetirementStep{Status: s, Action: action}
}

// finished: a terminal retirement gives back a stopped OSD, then holds
// nothing: its finalizer goes, so deleting it is immediate.
func finished(f RetirementFacts) RetirementStep {
	s := RetirementStep{Status: f.Status}
	switch {
	case f.Status.OSDStopped && f.Deployment != nil && f.Deployment.Replicas == 0:
		s.Action = ActScaleUp
	case f.Status.OSDStopped:
		s.Status.OSDStopped = false // scaled back (or removed): nothing left to give back
	default:
		s.Action = ActRelease
	}
	return s
}

func untouched(f RetirementFacts) RetirementStep {
	refuse := func(format string, args ...any) RetirementStep {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, format, args...)
	}
	switch {
	case f.Deleting:
		return step(f, cephv1alpha1.RetirementCancelled, ActRelease, "cancelled before anything was touched")
	case f.Disk == nil:
		return refuse("there is no Disk %s", f.DiskName)
	case f.Disk.Annotations[cephv1alpha1.RetiredAnnotation] != "":
		return refuse("Disk %s is already retired (%s)", f.Disk.Name, f.Disk.Annotations[cephv1alpha1.RetiredAnnotation])
	case f.OtherRetirement != "":
		return refuse("DiskRetirement %s already retires Disk %s", f.OtherRetirement, f.Disk.Name)
	case f.Disk.Status.ClaimedBy == "" || !f.Listed:
		return refuse("Disk %s is not in the CephCluster (no DiskPool gives it to Ceph): there is nothing to retire", f.Disk.Name)
	}
	base := f
	base.Status.Pool, base.Status.Node, base.Status.Device = f.Disk.Status.ClaimedBy, f.Disk.Status.NodeName, StorageDeviceName(f.Disk.Status)
	if s, waiting := replacementStep(base); waiting {
		return s
	}
	if f.Lookup.Refusal != "" {
		return step(base, cephv1alpha1.RetirementRefused, ActRelease, "%s", f.Lookup.Refusal)
	}
	if f.Lookup.OSD == nil {
		if f.Suspend {
			return step(base, cephv1alpha1.RetirementSuspended, ActNone, "no OSD runs on %s: it would leave the CephCluster without a Job; set spec.suspend to false to proceed", base.Status.Device)
		}
		return step(base, cephv1alpha1.RetirementRemoving, ActMarkRetired,
			"no OSD runs on %s (it never became one, or Rook removed it): taking it out of the CephCluster without a Job", base.Status.Device)
	}
	osd := *f.Lookup.OSD
	base.Status.OSDID = &osd.ID
	base.Status.Preflight = f.Preflight
	if ok, why := PreflightPassed(f.Preflight); !ok {
		return step(base, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: %s", why)
	}
	base.Status.JobName = RemovalJobName(osd.ID)
	if f.Job.Exists && f.Job.Retirement != f.Name {
		return step(base, cephv1alpha1.RetirementRefused, ActRelease, "Job %s of DiskRetirement %s already removes osd.%d", base.Status.JobName, f.Job.Retirement, osd.ID)
	}
	if f.Suspend {
		return step(base, cephv1alpha1.RetirementSuspended, ActNone, "preflight passed for osd.%d; nothing is touched until spec.suspend is set to false", osd.ID)
	}
	base.Status.OSDStopped = true
	return step(base, cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "preflight passed; stopping osd.%d (Deployment %s), since Rook removes only an OSD that is down", osd.ID, osd.Deployment)
}

// replacementStep adds the replacement to the pool and waits until it is
// an OSD; waiting is false once it is (or when there is none). A suspended
// retirement only checks it: the preflight counts it as joined.
func replacementStep(f RetirementFacts) (RetirementStep, bool) {
	if f.ReplacementName == "" {
		return RetirementStep{}, false
	}
	r := f.Replacement
	switch {
	case r == nil:
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "there is no Disk %s to replace it with", f.ReplacementName), true
	case !f.ReplacementInPool && (r.Status.State != cephv1alpha1.DiskAvailable || r.Status.ClaimedBy != ""):
		why := string(r.Status.State)
		if r.Status.ClaimedBy != "" {
			why = "claimed by DiskPool " + r.Status.ClaimedBy
		}
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "replacement Disk %s is not available (%s)", r.Name, why), true
	case f.Suspend:
		return RetirementStep{}, false
	case !f.ReplacementInPool:
		return step(f, cephv1alpha1.RetirementWaitingForReplacement, ActAddReplacement, "adding Disk %s to DiskPool %s", r.Name, f.Status.Pool), true
	case !f.ReplacementJoined:
		return step(f, cephv1alpha1.RetirementWaitingForReplacement, ActNone, "waiting for Rook to make replacement Disk %s an OSD; the old disk stays until it is", r.Name), true
	}
	return RetirementStep{}, false
}

func stopping(f RetirementFacts) RetirementStep {
	id := osdID(f)
	switch {
	case f.Deleting:
		return step(f, cephv1alpha1.RetirementCancelled, ActNone, "cancelled before Rook's removal Job started; osd.%d is started again", id)
	case f.Deployment == nil:
		return step(f, cephv1alpha1.RetirementRemoving, ActMarkRetired, "osd.%d's Deployment is gone (Rook removed it): taking the device out of the CephCluster without a Job", id)
	case f.Deployment.Replicas != 0:
		return step(f, cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "stopping osd.%d", id)
	case f.Deployment.Running > 0:
		return step(f, cephv1alpha1.RetirementStoppingOSD, ActNone, "waiting for osd.%d's pod to stop", id)
	}
	return step(f, cephv1alpha1.RetirementRemoving, ActCreateJob, "osd.%d is stopped; Rook's removal Job %s marks it out and waits until Ceph says it is safe to destroy", id, f.Status.JobName)
}

func removing(f RetirementFacts) RetirementStep {
	id := osdID(f)
	switch {
	case f.Status.OSDID != nil && !f.Job.Exists && !f.Job.Succeeded && f.Deployment != nil:
		// The status said so, the Job was not yet made: make it.
		return step(f, cephv1alpha1.RetirementRemoving, ActCreateJob, "creating Rook's removal Job %s for osd.%d", f.Status.JobName, id)
	case f.Job.Failed:
		return step(f, cephv1alpha1.RetirementFailed, ActNone, "Rook's removal Job %s failed (%s); osd.%d is started again and its device stays in the CephCluster", f.Status.JobName, f.Job.Message, id)
	case f.Job.Exists && !f.Job.Succeeded:
		return step(f, cephv1alpha1.RetirementRemoving, ActNone, "Rook's removal Job %s runs: it waits until Ceph says osd.%d is safe to destroy (its data copied elsewhere), then purges it; this cannot be cancelled", f.Status.JobName, id)
	case f.Job.Succeeded && f.Deployment != nil:
		return step(f, cephv1alpha1.RetirementFailed, ActNone, "Rook's removal Job %s finished without removing osd.%d (Rook skips an OSD that is up); osd.%d is started again and its device stays in the CephCluster", f.Status.JobName, id, id)
	case f.Disk != nil && f.Disk.Annotations[cephv1alpha1.RetiredAnnotation] == "":
		return step(f, cephv1alpha1.RetirementRemoving, ActMarkRetired, "osd.%d is removed; taking %s out of the CephCluster", id, f.Status.Device)
	case f.Listed:
		return step(f, cephv1alpha1.RetirementRemoving, ActNone, "waiting for %s to leave the CephCluster's device list", f.Status.Device)
	}
	done := step(f, cephv1alpha1.RetirementRetired, ActRelease, "retired: %s", retiredWhat(f))
	done.Status.ManualSteps = WipeInstructions(f.Status.Node, f.Status.Device)
	done.Status.OSDStopped = false // removed: nothing to give back
	return done
}

func retiredWhat(f RetirementFacts) string {
	if f.Status.OSDID == nil {
		return fmt.Sprintf("%s of node %s is out of the CephCluster (it carried no OSD)", f.Status.Device, f.Status.Node)
	}
	return fmt.Sprintf("osd.%d is removed from Ceph and %s of node %s is out of the CephCluster", *f.Status.OSDID, f.Status.Device, f.Status.Node)
}

func osdID(f RetirementFacts) int32 {
	if f.Status.OSDID == nil {
		return -1
	}
	return *f.Status.OSDID
}
