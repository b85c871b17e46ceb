package retirement

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// stepFixture builds the facts of a retirement of disk a-sdb (osd.3 on
// node-a) at each point of its way.
type stepFixture struct {
	now time.Time
	osd rook.OSD
}

func newStepFixture() stepFixture {
	return stepFixture{
		now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC),
		osd: rook.OSD{ID: 3, Deployment: "rook-ceph-osd-3", Node: "node-a", UUID: "uuid-3", BlockPath: "/dev/sdb", Replicas: 1, Running: 1},
	}
}

var consumersPass = []cephv1alpha1.PreflightCheck{{Name: CheckHosts, Passed: true}, {Name: CheckCopies, Passed: true}}

// fresh is an untouched retirement of a listed, in-use disk with one OSD.
func (x stepFixture) fresh() Facts {
	osd := x.osd
	return Facts{
		Name: "r", UID: "uid-r", DiskName: "a-sdb", Disk: retirementDisk("a-sdb", "node-a", "/dev/sdb", "/dev/disk/by-id/wwn-0xb"),
		Listed: true, Lookup: OSDLookup{OSD: &osd}, Deployment: &osd, Preflight: consumersPass,
		Now: x.now, Timing: Timing{Poll: 10 * time.Second, Stall: 30 * time.Minute},
	}
}

// replacing is fresh with a replacement in the pool whose Deployment Rook
// made (osd.9, on node-a).
func (x stepFixture) replacing() Facts {
	f := x.fresh()
	f.ReplacementName = "a-sdd"
	f.Replacement = retirementDisk("a-sdd", "node-a", "/dev/sdd", "/dev/disk/by-id/wwn-0xd")
	f.ReplacementInPool, f.ReplacementJoined = true, true
	f.ReplacementOSD = &rook.OSD{ID: 9, Deployment: "rook-ceph-osd-9", Node: "node-a", UUID: "uuid-9", BlockPath: "/dev/sdd", Replicas: 1, Running: 1}
	return f
}

// at is a retirement in phase p that recorded osd.3, with the status
// change applied.
func (x stepFixture) at(p cephv1alpha1.DiskRetirementPhase, change func(*Facts)) Facts {
	f := x.fresh()
	id := int32(3)
	began := metav1.NewTime(x.now.Add(-time.Minute))
	f.Status = cephv1alpha1.DiskRetirementStatus{Phase: p, OSDID: &id, OSDUUID: "uuid-3", Pool: "pool", Node: "node-a", Device: "/dev/disk/by-id/wwn-0xb",
		MarkedOut: true, Progressed: &began, AskedCephAt: &began, CephJobs: 4}
	if change != nil {
		change(&f)
	}
	return f
}

// answer makes f read a finished Ceph Job of verb.
func answer(f *Facts, verb cephjob.Verb, ok bool, message string) {
	f.Status.CephJob = cephjob.Name(f.UID, cephjob.Request{Verb: verb, Seq: f.Status.CephJobs - 1})
	f.Answer, f.Verb = &cephjob.Answer{Done: true, Succeeded: ok, Message: message}, verb
}

// probed makes f read the answer of a probe of the scene, as the probe
// sums it: for its probed OSD, and the replacement's when f has one.
func probed(f *Facts, s scene) {
	answer(f, cephjob.VerbProbe, true, "{...}")
	also := -1
	if f.ReplacementOSD != nil {
		also = int(f.ReplacementOSD.ID)
	}
	facts := s.Facts
	s.cluster.Summarize(&facts, s.probe, also)
	f.Ceph = &facts
}

// label is an identify answer: the device's label names uuid ("": none).
func label(uuid string) string {
	state := cephjob.LabelFound
	if uuid == "" {
		state = cephjob.LabelNone
	}
	return fmt.Sprintf(`{"label":%q,"osdUUID":%q,"identity":"sectors=8 serial=S-a-sdb wwn= backing="}`, state, uuid)
}

// cephWith is threeHosts probed for osd.3 (on node-b there), up and in
// with its PGs, changed by change.
func cephWith(change func(*scene)) scene {
	f := threeHosts()
	f.probe, f.osd(3).UUID = 3, "uuid-3"
	f.OSD.SafeToDestroy.RC, f.OSD.SafeToDestroy.Message = 16, "Error EBUSY: OSD(s) 3 have 60 pgs currently mapped to them."
	if change != nil {
		change(&f)
	}
	return f
}

// safe: osd.3 is out and drained, and Ceph calls it safe to destroy.
func safe(f *scene) {
	f.osd(3).PGs, f.osd(3).In = 0, false
	f.OSD.SafeToDestroy.RC, f.OSD.SafeToDestroy.Message = 0, "OSD(s) 3 are safe to destroy without reducing data durability."
}

// toolsRefusal is a node verb's answer when its tools are older than the
// cluster's OSDs (job.go, tools_read_labels).
const toolsRefusal = "refused: this Job's Ceph tools are of Ceph 19, and a daemon of the cluster runs Ceph 20: labels a newer Ceph wrote are not read, nor wiped, with older tools (nothing of the disk was read)"

// cephUnreachable is a node verb's answer when Ceph could not be asked
// about its tools (a node whose Ceph network is down).
const cephUnreachable = "cannot read the versions Ceph's daemons run: Error ETIMEDOUT (nothing of the disk was read)"

func TestNext(t *testing.T) {
	x := newStepFixture()
	stopped := x.osd
	stopped.Replicas, stopped.Running = 0, 0
	stopping := x.osd
	stopping.Replicas = 0
	tests := []struct {
		name    string
		facts   Facts
		phase   cephv1alpha1.DiskRetirementPhase
		action  Action
		verb    cephjob.Verb // the Ceph Job asked, with ActCephJob
		message string
	}{
		// Before anything is touched: the consumers, then Ceph, then the label.
		{"first, ask Ceph", x.fresh(), cephv1alpha1.RetirementPending, ActCephJob, cephjob.VerbProbe, "asking Ceph whether it can lose osd.3"},
		{"a consumers' check refuses before Ceph is asked", func() Facts {
			f := x.fresh()
			f.Preflight = []cephv1alpha1.PreflightCheck{{Name: CheckHosts, Message: "1 host would remain"}, {Name: CheckCopies, Passed: true}}
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "refused, nothing was touched: Hosts: 1 host would remain"},
		{"Ceph's checks pass: read the device's label", func() Facts { f := x.fresh(); probed(&f, cephWith(nil)); return f }(),
			cephv1alpha1.RetirementPending, ActCephJob, cephjob.VerbIdentify, "Ceph can lose osd.3 (up and in); reading the label of /dev/disk/by-id/wwn-0xb on node node-a"},
		{"Ceph's checks refuse", func() Facts {
			f := x.fresh()
			probed(&f, cephWith(func(c *scene) { c.osd(4).Up, c.osd(4).In = false, false }))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "Health: osd.4 (down and out): Ceph already lacks copies there"},
		{"another OSD down but in (Rook restarting it): wait for it", func() Facts {
			f := x.fresh()
			probed(&f, cephWith(func(c *scene) {
				c.osd(4).Up = false
				c.PGStates = map[string]int{"active+clean": 100, "active+undersized+degraded": 20}
			}))
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "waiting for Ceph to settle (osd.4 down, 20 active+undersized+degraded) before anything is touched"},
		{"PGs peering for a moment: wait for Ceph to settle", func() Facts {
			f := x.fresh()
			probed(&f, cephWith(func(c *scene) { c.PGStates = map[string]int{"active+clean": 119, "peering": 1} }))
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "waiting for Ceph to settle (1 peering) before anything is touched"},
		{"Ceph does not settle within the stall limit: refused", func() Facts {
			f := x.fresh()
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.Progressed = &long
			probed(&f, cephWith(func(c *scene) { c.PGStates = map[string]int{"active+clean": 119, "peering": 1} }))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "Ceph did not settle in 30m0s: Health: 1 PGs are peering"},
		{"settling: the next probe waits for the poll interval", func() Facts {
			f := x.fresh()
			began, asked := metav1.NewTime(x.now.Add(-time.Minute)), metav1.NewTime(x.now.Add(-time.Second))
			f.Status.Progressed, f.Status.AskedCephAt, f.Status.Message = &began, &asked, "waiting for Ceph to settle"
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "waiting for Ceph to settle"},
		{"Ceph did not answer", func() Facts {
			f := x.fresh()
			answer(&f, cephjob.VerbProbe, false, "DeadlineExceeded: Job was active longer than specified deadline")
			return f
		}(),
			cephv1alpha1.RetirementRefused, ActRelease, "", "Ceph did not answer (DeadlineExceeded"},
		{"Ceph's osd.3 is another OSD than Rook's", func() Facts {
			f := x.fresh()
			probed(&f, cephWith(func(c *scene) { c.osd(3).UUID = "uuid-other" }))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "Ceph's osd.3 has UUID uuid-other, Rook's Deployment says uuid-3"},
		{"the replacement has a Deployment but its OSD has not booted: wait, nothing touched", func() Facts {
			f := x.replacing()
			probed(&f, cephWith(nil))
			return f
		}(), cephv1alpha1.RetirementWaitingForReplacement, ActNone, "", "waiting for Ceph to have replacement Disk a-sdd's osd.9 up and in"},
		{"the replacement's OSD booted but is not in yet: wait", func() Facts {
			f := x.replacing()
			probed(&f, cephWith(func(c *scene) {
				c.cluster.OSDs = append(c.cluster.OSDs, cephjob.ClusterOSD{ID: 9, Host: "node-a", Class: "hdd", Up: true})
			}))
			return f
		}(), cephv1alpha1.RetirementWaitingForReplacement, ActNone, "", "osd.9 up and in"},
		{"the replacement's OSD is up and in: on to the label", func() Facts {
			f := x.replacing()
			probed(&f, cephWith(func(c *scene) {
				c.cluster.OSDs = append(c.cluster.OSDs, cephjob.ClusterOSD{ID: 9, Host: "node-a", Class: "hdd", Up: true, In: true, KB: 10 << 20})
			}))
			return f
		}(), cephv1alpha1.RetirementPending, ActCephJob, cephjob.VerbIdentify, "Ceph can lose osd.3"},
		{"the replacement's OSD never comes up: refused after the stall limit", func() Facts {
			f := x.replacing()
			long := metav1.NewTime(x.now.Add(-31 * time.Minute))
			f.Status.Progressed = &long
			probed(&f, cephWith(nil))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "replacement Disk a-sdd's osd.9 did not come up and in within 30m0s"},
		{"between probes the wait for the replacement keeps its phase", func() Facts {
			f := x.replacing()
			asked := metav1.NewTime(x.now.Add(-time.Second))
			f.Status.Phase, f.Status.Progressed, f.Status.AskedCephAt = cephv1alpha1.RetirementWaitingForReplacement, &asked, &asked
			f.Status.Message = "waiting for Ceph to have replacement Disk a-sdd's osd.9 up and in"
			return f
		}(), cephv1alpha1.RetirementWaitingForReplacement, ActNone, "", "osd.9 up and in"},
		{"the label names the OSD: mark it out while it runs", func() Facts {
			f := x.fresh()
			answer(&f, cephjob.VerbIdentify, true, label("uuid-3"))
			return f
		}(), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbOut, "marking osd.3 out while it runs"},
		{"the label names another OSD: the kernel names moved, that OSD is checked instead", func() Facts {
			f := x.fresh()
			answer(&f, cephjob.VerbIdentify, true, label("uuid-5"))
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "holds the OSD with UUID uuid-5, not osd.3 (Rook recorded the kernel name"},
		{"the label moves again after the OSD was found by it", func() Facts {
			f := x.fresh()
			f.Status.DeviceLabel = "uuid-3"
			answer(&f, cephjob.VerbIdentify, true, label("uuid-5"))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "holds the OSD with UUID uuid-5, not osd.3 (UUID uuid-3)"},
		{"the device carries no label", func() Facts {
			f := x.fresh()
			answer(&f, cephjob.VerbIdentify, true, label(""))
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "holds no BlueStore label, not osd.3"},
		{"suspended: every check shown, nothing touched", func() Facts {
			f := x.fresh()
			f.Suspend = true
			answer(&f, cephjob.VerbIdentify, true, label("uuid-3"))
			return f
		}(), cephv1alpha1.RetirementSuspended, ActNone, "", "nothing is touched until spec.suspend is set to false"},
		{"another retirement runs", func() Facts { f := x.fresh(); f.Queue.Ahead = "DiskRetirement q (Draining)"; return f }(),
			cephv1alpha1.RetirementPending, ActNone, "", "waiting for DiskRetirement q (Draining) to finish: Ceph retires one OSD at a time"},
		{"a Ceph Job runs: wait for it", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			f.Status.CephJob, f.Status.Message = "ceph-rook-probe-uidr-3", "osd.3 drains"
		}),
			cephv1alpha1.RetirementDraining, ActNone, "", "osd.3 drains (Ceph Job ceph-rook-probe-uidr-3 runs)"},
		{"a Ceph Job the status names is gone: made again", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			f.Status.CephJob, f.CephJobMissing = cephjob.Name(f.UID, cephjob.Request{Verb: cephjob.VerbOut, Seq: 3}), true
		}), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbOut, ""},

		// Draining.
		{"marked out: ask how it drains", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) { answer(f, cephjob.VerbOut, true, "marked out osd.3.") }),
			cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, "osd.3 is out"},
		{"Ceph refused to mark it out: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) { answer(f, cephjob.VerbOut, false, "Error EPERM") }),
			cephv1alpha1.RetirementAborting, ActNone, "", "aborting: Ceph did not mark osd.3 out (Error EPERM); giving osd.3 back"},
		{"PGs left: wait", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) {
				c.osd(3).PGs, c.osd(3).In, c.PGStates = 20, false, map[string]int{"active+clean": 100, "active+remapped+backfilling": 20}
			}))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "osd.3 is out and drains: 20 PGs left"},
		{"no probe before the poll interval", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			asked := metav1.NewTime(x.now.Add(-time.Second))
			f.Status.AskedCephAt = &asked
		}), cephv1alpha1.RetirementDraining, ActNone, "", ""},
		{"then one", x.at(cephv1alpha1.RetirementDraining, nil), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, ""},
		{"drained: stop it", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) { probed(f, cephWith(safe)) }),
			cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "", "Ceph says osd.3 is safe to destroy (no PG maps to it); stopping it"},
		{"no PG moved for the stall limit: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			left, objects, long := int32(20), int64(4000), metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.PGsLeft, f.Status.ObjectsToMove, f.Status.Progressed = &left, &objects, &long
			probed(f, cephWith(func(c *scene) {
				c.osd(3).PGs, c.osd(3).In, c.Recovery.Misplaced = 20, false, 4000
			}))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "neither a PG left osd.3 nor an object copy was recovered or moved for 30m0s (20 PGs left, 4000 object copies"},
		{"objects moved, no whole PG yet: not stalled (big PGs drain slowly)", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			left, objects, long := int32(20), int64(4000), metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.PGsLeft, f.Status.ObjectsToMove, f.Status.Progressed = &left, &objects, &long
			probed(f, cephWith(func(c *scene) {
				c.osd(3).PGs, c.osd(3).In, c.Recovery.Misplaced = 20, false, 3990
			}))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "20 PGs left on it, 3990 object copies to recover or move"},
		{"counts that go up and down are no progress: the low-water marks decide", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			left, objects, long := int32(10), int64(100), metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.PGsLeft, f.Status.ObjectsToMove, f.Status.Progressed = &left, &objects, &long
			probed(f, cephWith(func(c *scene) {
				c.osd(3).PGs, c.osd(3).In, c.Recovery.Degraded = 10, false, 120
			}))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "neither a PG left osd.3 nor an object copy was recovered or moved"},
		{"Ceph still has it in after the out: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) { c.osd(3).PGs = 20 }))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "Ceph still has osd.3 in after it was marked out"},
		{"a PG moved: not stalled", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			left, long := int32(21), metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.PGsLeft, f.Status.Progressed = &left, &long
			probed(f, cephWith(func(c *scene) { c.osd(3).PGs, c.osd(3).In = 20, false }))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "20 PGs left"},
		{"another host goes down while it drains (Rook restarting its OSDs): hold", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) {
				c.osd(3).In = false
				c.osd(4).Up, c.osd(5).Up = false, false
			}))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "waiting for osd.4 on host node-c; osd.5 on host node-c, down but still in; asking again"},
		{"held for the stall limit: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.Progressed = &long
			probed(f, cephWith(func(c *scene) { c.osd(3).In, c.osd(4).Up = false, false }))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "aborting: waiting for osd.4 on host node-c, down but still in for 30m0s; giving osd.3 back"},
		{"drained, but another OSD is down: not stopped", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) { safe(c); c.osd(4).Up = false }))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "waiting for osd.4 on host node-c, down but still in"},
		{"Ceph marks the down OSDs out: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) {
				c.osd(3).In = false
				c.osd(4).Up, c.osd(4).In = false, false
			}))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "osd.4 on host node-c is down and out: Ceph lacks copies there while osd.3 drains"},
		{"PGs peering right after the out: wait, not abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) {
				c.osd(3).In = false
				c.Health.Status, c.Health.Checks = "HEALTH_WARN", map[string]string{"PG_AVAILABILITY": "Reduced data availability: 10 pgs peering"}
				c.PGStates = map[string]int{"active+clean": 110, "peering": 10}
			}))
		}), cephv1alpha1.RetirementDraining, ActNone, "", "osd.3 is out and drains: 60 PGs left"},
		{"an OSD nearly full while it drains: abort", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			probed(f, cephWith(func(c *scene) {
				c.osd(3).In = false
				c.Health.Status, c.Health.Checks = "HEALTH_WARN", map[string]string{"OSD_NEARFULL": "1 nearfull osd(s)"}
			}))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "Ceph reports OSD_NEARFULL"},
		{"cancelled while it drains: give back", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) { f.Deleting = true }),
			cephv1alpha1.RetirementAborting, ActCephJob, cephjob.VerbProbe, "aborting (cancelled): asking Ceph whether osd.3 is up, to mark it in again"},

		// Stopping.
		{"scale down again after a crash", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) { f.Status.OSDStopped = true }),
			cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "", "stopping osd.3"},
		{"its pod still stops (terminating ones counted)", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) { f.Status.OSDStopped, f.Deployment = true, &stopping }),
			cephv1alpha1.RetirementStoppingOSD, ActNone, "", "waiting for osd.3's pod to stop (1 still there"},
		{"pod gone: does Ceph see it down?", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) { f.Status.OSDStopped, f.Deployment = true, &stopped }),
			cephv1alpha1.RetirementStoppingOSD, ActCephJob, cephjob.VerbProbe, "osd.3's pod is gone"},
		{"Ceph still sees it up: wait", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			probed(f, cephWith(safe))
		}), cephv1alpha1.RetirementStoppingOSD, ActNone, "", "Ceph still sees it up"},
		{"down and safe: purge", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			probed(f, cephWith(func(c *scene) { safe(c); c.osd(3).Up = false }))
		}), cephv1alpha1.RetirementRemoving, ActCephJob, cephjob.VerbPurge, "osd.3 is down and safe to destroy; purging it"},
		{"down but not safe for the stall limit: abort", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.OSDStopped, f.Deployment, f.Status.Progressed = true, &stopped, &long
			probed(f, cephWith(func(c *scene) {
				c.osd(3).Up, c.OSD.SafeToDestroy.RC, c.OSD.SafeToDestroy.Message = false, 11, "Error EAGAIN: not all PGs are active+clean"
			}))
		}), cephv1alpha1.RetirementAborting, ActScaleUp, "", "aborting (osd.3 is down, and Ceph does not call it safe to destroy (Error EAGAIN"},
		{"cancelled while stopping: start it again first", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) { f.Status.OSDStopped, f.Deployment, f.Deleting = true, &stopped, true }),
			cephv1alpha1.RetirementAborting, ActScaleUp, "", "starting osd.3 again"},

		// Removing, wiping: out of the CephCluster first, then wiped, then
		// the Deployment goes.
		{"Ceph refused the purge: a probe says whether it is gone", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			answer(f, cephjob.VerbPurge, false, "Error EBUSY: OSD(s) 3 have 2 pgs currently mapped to them.")
		}), cephv1alpha1.RetirementRemoving, ActCephJob, cephjob.VerbProbe, "Ceph did not confirm osd.3's purge (Error EBUSY"},
		{"the purge Job succeeded (it read the map after): purged, out of the CephCluster", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			answer(f, cephjob.VerbPurge, true, "osd.3 is not in Ceph's OSD map")
		}), cephv1alpha1.RetirementWiping, ActMarkRetired, "", "taking /dev/disk/by-id/wwn-0xb out of the CephCluster before it is wiped"},
		{"purged: out of the CephCluster before it is wiped", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			probed(f, cephWith(func(c *scene) { c.remove(3) }))
		}), cephv1alpha1.RetirementWiping, ActMarkRetired, "", "osd.3 is purged; taking /dev/disk/by-id/wwn-0xb out of the CephCluster before it is wiped"},
		{"the ID is another OSD's now: ours is purged", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			probed(f, cephWith(func(c *scene) { c.osd(3).UUID = "uuid-new" }))
		}), cephv1alpha1.RetirementWiping, ActMarkRetired, "", "osd.3 is purged"},
		{"the purge answered, but the OSD is still in the map: not purged, checked again", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			probed(f, cephWith(func(c *scene) { safe(c); c.osd(3).Up = false }))
		}), cephv1alpha1.RetirementStoppingOSD, ActNone, "", "osd.3 is still in Ceph's OSD map after its purge"},
		{"no answer after the purge: purge again, never given back", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment = true, &stopped
			answer(f, cephjob.VerbProbe, false, "Error ETIMEDOUT")
		}), cephv1alpha1.RetirementRemoving, ActNone, "", "Ceph did not say whether osd.3 is gone after its purge (Error ETIMEDOUT); purging it again"},
		{"down and safe, purges refused for the stall limit: abort (the OSD is known to exist)", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.OSDStopped, f.Deployment, f.Status.Progressed = true, &stopped, &long
			probed(f, cephWith(func(c *scene) { safe(c); c.osd(3).Up = false }))
		}), cephv1alpha1.RetirementAborting, ActScaleUp, "", "Ceph did not purge osd.3 within 30m0s"},
		{"a pod that never stops (its node NotReady) is waited for up to the stall limit", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.OSDStopped, f.Deployment, f.Status.Progressed = true, &stopping, &long
		}), cephv1alpha1.RetirementAborting, ActScaleUp, "", "waiting for osd.3's pod to stop (1 still there, terminating ones counted) for 30m0s"},
		{"cancelling does not stop a purge", x.at(cephv1alpha1.RetirementRemoving, func(f *Facts) {
			f.Status.OSDStopped, f.Status.Purged, f.Deployment, f.Deleting = true, true, &stopped, true
		}), cephv1alpha1.RetirementWiping, ActMarkRetired, "", ""},
		{"waiting for the device to leave the list before the wipe", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment = true, &stopped
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementWiping, ActNone, "", "waiting for /dev/disk/by-id/wwn-0xb to leave"},
		{"out of the list: wiped, its Deployment still there", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment, f.Listed = true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementWiping, ActCephJob, cephjob.VerbZap, "osd.3 is purged and /dev/disk/by-id/wwn-0xb is out of the CephCluster; wiping it"},
		{"a prepare Rook started while the device was listed: wait before the wipe", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment, f.Listed, f.PrepareRunning = true, &stopped, false, "rook-ceph-osd-prepare-node-a-x7k2p"
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementWiping, ActNone, "", "waiting for Rook's OSD prepare on node node-a (rook-ceph-osd-prepare-node-a-x7k2p) to end"},
		{"wiped: its Deployment goes", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment, f.Listed = true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbZap, true, "wiped /dev/sdb (it held the OSD with UUID uuid-3)")
		}), cephv1alpha1.RetirementWiping, ActDeleteDeployment, "", "deleting osd.3's Deployment rook-ceph-osd-3"},
		{"the label names another OSD: not wiped, the operator told", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment, f.Listed = true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbZap, false, "refused: /dev/sdb holds the OSD with UUID uuid-5, not uuid-3")
		}), cephv1alpha1.RetirementWiping, ActNone, "", "was not wiped (refused: /dev/sdb holds the OSD with UUID uuid-5"},
		{"retired", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Status.Wiped, f.Deployment, f.Listed = true, true, nil, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementRetired, ActRelease, "", "retired: osd.3 is purged from Ceph, /dev/disk/by-id/wwn-0xb of node node-a is wiped and out of the CephCluster"},

		// Aborting gives back in order: start, then mark in, then end.
		{"once started, ask whether it is up", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) { f.Status.AbortReason, f.Status.AskedCephAt = "no PG moved", nil }),
			cephv1alpha1.RetirementAborting, ActCephJob, cephjob.VerbProbe, "asking Ceph whether osd.3 is up"},
		{"up: mark it in", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason = "no PG moved"
			probed(f, cephWith(func(c *scene) { c.osd(3).In = false }))
		}), cephv1alpha1.RetirementAborting, ActCephJob, cephjob.VerbIn, "osd.3 is up; marking it in again"},
		{"not up yet: never marked in while down", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason = "no PG moved"
			probed(f, cephWith(func(c *scene) { c.osd(3).In, c.osd(3).Up = false, false }))
		}), cephv1alpha1.RetirementAborting, ActNone, "", "waiting for Ceph to see osd.3 up before it is marked in"},
		{"not up within the stall limit: left out, and said so", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.Status.AbortReason, f.Status.Progressed = "no PG moved", &long
			probed(f, cephWith(func(c *scene) { c.osd(3).In, c.osd(3).Up = false, false }))
		}), cephv1alpha1.RetirementFailed, ActRelease, "", "osd.3 was left out: Ceph did not see it up within 30m0s"},
		{"whatever Ceph answered to the in, a probe says whether it is in", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason = "no PG moved"
			answer(f, cephjob.VerbIn, true, "marked in osd.3.")
		}), cephv1alpha1.RetirementAborting, ActCephJob, cephjob.VerbProbe, "asking it whether osd.3 is in"},
		{"given back: Failed, with the reason", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason = "no PG moved"
			probed(f, cephWith(nil))
		}), cephv1alpha1.RetirementFailed, ActRelease, "", "aborted: no PG moved; osd.3 is up and in again"},
		{"given back after a cancel: Cancelled", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason, f.Deleting = "cancelled", true
			probed(f, cephWith(nil))
		}), cephv1alpha1.RetirementCancelled, ActRelease, "", "aborted: cancelled"},
		{"an OSD that was out before the retirement stays out", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason, f.Status.MarkedOut = "no PG moved", false
			f.Status.OSDBefore = &cephv1alpha1.OSDState{Up: true}
		}), cephv1alpha1.RetirementFailed, ActRelease, "", "osd.3 is as it was before (out)"},

		// An upgrade step about to be taken, or a roll (U1): nothing touched.
		{"an upgrade rolls: wait before anything is touched", func() Facts {
			f := x.fresh()
			f.Upgrade = "upgrading Ceph to v19.2.4: 2 of 9 daemons on it"
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "waiting for the upgrade before anything is touched: upgrading Ceph to v19.2.4"},
		{"a retirement under way goes on through an upgrade's start", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			f.Upgrade = "an upgrade step is about to be taken"
		}), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, ""},

		// No OSD Deployment records the disk's path (D2): its label decides.
		{"no OSD by path: read the label before anything", func() Facts { f := x.fresh(); f.Lookup = OSDLookup{}; return f }(),
			cephv1alpha1.RetirementPending, ActCephJob, cephjob.VerbIdentify, "no OSD Deployment records /dev/disk/by-id/wwn-0xb; reading its label"},
		{"no OSD by path, no label: it never became one", func() Facts {
			f := x.fresh()
			f.Lookup = OSDLookup{}
			answer(&f, cephjob.VerbIdentify, true, label(""))
			return f
		}(), cephv1alpha1.RetirementWiping, ActMarkRetired, "", "carries no BlueStore label (it never became one)"},
		{"no OSD by path, but a label: that OSD is looked up by it", func() Facts {
			f := x.fresh()
			f.Lookup = OSDLookup{}
			answer(&f, cephjob.VerbIdentify, true, label("uuid-7"))
			return f
		}(), cephv1alpha1.RetirementPending, ActNone, "", "its label names the OSD with UUID uuid-7"},
		{"no OSD by path, label unreadable: refused", func() Facts {
			f := x.fresh()
			f.Lookup = OSDLookup{}
			answer(&f, cephjob.VerbIdentify, false, "the label of /dev/sdb cannot be read: (5) Input/output error")
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "its label on node node-a could not be read"},
		{"no OSD by path, device gone: refused, not marked retired blind", func() Facts {
			f := x.fresh()
			f.Lookup = OSDLookup{}
			answer(&f, cephjob.VerbIdentify, true, `{"label":"missing","osdUUID":"","identity":""}`)
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "is not a device on node node-a"},

		// Out of its pool, its OSD still runs (S4): retired as any other.
		{"taken out of its pool, OSD still running: retired", func() Facts {
			f := x.fresh()
			f.Disk.Status.ClaimedBy, f.Listed = "", false
			return f
		}(), cephv1alpha1.RetirementPending, ActCephJob, cephjob.VerbProbe, "asking Ceph whether it can lose osd.3"},
		{"out of its pool and no OSD: nothing to retire", func() Facts {
			f := x.fresh()
			f.Disk.Status.ClaimedBy, f.Listed, f.Lookup = "", false, OSDLookup{}
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "no OSD Deployment runs on it: there is nothing to retire"},

		// The state before (S1): an OSD already out is not marked out.
		{"already out before the retirement: not marked out, drained as it is", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{Up: true}
			answer(&f, cephjob.VerbIdentify, true, label("uuid-3"))
			return f
		}(), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, "osd.3 is already out (and stays so if this retirement is aborted)"},

		// A dead disk (S3): Ceph has the OSD down, its device is gone or
		// unreadable: drained by recovery, purged by ID, not wiped.
		{"dead disk, OSD down and in: marked out so Ceph recovers", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{In: true}
			answer(&f, cephjob.VerbIdentify, true, `{"label":"missing","osdUUID":"","identity":""}`)
			return f
		}(), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbOut, "osd.3 is down and /dev/disk/by-id/wwn-0xb is not a device on node node-a any more: marking it out"},
		{"dead disk, unreadable, OSD down and out: wait for Ceph", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{}
			answer(&f, cephjob.VerbIdentify, false, "the label of /dev/sdb cannot be read: (5) Input/output error")
			f.Answer.Ran = true
			return f
		}(), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, "osd.3 is down and out and its label cannot be read"},
		{"OSD down, but the identify Job never ran (its node down): refused, not taken for a dead disk", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{}
			answer(&f, cephjob.VerbIdentify, false, "DeadlineExceeded: Job was active longer than specified deadline")
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "could not be read (DeadlineExceeded"},
		{"L3: OSD down, the identify's tools older than the OSDs: refused, not taken for a dead disk", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{}
			answer(&f, cephjob.VerbIdentify, false, toolsRefusal)
			f.Answer.Ran = true
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "could not be read (refused: this Job's Ceph tools are of Ceph 19"},
		{"R1: OSD down, the identify could not ask Ceph about its tools: refused, not taken for a dead disk", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{}
			answer(&f, cephjob.VerbIdentify, false, cephUnreachable)
			f.Answer.Ran = true
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "could not be read (cannot read the versions"},
		{"unreadable while Ceph has the OSD up: refused", func() Facts {
			f := x.fresh()
			f.Status.OSDID, f.Status.OSDUUID, f.Status.OSDBefore = &x.osd.ID, "uuid-3", &cephv1alpha1.OSDState{Up: true, In: true}
			answer(&f, cephjob.VerbIdentify, false, "the label of /dev/sdb cannot be read: (5) Input/output error")
			return f
		}(), cephv1alpha1.RetirementRefused, ActRelease, "", "could not be read"},
		{"a dead disk's purged OSD: out of the list, then its disk looked at once more", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementWiping, ActCephJob, cephjob.VerbIdentify, "looking whether its dead disk is back"},
		{"the dead disk is still gone: left unwiped, its Deployment goes", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbIdentify, true, `{"label":"missing","osdUUID":"","identity":""}`)
		}), cephv1alpha1.RetirementWiping, ActDeleteDeployment, "", "deleting osd.3's Deployment"},
		{"the second look at a dead disk never ran (its node down): asked again, nothing deleted", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbIdentify, false, "DeadlineExceeded: Job was active longer than specified deadline")
		}), cephv1alpha1.RetirementWiping, ActNone, "", "node node-a did not run the look at the dead disk"},
		{"L3: the second look's tools are older than the OSDs: asked again, nothing deleted", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbIdentify, false, toolsRefusal)
			f.Answer.Ran = true
		}), cephv1alpha1.RetirementWiping, ActNone, "", "did not run the look at the dead disk (refused: this Job's Ceph tools"},
		{"R1: the second look could not ask Ceph about its tools: asked again, nothing deleted", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbIdentify, false, cephUnreachable)
			f.Answer.Ran = true
		}), cephv1alpha1.RetirementWiping, ActNone, "", "did not run the look at the dead disk (cannot read the versions"},
		{"the dead disk came back with its label: wiped", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.DiskGone, f.Status.Purged, f.Deployment, f.Listed = true, true, &stopped, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			answer(f, cephjob.VerbIdentify, true, label("uuid-3"))
		}), cephv1alpha1.RetirementWiping, ActCephJob, cephjob.VerbZap, "the dead disk is back on node node-a with osd.3's label: wiping it"},
		{"a dead disk's abort never marks its OSD in", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason, f.Status.DiskGone = "cancelled", true
			probed(f, cephWith(func(c *scene) { c.osd(3).In, c.osd(3).Up = false, false }))
		}), cephv1alpha1.RetirementCancelled, ActRelease, "", "osd.3 was left out: its disk cannot be read"},

		{"a dead disk that came back up is marked in on a cancel", x.at(cephv1alpha1.RetirementAborting, func(f *Facts) {
			f.Status.AbortReason, f.Status.DiskGone = "cancelled", true
			probed(f, cephWith(func(c *scene) { c.osd(3).In = false }))
		}), cephv1alpha1.RetirementAborting, ActCephJob, cephjob.VerbIn, "osd.3 is up; marking it in again"},

		// A wipe that cannot run ends on the operator's word (H1).
		{"not wiped: the status says what is asked", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment = true, nil
			answer(f, cephjob.VerbZap, false, "DeadlineExceeded: Job was active longer than specified deadline")
		}), cephv1alpha1.RetirementWiping, ActNone, "", "set spec.acknowledge to WipedByHand, or to DiskGone if the disk is no longer in node node-a"},
		{"acknowledged: left unwiped, its Deployment goes", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Deployment, f.Listed, f.Status.ManualSteps = true, &stopped, false, "wipe it"
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
			f.Acknowledge = cephv1alpha1.DiskGone
		}), cephv1alpha1.RetirementWiping, ActDeleteDeployment, "", "deleting osd.3's Deployment"},
		{"acknowledged and done: retired, saying it was not wiped", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Status.LeftUnwiped, f.Deployment, f.Listed = true, "spec.acknowledge says DiskGone", nil, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementRetired, ActRelease, "", "not wiped (spec.acknowledge says DiskGone; see manualSteps)"},
		{"an acknowledgement before the purge changes nothing", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) {
			f.Acknowledge = cephv1alpha1.WipedByHand
		}), cephv1alpha1.RetirementDraining, ActCephJob, cephjob.VerbProbe, ""},

		// Waiting for a replacement is bounded (H3).
		{"the replacement never becomes an OSD: Failed, nothing else touched", func() Facts {
			f := x.replacing()
			long := metav1.NewTime(x.now.Add(-time.Hour))
			f.ReplacementJoined, f.ReplacementOSD = false, nil
			f.Status.Phase, f.Status.Progressed = cephv1alpha1.RetirementWaitingForReplacement, &long
			return f
		}(), cephv1alpha1.RetirementFailed, ActRelease, "", "Rook did not make replacement Disk a-sdd an OSD within 30m0s"},

		{"the Disk went away after the purge: its Deployment still goes", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Status.DiskGone, f.Status.LeftUnwiped, f.Deployment, f.Disk, f.Listed = true, true, "its disk is gone", &stopped, nil, false
		}), cephv1alpha1.RetirementWiping, ActDeleteDeployment, "", "deleting osd.3's Deployment rook-ceph-osd-3"},
		{"the Disk went away: retired", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			f.Status.Purged, f.Status.DiskGone, f.Status.LeftUnwiped, f.Deployment, f.Disk, f.Listed = true, true, "its disk is gone", nil, nil, false
		}), cephv1alpha1.RetirementRetired, ActRelease, "", "retired: osd.3 is purged"},

		// A Deployment of the purged OSD's ID with another UUID (L1).
		{"a new OSD took the purged one's ID: its Deployment is not deleted", x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
			reused := x.osd
			reused.UUID = "uuid-new"
			f.Status.Purged, f.Status.Wiped, f.Deployment, f.Listed = true, true, &reused, false
			f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
		}), cephv1alpha1.RetirementRetired, ActRelease, "", "retired: osd.3 is purged"},

		// Anything touched with a Deployment that cannot be read: hold.
		{"an unreadable Deployment is not a gone one", x.at(cephv1alpha1.RetirementStoppingOSD, func(f *Facts) {
			f.Status.OSDStopped, f.Deployment, f.DeploymentUnreadable = true, nil, "no UUID"
		}), cephv1alpha1.RetirementStoppingOSD, ActNone, "", "osd.3's Deployment cannot be read (no UUID)"},
		{"nor while it drains", x.at(cephv1alpha1.RetirementDraining, func(f *Facts) { f.Deployment, f.DeploymentUnreadable = nil, "no UUID" }),
			cephv1alpha1.RetirementDraining, ActNone, "", "cannot tell whether the OSD runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Next(tc.facts)
			assert.Equal(t, tc.phase, got.Status.Phase, got.Status.Message)
			assert.Equal(t, tc.action, got.Action, got.Status.Message)
			assert.Contains(t, got.Status.Message, tc.message)
			if tc.action == ActCephJob {
				require.Equal(t, tc.verb, got.Request.Verb)
				assert.Equal(t, cephjob.Name(tc.facts.UID, got.Request), got.Status.CephJob, "the status names the Job before it is made")
				if tc.facts.Lookup.OSD != nil || tc.facts.Status.OSDID != nil {
					assert.Equal(t, int32(3), got.Request.OSDID)
				}
			}
			if tc.facts.Answer != nil && got.Action != ActCephJob {
				assert.Empty(t, got.Status.CephJob, "an answer read lets its Job go")
			}
		})
	}
}

// The kernel names of two disks swapped: the label of the retired disk's
// device names the other OSD, which is looked up by that label and checked
// from the start: the next Ceph Job asks about it, not about the OSD
// recorded at the disk's kernel name.
func TestKernelNamesMovedTheLabelFindsTheOSD(t *testing.T) {
	x := newStepFixture()
	f := x.fresh()
	answer(&f, cephjob.VerbIdentify, true, label("uuid-5"))
	moved := Next(f)
	require.Equal(t, "uuid-5", moved.Status.DeviceLabel)
	assert.Nil(t, moved.Status.OSDID, "the OSD recorded at the kernel name is forgotten")
	assert.Nil(t, moved.Status.AskedCephAt, "the next probe is due at once")

	next := f.then(moved)
	recordedAtSdc := rook.OSD{ID: 5, Deployment: "rook-ceph-osd-5", Node: "node-a", UUID: "uuid-5", BlockPath: "/dev/sdc", Replicas: 1, Running: 1}
	next.Lookup = FindOSDByLabel(next.Disk, []rook.OSD{x.osd, recordedAtSdc}, moved.Status.DeviceLabel)
	next.Deployment = &recordedAtSdc
	probe := Next(next)
	require.Equal(t, ActCephJob, probe.Action, probe.Status.Message)
	assert.Equal(t, cephjob.VerbProbe, probe.Request.Verb)
	assert.Equal(t, int32(5), probe.Request.OSDID)
	assert.Equal(t, "uuid-5", probe.Status.OSDUUID)

	checked := next.then(probe)
	probed(&checked, cephWith(func(c *scene) { c.remove(5); o := c.osd(3); o.ID, o.UUID, c.probe = 5, "uuid-5", 5 }))
	identify := Next(checked)
	require.Equal(t, cephjob.VerbIdentify, identify.Request.Verb, identify.Status.Message)
	labelled := checked.then(identify)
	answer(&labelled, cephjob.VerbIdentify, true, label("uuid-5"))
	out := Next(labelled)
	assert.Equal(t, cephv1alpha1.RetirementDraining, out.Status.Phase, out.Status.Message)
	assert.Equal(t, cephjob.VerbOut, out.Request.Verb)
	assert.Equal(t, int32(5), out.Request.OSDID)
}

// Every abort gives back everything: for each way a touched retirement
// can be stopped, running the steps to the end starts the OSD and marks
// it in before the retirement ends.
func TestEveryAbortGivesEverythingBack(t *testing.T) {
	x := newStepFixture()
	stopped := x.osd
	stopped.Replicas, stopped.Running = 0, 0
	for _, start := range []cephv1alpha1.DiskRetirementPhase{cephv1alpha1.RetirementDraining, cephv1alpha1.RetirementStoppingOSD} {
		t.Run(string(start), func(t *testing.T) {
			f := x.at(start, func(f *Facts) {
				f.Deleting = true
				f.Status.OSDStopped = start == cephv1alpha1.RetirementStoppingOSD
				if f.Status.OSDStopped {
					f.Deployment = &stopped
				}
			})
			started, in := !f.Status.OSDStopped, false
			for range 20 {
				s := Next(f)
				switch s.Action {
				case ActScaleUp:
					up := x.osd
					f.Deployment, started = &up, true
				case ActCephJob:
					require.Contains(t, []cephjob.Verb{cephjob.VerbIn, cephjob.VerbProbe}, s.Request.Verb)
					if s.Request.Verb == cephjob.VerbIn {
						require.True(t, started, "marked in only once started")
						in = true
					}
				}
				if s.Status.Phase.Finished() {
					assert.Equal(t, cephv1alpha1.RetirementCancelled, s.Status.Phase, s.Status.Message)
					assert.True(t, started && in, "the OSD is started and marked in before it ends")
					assert.False(t, s.Status.OSDStopped || s.Status.MarkedOut)
					return
				}
				f.Status = s.Status
				f.Answer, f.Verb, f.Ceph = nil, "", nil
				switch {
				case s.Action == ActCephJob && s.Request.Verb == cephjob.VerbProbe:
					probed(&f, cephWith(func(c *scene) { c.osd(3).Up, c.osd(3).In = started, in }))
				case s.Action == ActCephJob:
					answer(&f, s.Request.Verb, true, "marked in osd.3.")
				}
				f.Now = f.Now.Add(time.Minute)
			}
			t.Fatalf("no end after 20 steps: %s: %s", f.Status.Phase, f.Status.Message)
		})
	}
}

func TestRetiredStatusSaysWhatIsLeftToDo(t *testing.T) {
	x := newStepFixture()
	got := Next(x.at(cephv1alpha1.RetirementWiping, func(f *Facts) {
		f.Status.Purged, f.Status.Wiped, f.Deployment, f.Listed = true, true, nil, false
		f.Disk.Annotations = map[string]string{cephv1alpha1.RetiredAnnotation: "osd.3"}
	}))
	assert.Equal(t, cephv1alpha1.RetirementRetired, got.Status.Phase)
	assert.Contains(t, got.Status.ManualSteps, "remove the ceph.fundament.io/retired annotation from Disk a-sdb")
	assert.NotContains(t, got.Status.ManualSteps, "sgdisk", "the plugin wiped the device itself")
}

func availableDisk(name string) *cephv1alpha1.Disk {
	d := retirementDisk(name, "node-b", "/dev/sdc", "/dev/disk/by-id/wwn-0xc")
	d.Status.State, d.Status.ClaimedBy, d.Status.Available = cephv1alpha1.DiskAvailable, "", true
	return d
}

func TestLowWater(t *testing.T) {
	status := func(pgs int32, objects int64) cephv1alpha1.DiskRetirementStatus {
		return cephv1alpha1.DiskRetirementStatus{PGsLeft: &pgs, ObjectsToMove: &objects}
	}
	for _, tc := range []struct {
		name         string
		before       cephv1alpha1.DiskRetirementStatus
		pgs          int32
		objects      int64
		wantPGs      int32
		wantObj      int64
		wantProgress bool
	}{
		{"the first probe", cephv1alpha1.DiskRetirementStatus{}, 20, 500, 20, 500, true},
		{"a PG left", status(20, 500), 19, 600, 19, 500, true},
		{"objects moved", status(20, 500), 20, 499, 20, 499, true},
		{"up again: no progress, the marks stay", status(20, 500), 21, 510, 20, 500, false},
		{"back to the mark: no progress", status(20, 500), 20, 500, 20, 500, false},
		{"nothing misplaced yet at the first probe: the first count seeds the mark", status(20, 0), 20, 900000, 20, 900000, false},
		{"then a new low", status(20, 900000), 20, 620000, 20, 620000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pgs, objects, progress := lowWater(tc.before, tc.pgs, tc.objects)
			assert.Equal(t, tc.wantPGs, pgs)
			assert.Equal(t, tc.wantObj, objects)
			assert.Equal(t, tc.wantProgress, progress)
		})
	}
}

// A probe asks about the replacement's OSD too (F1: the answer no longer
// lists every OSD), and only a probe.
func TestAProbeAsksAboutTheReplacement(t *testing.T) {
	var s cephv1alpha1.DiskRetirementStatus
	s.OSDID = new(int32(3))
	replacement := &rook.OSD{ID: 9}
	assert.Equal(t, new(int32(9)), request(s, cephjob.VerbProbe, 1, replacement).AlsoOSDID)
	assert.Nil(t, request(s, cephjob.VerbProbe, 1, nil).AlsoOSDID)
	assert.Nil(t, request(s, cephjob.VerbOut, 1, replacement).AlsoOSDID)

	env := map[string]string{}
	job := cephjob.Render("rook-ceph", metav1.OwnerReference{UID: "u"}, request(s, cephjob.VerbProbe, 1, replacement), "rook/ceph:v1.18.11")
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	assert.Equal(t, "3", env[cephjob.EnvOSDID])
	assert.Equal(t, "9", env[cephjob.EnvAlsoOSDID])
}

// Another OSD out is trouble wherever the probe's list names it (the
// probe puts the out ones first; the plugin does not rely on it).
func TestDrainTroubleFindsAnOutOSDAnywhereInTheList(t *testing.T) {
	c := cephjob.Facts{Missing: []cephjob.MissingOSD{{ID: 4, In: true, Host: "node-c"}, {ID: 5, Up: true, Host: "node-c"}}, MissingCount: 2}
	assert.Contains(t, drainTrouble(c, 3), "osd.5 on host node-c is out")
	assert.Empty(t, othersDownButIn(c), "one is out: the drain's trouble, not a wait")
	c.Missing, c.MissingCount = c.Missing[:1], 1
	assert.Empty(t, drainTrouble(c, 3))
	assert.Equal(t, "osd.4 on host node-c", othersDownButIn(c))
}
