package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
)

func TestNextRetirementStep(t *testing.T) {
	passed := []cephv1alpha1.PreflightCheck{{Name: CheckHosts, Passed: true}, {Name: CheckCapacity, Passed: true}, {Name: CheckHealth, Passed: true}}
	refusedChecks := []cephv1alpha1.PreflightCheck{{Name: CheckHosts, Passed: false, Message: "1 host would remain"}, {Name: CheckHealth, Passed: true}}
	osd3 := OSD{ID: 3, Deployment: "rook-ceph-osd-3", Node: "node-a", BlockPath: "/dev/sdb", Replicas: 1, Running: 1}
	stopped := osd3
	stopped.Replicas, stopped.Running = 0, 0
	stopping := osd3
	stopping.Replicas = 0
	id3 := int32(3)
	// fresh is an untouched retirement of a listed, in-use disk with one OSD.
	fresh := func() RetirementFacts {
		return RetirementFacts{
			Name: "r", DiskName: "a-sdb", Disk: retirementDisk("a-sdb", "node-a", "/dev/sdb", "/dev/disk/by-id/wwn-0xb"),
			Listed: true, Lookup: OSDLookup{OSD: &osd3}, Deployment: &osd3, Preflight: passed,
		}
	}
	// at is a retirement in phase p that recorded osd.3 and its Job.
	at := func(p cephv1alpha1.DiskRetirementPhase, change func(*RetirementFacts)) RetirementFacts {
		f := fresh()
		f.Status = cephv1alpha1.DiskRetirementStatus{Phase: p, OSDID: &id3, JobName: RemovalJobName(3), Pool: "pool", Node: "node-a", Device: "/dev/disk/by-id/wwn-0xb", OSDStopped: true}
		change(&f)
		return f
	}
	retiredDisk := func(f *RetirementFacts) {
		f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
	}
	tests := []struct {
		name    string
		facts   RetirementFacts
		phase   cephv1alpha1.DiskRetirementPhase
		action  RetirementAction
		message string
	}{
		// Before anything is touched.
		{"preflight passes: stop the OSD first", fresh(), cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "preflight passed; stopping osd.3"},
		{"a failed check refuses, touching nothing", func() RetirementFacts { f := fresh(); f.Preflight = refusedChecks; return f }(),
			cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: Hosts: 1 host would remain"},
		{"no such Disk", func() RetirementFacts { f := fresh(); f.Disk = nil; return f }(), cephv1alpha1.RetirementRefused, ActRelease, "there is no Disk a-sdb"},
		{"a disk no pool gives to Ceph", func() RetirementFacts { f := fresh(); f.Listed = false; return f }(), cephv1alpha1.RetirementRefused, ActRelease, "is not in the CephCluster"},
		{"an already retired disk", func() RetirementFacts { f := fresh(); retiredDisk(&f); return f }(), cephv1alpha1.RetirementRefused, ActRelease, "already retired (osd.3)"},
		{"an older retirement of the same disk keeps it", func() RetirementFacts { f := fresh(); f.OtherRetirement = "first"; return f }(),
			cephv1alpha1.RetirementRefused, ActRelease, "DiskRetirement first already retires Disk a-sdb"},
		{"an OSD the plugin cannot attribute", func() RetirementFacts {
			f := fresh()
			f.Lookup = OSDLookup{Refusal: "no OSD runs on /dev/sdb, but osd.6 ..."}
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "osd.6"},
		{"a Job of another retirement for the same OSD", func() RetirementFacts {
			f := fresh()
			f.Job = JobState{Exists: true, Retirement: "other"}
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "Job ceph-rook-remove-osd-3 of DiskRetirement other already removes osd.3"},
		{"no OSD on the device: out without a Job", func() RetirementFacts { f := fresh(); f.Lookup = OSDLookup{}; f.Deployment = nil; return f }(),
			cephv1alpha1.RetirementRemoving, ActMarkRetired, "without a Job"},
		{"deleted before anything happened", func() RetirementFacts { f := fresh(); f.Deleting = true; return f }(), cephv1alpha1.RetirementCancelled, ActRelease, "before anything was touched"},

		// Suspended: checked, then held before anything is touched.
		{"a suspended retirement stops after its checks", func() RetirementFacts { f := fresh(); f.Suspend = true; return f }(),
			cephv1alpha1.RetirementSuspended, ActNone, "preflight passed for osd.3; nothing is touched until spec.suspend is set to false"},
		{"a suspended one is refused like any other", func() RetirementFacts { f := fresh(); f.Suspend, f.Preflight = true, refusedChecks; return f }(),
			cephv1alpha1.RetirementRefused, ActRelease, "Hosts: 1 host would remain"},
		{"a suspended replacement is not added to the pool yet", func() RetirementFacts {
			f := fresh()
			f.Suspend, f.ReplacementName, f.Replacement = true, "b-sdc", availableDisk("b-sdc")
			return f
		}(), cephv1alpha1.RetirementSuspended, ActNone, "preflight passed"},
		{"a suspended retirement of a disk without an OSD", func() RetirementFacts {
			f := fresh()
			f.Suspend, f.Lookup, f.Deployment = true, OSDLookup{}, nil
			return f
		}(), cephv1alpha1.RetirementSuspended, ActNone, "without a Job; set spec.suspend to false"},
		{"confirmed: it proceeds", func() RetirementFacts {
			f := fresh()
			f.Status.Phase = cephv1alpha1.RetirementSuspended
			return f
		}(), cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "preflight passed"},
		{"deleted while suspended: cancelled, nothing touched", func() RetirementFacts {
			f := fresh()
			f.Status.Phase, f.Suspend, f.Deleting = cephv1alpha1.RetirementSuspended, true, true
			return f
		}(), cephv1alpha1.RetirementCancelled, ActRelease, "before anything was touched"},

		// Replacement first.
		{"the replacement is added to the pool", func() RetirementFacts {
			f := fresh()
			f.ReplacementName, f.Replacement = "b-sdc", availableDisk("b-sdc")
			return f
		}(), cephv1alpha1.RetirementWaitingForReplacement, ActAddReplacement, "adding Disk b-sdc to DiskPool pool"},
		{"the old disk waits until the replacement is an OSD", func() RetirementFacts {
			f := fresh()
			f.ReplacementName, f.Replacement, f.ReplacementInPool = "b-sdc", availableDisk("b-sdc"), true
			return f
		}(), cephv1alpha1.RetirementWaitingForReplacement, ActNone, "waiting for Rook to make replacement Disk b-sdc an OSD"},
		{"then the retirement proceeds", func() RetirementFacts {
			f := fresh()
			f.ReplacementName, f.Replacement, f.ReplacementInPool, f.ReplacementJoined = "b-sdc", availableDisk("b-sdc"), true, true
			return f
		}(), cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "preflight passed"},
		{"a replacement another pool holds is refused", func() RetirementFacts {
			f := fresh()
			f.ReplacementName, f.Replacement = "b-sdc", availableDisk("b-sdc")
			f.Replacement.Status.ClaimedBy = "other-pool"
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "claimed by DiskPool other-pool"},
		{"a replacement that does not exist is refused", func() RetirementFacts {
			f := fresh()
			f.ReplacementName = "b-sdc"
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "no Disk b-sdc to replace it with"},

		// Stopping the OSD.
		{"scale down again after a crash", at(cephv1alpha1.RetirementStoppingOSD, func(*RetirementFacts) {}), cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "stopping osd.3"},
		{"wait for the pod to stop", at(cephv1alpha1.RetirementStoppingOSD, func(f *RetirementFacts) { f.Deployment = &stopping }), cephv1alpha1.RetirementStoppingOSD, ActNone, "waiting for osd.3's pod to stop"},
		{"stopped: Rook's Job", at(cephv1alpha1.RetirementStoppingOSD, func(f *RetirementFacts) { f.Deployment = &stopped }), cephv1alpha1.RetirementRemoving, ActCreateJob, "Rook's removal Job ceph-rook-remove-osd-3"},
		{"cancelled while stopping: marked cancelled, the OSD is given back next", at(cephv1alpha1.RetirementStoppingOSD, func(f *RetirementFacts) { f.Deleting, f.Deployment = true, &stopped }),
			cephv1alpha1.RetirementCancelled, ActNone, "osd.3 is started again"},

		// Rook's Job.
		{"the Job is made again after a crash", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) { f.Deployment = &stopped }), cephv1alpha1.RetirementRemoving, ActCreateJob, "creating Rook's removal Job"},
		{"the Job runs; a deletion waits for it", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job, f.Deleting = &stopped, JobState{Exists: true, Retirement: "r"}, true
		}), cephv1alpha1.RetirementRemoving, ActNone, "this cannot be cancelled"},
		{"the Job failed: stop, the device stays", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job = &stopped, JobState{Exists: true, Failed: true, Message: "BackoffLimitExceeded: ..."}
		}), cephv1alpha1.RetirementFailed, ActNone, "failed (BackoffLimitExceeded: ...); osd.3 is started again and its device stays"},
		{"the Job succeeded but skipped an OSD that was up", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job = &osd3, JobState{Exists: true, Succeeded: true}
		}), cephv1alpha1.RetirementFailed, ActNone, "finished without removing osd.3"},
		{"the Job removed the OSD: mark the disk", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job = nil, JobState{Exists: true, Succeeded: true}
		}), cephv1alpha1.RetirementRemoving, ActMarkRetired, "osd.3 is removed"},
		{"marked: wait for the device list", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job = nil, JobState{Exists: true, Succeeded: true}
			retiredDisk(f)
		}), cephv1alpha1.RetirementRemoving, ActNone, "waiting for /dev/disk/by-id/wwn-0xb to leave"},
		{"out of the list: retired", at(cephv1alpha1.RetirementRemoving, func(f *RetirementFacts) {
			f.Deployment, f.Job, f.Listed = nil, JobState{Exists: true, Succeeded: true}, false
			retiredDisk(f)
		}), cephv1alpha1.RetirementRetired, ActRelease, "osd.3 is removed from Ceph and /dev/disk/by-id/wwn-0xb of node node-a is out of the CephCluster"},

		// Finished.
		{"a failed retirement starts the OSD again", at(cephv1alpha1.RetirementFailed, func(f *RetirementFacts) { f.Deployment = &stopped }), cephv1alpha1.RetirementFailed, ActScaleUp, ""},
		{"a cancelled one too", at(cephv1alpha1.RetirementCancelled, func(f *RetirementFacts) { f.Deployment = &stopped; f.Deleting = true }), cephv1alpha1.RetirementCancelled, ActScaleUp, ""},
		{"then lets the deletion through", at(cephv1alpha1.RetirementCancelled, func(f *RetirementFacts) {
			f.Deployment, f.Deleting, f.Status.OSDStopped = &osd3, true, false
		}), cephv1alpha1.RetirementCancelled, ActRelease, ""},
		{"an OSD someone else scaled down is not the plugin's to start", at(cephv1alpha1.RetirementRefused, func(f *RetirementFacts) {
			f.Deployment, f.Status.OSDStopped = &stopped, false
		}), cephv1alpha1.RetirementRefused, ActRelease, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NextRetirementStep(tc.facts)
			assert.Equal(t, tc.phase, got.Status.Phase)
			assert.Equal(t, tc.action, got.Action)
			assert.Contains(t, got.Status.Message, tc.message)
		})
	}
}

func TestRetiredStatusSaysWhatIsLeftToDo(t *testing.T) {
	id := int32(3)
	disk := &cephv1alpha1.Disk{}
	disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
	got := NextRetirementStep(RetirementFacts{
		Status: cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementRemoving, OSDID: &id, Node: "node-a", Device: "/dev/disk/by-id/wwn-0xb"},
		Disk:   disk,
		Job:    JobState{Exists: true, Succeeded: true},
	})
	assert.Equal(t, cephv1alpha1.RetirementRetired, got.Status.Phase)
	for _, want := range []string{"on node node-a", "sgdisk --zap-all /dev/disk/by-id/wwn-0xb", "blkdiscard /dev/disk/by-id/wwn-0xb", "remove the ceph.fundament.io/retired annotation"} {
		assert.Contains(t, got.Status.ManualSteps, want)
	}
}

func availableDisk(name string) *cephv1alpha1.Disk {
	d := retirementDisk(name, "node-b", "/dev/sdc", "/dev/disk/by-id/wwn-0xc")
	d.Status.State, d.Status.ClaimedBy, d.Status.Available = cephv1alpha1.DiskAvailable, "", true
	return d
}
