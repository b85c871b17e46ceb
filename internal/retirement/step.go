package retirement

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

// Action is the one thing a retirement's reconcile does to the
// cluster, after its status says it will: a crash between the two finds
// the status and does the action again (each action is idempotent).
type Action string

const (
	ActNone Action = ""
	// ActAddReplacement adds the replacement Disk to the pool's spec.disks.
	ActAddReplacement Action = "AddReplacement"
	// ActCephJob creates the Ceph Job status.cephJob names (Request says
	// what it runs).
	ActCephJob Action = "CephJob"
	// ActScaleDown scales the OSD's Deployment to zero, with Rook's
	// do-not-reconcile label so that Rook does not start it again.
	ActScaleDown Action = "ScaleDown"
	// ActScaleUp scales the OSD's Deployment back to one.
	ActScaleUp Action = "ScaleUp"
	// ActDeleteDeployment deletes the purged OSD's Deployment, as Rook's
	// own removal does (pkg/daemon/ceph/osd/remove.go).
	ActDeleteDeployment Action = "DeleteDeployment"
	// ActMarkRetired puts RetiredAnnotation on the Disk, which takes its
	// device out of the CephCluster's list.
	ActMarkRetired Action = "MarkRetired"
	// ActRelease removes the retirement's finalizer: it holds nothing any
	// more, and deleting it is immediate.
	ActRelease Action = "Release"
)

// Timing is how a retirement waits on Ceph.
type Timing struct {
	// Poll is how long it waits between two probes of Ceph.
	Poll time.Duration
	// Stall is how long a wait may go without progress (no PG leaving a
	// draining OSD; Ceph not yet calling a stopped one safe to destroy or
	// down) before the retirement is aborted.
	Stall time.Duration
	// Sweep is how often the plugin looks for OSDs a retirement that is
	// gone left touched (sweep.go).
	Sweep time.Duration
}

// DefaultTiming: a probe every 15 seconds (Rook's own removal
// asks every 15 s, pkg/daemon/ceph/osd/remove.go); 30 minutes without a
// single PG moving is no backfill that is merely slow.
var DefaultTiming = Timing{Poll: 15 * time.Second, Stall: 30 * time.Minute, Sweep: time.Minute}

// Facts is everything a retirement's next step depends on.
type Facts struct {
	// Name and UID are the DiskRetirement's, DiskName its spec.disk.
	Name, DiskName string
	UID            types.UID
	Status         cephv1alpha1.DiskRetirementStatus
	Deleting       bool
	// Suspend is spec.suspend: stop after the checks.
	Suspend bool
	// Acknowledge is spec.acknowledge: the operator's word that the purged
	// OSD's device was wiped by hand, or is gone.
	Acknowledge cephv1alpha1.WipeAcknowledgement
	// Disk is the retired Disk; nil when there is none of that name.
	Disk *cephv1alpha1.Disk
	// Listed says the disk's device is in the CephCluster's list.
	Listed bool
	// Queue is where the retirement stands among the others.
	Queue Queue
	// Upgrade is what an upgrade does that a retirement must not start
	// beside ("" when nothing): Rook's roll holds an OSD the retirement
	// stopped, and the retirement moves data the roll's restarts disturb.
	Upgrade string
	// ReplacementName is spec.replacement; Replacement its Disk (nil: none
	// of that name), ReplacementInPool whether the pool lists it,
	// ReplacementJoined whether its device is listed and Rook runs an OSD
	// on it, ReplacementOSD that OSD (Ceph must still see it up and in).
	ReplacementName                      string
	Replacement                          *cephv1alpha1.Disk
	ReplacementInPool, ReplacementJoined bool
	ReplacementOSD                       *rook.OSD
	// Lookup is the disk's OSD, from Rook's OSD Deployments.
	Lookup OSDLookup
	// PrepareRunning names Rook's OSD prepare pod that runs on the
	// retirement's node, "" when none does.
	PrepareRunning string
	// Deployment is the Deployment of the OSD the status records; nil when
	// it is gone. DeploymentUnreadable says why it exists but cannot be
	// read: then nobody can tell whether the OSD still runs, and it is
	// never taken for gone.
	Deployment           *rook.OSD
	DeploymentUnreadable string
	// Preflight are the consumers' checks (Hosts, Copies), computed while
	// the retirement is untouched.
	Preflight []cephv1alpha1.PreflightCheck
	// Answer is the finished Ceph Job status.cephJob names, with its verb;
	// nil while it runs or when there is none. Ceph is the probe's answer
	// parsed, when Answer is a probe's that parsed.
	Answer *cephjob.Answer
	Verb   cephjob.Verb
	Ceph   *cephjob.Facts
	// CephJobMissing: status.cephJob names a Job that does not exist (a
	// crash between the status and the create, or Kubernetes deleted it
	// before its answer was read): it is made again, every verb being
	// idempotent.
	CephJobMissing bool
	// Now is the time of this reconcile; Timing its waits.
	Now    time.Time
	Timing Timing
}

// Step is the status a reconcile writes and the action it then
// takes; Request is the Ceph Job of ActCephJob.
type Step struct {
	Status  cephv1alpha1.DiskRetirementStatus
	Action  Action
	Request cephjob.Request
}

// Next decides a retirement's next step, in Ceph's order:
// checks (the consumers', then Ceph's, then the device's label) before
// anything is touched; out while the OSD runs; stopped only once Ceph says
// it is safe to destroy; purged (Ceph checking once more); the device
// wiped only if its label names the purged OSD; and only then out of the
// CephCluster. Until the purge, a cancellation, a refusal from Ceph or a
// wait without progress aborts it: the OSD is started again and marked in.
func Next(f Facts) Step {
	switch {
	case f.DeploymentUnreadable != "" && touched(f.Status):
		return step(f, f.Status.Phase, ActNone, "osd.%d's Deployment cannot be read (%s): the plugin cannot tell whether the OSD runs or was removed and waits until it can; Rook writes that Deployment, so look at what changed it", osdID(f), f.DeploymentUnreadable)
	case f.Status.Phase.Finished():
		return finished(f)
	case f.Status.CephJob != "" && f.Answer == nil && f.CephJobMissing:
		return again(f)
	case f.Status.CephJob != "" && f.Answer == nil:
		return step(f, f.Status.Phase, ActNone, "%s (Ceph Job %s runs)", strings.TrimSuffix(f.Status.Message, fmt.Sprintf(" (Ceph Job %s runs)", f.Status.CephJob)), f.Status.CephJob)
	}
	switch f.Status.Phase {
	case cephv1alpha1.RetirementAborting:
		return aborting(f)
	case cephv1alpha1.RetirementWiping:
		return wiping(f)
	case cephv1alpha1.RetirementRemoving:
		return removing(f)
	case cephv1alpha1.RetirementStoppingOSD:
		return stopping(f)
	case cephv1alpha1.RetirementDraining:
		return draining(f)
	}
	return untouched(f)
}

// touched: the retirement has changed the cluster (marked the OSD out,
// stopped it, purged it) or still has something to give back.
func touched(s cephv1alpha1.DiskRetirementStatus) bool {
	switch s.Phase {
	case cephv1alpha1.RetirementDraining, cephv1alpha1.RetirementStoppingOSD, cephv1alpha1.RetirementRemoving,
		cephv1alpha1.RetirementWiping, cephv1alpha1.RetirementAborting:
		return true
	}
	return s.OSDStopped || s.MarkedOut
}

// untouchedPhase: nothing of the cluster's was touched yet (the phases
// untouched decides), so the consumers' checks are computed.
func untouchedPhase(p cephv1alpha1.DiskRetirementPhase) bool {
	return !p.Finished() && !touched(cephv1alpha1.DiskRetirementStatus{Phase: p})
}

// step is the status with phase and message replaced.
func step(f Facts, phase cephv1alpha1.DiskRetirementPhase, action Action, format string, args ...any) Step {
	s := f.Status
	s.Phase = phase
	s.Message = fmt.Sprintf(format, args...)
	if f.Answer != nil && s.CephJob != "" && s.CephJob == f.Status.CephJob {
		s.CephJob = "" // its answer is read: the Job can go
		now := metav1.NewTime(f.Now)
		s.AskedCephAt = &now
	}
	return Step{Status: s, Action: action}
}

// then is f once s is taken: its status, and the answer read.
func (f Facts) then(s Step) Facts {
	f.Status = s.Status
	f.Answer, f.Verb, f.Ceph = nil, "", nil
	return f
}

// ask is a step that runs verb for the retirement's OSD in a new Ceph Job.
func ask(f Facts, phase cephv1alpha1.DiskRetirementPhase, verb cephjob.Verb, format string, args ...any) Step {
	s := step(f, phase, ActCephJob, format, args...)
	s.Request = request(s.Status, verb, s.Status.CephJobs, f.ReplacementOSD)
	s.Status.CephJobs++
	s.Status.CephJob = cephjob.Name(f.UID, s.Request)
	return s
}

// again makes the Ceph Job the status names once more.
func again(f Facts) Step {
	verb, seq, ok := cephjob.ParseName(f.Status.CephJob)
	if !ok {
		s := step(f, f.Status.Phase, ActNone, "%s", f.Status.Message)
		s.Status.CephJob = "" // not a Ceph Job name: ask afresh
		return s
	}
	s := step(f, f.Status.Phase, ActCephJob, "%s", f.Status.Message)
	s.Request = request(f.Status, verb, seq, f.ReplacementOSD)
	return s
}

// request is the Ceph Job of verb for the retirement's OSD and device; a
// probe tells the replacement's OSD's state besides, when there is one.
func request(s cephv1alpha1.DiskRetirementStatus, verb cephjob.Verb, seq int32, replacement *rook.OSD) cephjob.Request {
	r := cephjob.Request{Verb: verb, Seq: seq, OSDUUID: s.OSDUUID, Node: s.Node, Device: s.Device, Identity: s.DeviceIdentity, OSDID: -1}
	if s.OSDID != nil {
		r.OSDID = *s.OSDID
	}
	if verb == cephjob.VerbProbe && replacement != nil {
		r.AlsoOSDID = &replacement.ID
	}
	if verb == cephjob.VerbPurge {
		r.Host = s.Node
	}
	return r
}

// answered says the Ceph Job just read ran verb.
func answered(f Facts, verb cephjob.Verb) bool {
	return f.Answer != nil && f.Verb == verb
}

// probeDue says a new probe may be asked: the last answer is older than
// the poll interval.
func probeDue(f Facts) bool {
	return f.Status.AskedCephAt == nil || !f.Now.Before(f.Status.AskedCephAt.Add(f.Timing.Poll))
}

// stalled says a wait that began (or last progressed) at Progressed has
// gone on longer than the stall limit.
func stalled(f Facts) bool {
	return f.Status.Progressed != nil && f.Now.Sub(f.Status.Progressed.Time) > f.Timing.Stall
}

// progressed marks now as the last progress.
func progressed(s *Step, now time.Time) {
	t := metav1.NewTime(now)
	s.Status.Progressed = &t
}

// finished: a terminal retirement gives back a stopped OSD (one stopped by
// an earlier version of the plugin, whose terminal phases did that), then
// holds nothing: its finalizer goes, so deleting it is immediate.
func finished(f Facts) Step {
	s := Step{Status: f.Status}
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

func untouched(f Facts) Step {
	refuse := func(format string, args ...any) Step {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, format, args...)
	}
	switch {
	case f.Deleting:
		return step(f, cephv1alpha1.RetirementCancelled, ActRelease, "cancelled before anything was touched")
	case f.Disk == nil:
		return refuse("there is no Disk %s", f.DiskName)
	case f.Disk.Annotations[cephv1alpha1.RetiredAnnotation] != "":
		return refuse("Disk %s is already retired (%s)", f.Disk.Name, f.Disk.Annotations[cephv1alpha1.RetiredAnnotation])
	case f.Queue.SameDisk != "":
		return refuse("DiskRetirement %s already retires Disk %s", f.Queue.SameDisk, f.Disk.Name)
	case (f.Disk.Status.ClaimedBy == "" || !f.Listed) && f.Lookup.OSD == nil:
		// Out of its pool, its OSD (if any) still runs: Rook never removes
		// an OSD whose device leaves the CephCluster, so one found is
		// retired as any other.
		return refuse("Disk %s is not in the CephCluster (no DiskPool gives it to Ceph) and no OSD Deployment runs on it: there is nothing to retire", f.Disk.Name)
	}
	base := f
	base.Status.Pool, base.Status.Node, base.Status.Device = f.Disk.Status.ClaimedBy, f.Disk.Status.NodeName, f.Disk.Status.StorageDevice()
	if f.Queue.Ahead != "" && !f.Suspend {
		return step(base, cephv1alpha1.RetirementPending, ActNone, "waiting for %s to finish: Ceph retires one OSD at a time", f.Queue.Ahead)
	}
	if f.Upgrade != "" && !f.Suspend {
		return step(base, cephv1alpha1.RetirementPending, ActNone, "waiting for the upgrade before anything is touched: %s", f.Upgrade)
	}
	if s, waiting := replacementStep(base); waiting {
		return s
	}
	if f.Lookup.Refusal != "" {
		return step(base, cephv1alpha1.RetirementRefused, ActRelease, "%s", f.Lookup.Refusal)
	}
	if f.Lookup.OSD == nil {
		return noOSDByPath(base)
	}
	osd := *f.Lookup.OSD
	base.Status.OSDID, base.Status.OSDUUID = &osd.ID, osd.UUID
	if why := cephv1alpha1.PreflightChecks(f.Preflight).Failed(); why != "" {
		base.Status.Preflight = f.Preflight
		return step(base, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: %s", why)
	}
	if f.Suspend && f.ReplacementName != "" && !f.ReplacementJoined {
		base.Status.Preflight = f.Preflight
		return step(base, cephv1alpha1.RetirementSuspended, ActNone, "the consumers' checks pass with replacement Disk %s counted; Ceph's own checks run once it is an OSD, after spec.suspend is set to false", f.ReplacementName)
	}
	switch {
	case answered(f, cephjob.VerbProbe):
		return checkedByCeph(base)
	case answered(f, cephjob.VerbIdentify):
		return identified(base)
	}
	if f.Status.Phase == cephv1alpha1.RetirementWaitingForReplacement && base.Status.Progressed != nil {
		// Waiting for the replacement's OSD to boot: phase and message
		// stay between probes.
		if !probeDue(base) {
			return step(base, f.Status.Phase, ActNone, "%s", f.Status.Message)
		}
		return ask(base, f.Status.Phase, cephjob.VerbProbe, "%s", f.Status.Message)
	}
	if !probeDue(base) && base.Status.Progressed != nil {
		return step(base, cephv1alpha1.RetirementPending, ActNone, "%s", f.Status.Message) // settling: the next probe is not due
	}
	return ask(base, cephv1alpha1.RetirementPending, cephjob.VerbProbe, "asking Ceph whether it can lose osd.%d", osd.ID)
}

// noOSDByPath: no OSD Deployment records the disk's paths. That is not
// "it never became one": Rook records the kernel name a device had when it
// was prepared and never refreshes it, so after a reboot renamed the disks
// an OSD's disk may carry a name no Deployment has. The label decides: a
// disk without one leaves the CephCluster untouched; one whose label names
// an OSD is that OSD's, looked up by the label's UUID and retired as any
// other (or refused when no Deployment runs it).
func noOSDByPath(f Facts) Step {
	refuse := func(format string, args ...any) Step {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: "+format, args...)
	}
	if !answered(f, cephjob.VerbIdentify) {
		if f.Suspend {
			return step(f, cephv1alpha1.RetirementSuspended, ActNone, "no OSD Deployment records %s: once spec.suspend is false its label is read, and a disk without one leaves the CephCluster without touching Ceph", f.Status.Device)
		}
		return ask(f, cephv1alpha1.RetirementPending, cephjob.VerbIdentify, "no OSD Deployment records %s; reading its label on node %s (a disk renamed since Rook prepared it still carries its OSD's)", f.Status.Device, f.Status.Node)
	}
	if !f.Answer.Succeeded {
		return refuse("no OSD Deployment records %s, and its label on node %s could not be read (%s)", f.Status.Device, f.Status.Node, f.Answer.Message)
	}
	switch label := cephjob.ReadLabel(f.Answer.Message); label.State {
	case cephjob.LabelNone:
		s := step(f, cephv1alpha1.RetirementWiping, ActMarkRetired, "no OSD runs on %s and it carries no BlueStore label (it never became one): taking it out of the CephCluster without touching Ceph", f.Status.Device)
		s.Status.DeviceIdentity = label.Identity
		return s
	case cephjob.LabelFound:
		if f.Status.DeviceLabel != "" {
			return refuse("%s on node %s holds the OSD with UUID %s, and no OSD Deployment of the node runs it; retire it by hand", f.Status.Device, f.Status.Node, label.OSDUUID)
		}
		s := step(f, cephv1alpha1.RetirementPending, ActNone, "no OSD Deployment records %s, but its label names the OSD with UUID %s (Rook recorded the kernel name the disk had when it was prepared): checking that OSD", f.Status.Device, label.OSDUUID)
		s.Status.DeviceLabel, s.Status.AskedCephAt, s.Status.Progressed = label.OSDUUID, nil, nil
		return s
	case cephjob.LabelMissing:
		return refuse("%s is not a device on node %s, and no OSD Deployment records it: if the disk was taken out, take it out of DiskPool %s", f.Status.Device, f.Status.Node, f.Status.Pool)
	}
	return refuse("the label of %s on node %s: an answer that does not parse (%q)", f.Status.Device, f.Status.Node, f.Answer.Message)
}

// checkedByCeph reads the preflight probe: every Ceph check, and Ceph's
// OSD being the one Rook's Deployment runs; then the device's label.
func checkedByCeph(f Facts) Step {
	refuse := func(format string, args ...any) Step {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: "+format, args...)
	}
	if f.Ceph == nil {
		return refuse("Ceph did not answer (%s)", f.Answer.Message)
	}
	id := osdID(f)
	switch {
	case !f.Ceph.OSD.Exists:
		return refuse("Ceph has no osd.%d, which Rook's Deployment runs on %s", id, f.Status.Device)
	case f.Ceph.OSD.UUID != f.Status.OSDUUID:
		return refuse("Ceph's osd.%d has UUID %s, Rook's Deployment says %s: they are not the same OSD", id, f.Ceph.OSD.UUID, f.Status.OSDUUID)
	}
	if r := f.ReplacementOSD; r != nil && !f.Ceph.UpAndIn(int(r.ID)) {
		return replacementBooting(f, *r)
	}
	checks := append(append([]cephv1alpha1.PreflightCheck{}, f.Preflight...), CephChecks(*f.Ceph, int(id))...)
	f.Status.Preflight = checks
	if why := cephv1alpha1.PreflightChecks(checks).Failed(); why != "" {
		if settling := cephSettling(*f.Ceph, int(id)); settling != "" && onlyHealthFailed(checks) {
			return settle(f, settling, why)
		}
		return refuse("%s", why)
	}
	f.Status.Progressed = nil
	f.Status.OSDBefore = &cephv1alpha1.OSDState{Up: f.Ceph.OSD.Up, In: f.Ceph.OSD.In}
	return ask(f, cephv1alpha1.RetirementPending, cephjob.VerbIdentify, "Ceph can lose osd.%d (%s); reading the label of %s on node %s", id, upIn(f.Ceph.OSD.Up, f.Ceph.OSD.In), f.Status.Device, f.Status.Node)
}

// replacementBooting waits, probe after probe, until Ceph has the
// replacement's OSD up and in: Rook makes its Deployment as soon as the
// prepare created the OSD, and the OSD only joins CRUSH and takes data once
// it has booted (and been marked in), so until then the cluster's capacity
// is what it was. One that does not come up within the stall limit is
// refused, nothing touched.
func replacementBooting(f Facts, r rook.OSD) Step {
	if stalled(f) {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: replacement Disk %s's osd.%d did not come up and in within %s", f.ReplacementName, r.ID, f.Timing.Stall)
	}
	s := step(f, cephv1alpha1.RetirementWaitingForReplacement, ActNone, "waiting for Ceph to have replacement Disk %s's osd.%d up and in; the old disk stays until it is", f.ReplacementName, r.ID)
	if f.Status.Progressed == nil {
		progressed(&s, f.Now)
	}
	return s
}

// settle waits, probe after probe, for a Ceph that is only moving PGs for
// a moment (peering after any map change, a scrub's repair, recovery that
// is under way) rather than refusing at once; a Ceph that does not settle
// within the stall limit is refused with the checks that failed.
func settle(f Facts, settling, why string) Step {
	if stalled(f) {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: Ceph did not settle in %s: %s", f.Timing.Stall, why)
	}
	s := step(f, cephv1alpha1.RetirementPending, ActNone, "waiting for Ceph to settle (%s) before anything is touched", settling)
	if f.Status.Progressed == nil {
		progressed(&s, f.Now)
	}
	return s
}

// onlyHealthFailed: of the checks, Health alone failed.
func onlyHealthFailed(checks []cephv1alpha1.PreflightCheck) bool {
	for _, c := range checks {
		if !c.Passed && c.Name != cephv1alpha1.CheckHealth {
			return false
		}
	}
	return true
}

// identified reads the device's BlueStore label: it must name the OSD,
// or the device's name now points at another disk (kernel names change
// across reboots, and Rook never refreshes the OSD's recorded path). A
// disk that is gone or cannot be read while Ceph has its OSD down is a
// dead disk (diskGone). The OSD is marked out only when it was in: an OSD
// someone took out stays as it was.
func identified(f Facts) Step {
	id := osdID(f)
	refuse := func(format string, args ...any) Step {
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "refused, nothing was touched: "+format, args...)
	}
	down := f.Status.OSDBefore != nil && !f.Status.OSDBefore.Up
	if !f.Answer.Succeeded {
		// Only the script's own "cannot be read" is a dead disk: a Job that
		// never ran says nothing of the disk (its node may be down, and
		// back with the disk and its label).
		if down && readTheDisk(f.Answer) {
			return diskGone(f, fmt.Sprintf("its label cannot be read: %s", f.Answer.Message))
		}
		return refuse("the label of %s on node %s could not be read (%s)", f.Status.Device, f.Status.Node, f.Answer.Message)
	}
	label := cephjob.ReadLabel(f.Answer.Message)
	switch {
	case label.State == cephjob.LabelFound && label.OSDUUID == f.Status.OSDUUID:
	case label.State == cephjob.LabelMissing && down:
		return diskGone(f, fmt.Sprintf("%s is not a device on node %s any more", f.Status.Device, f.Status.Node))
	case label.State == cephjob.LabelFound && f.Status.DeviceLabel == "":
		// The device's kernel name moved: the label, which moves with the
		// disk, names its OSD. The next pass looks that one up and checks
		// it from the start, the probe due at once.
		s := step(f, cephv1alpha1.RetirementPending, ActNone, "%s on node %s holds the OSD with UUID %s, not osd.%d (Rook recorded the kernel name the disk had when it was prepared, and kernel names change): checking that OSD instead",
			f.Status.Device, f.Status.Node, label.OSDUUID, id)
		s.Status.DeviceLabel, s.Status.AskedCephAt, s.Status.Progressed = label.OSDUUID, nil, nil
		s.Status.OSDID, s.Status.OSDUUID, s.Status.OSDBefore = nil, "", nil // the lookup by label names it
		return s
	default:
		return refuse("%s on node %s holds %s, not osd.%d (UUID %s): the disk's name points at another device than the OSD's; retire it by hand",
			f.Status.Device, f.Status.Node, holds(label, f.Answer.Message), id, f.Status.OSDUUID)
	}
	f.Status.DeviceIdentity = label.Identity
	if f.Suspend {
		return step(f, cephv1alpha1.RetirementSuspended, ActNone, "every check passed for osd.%d and its device's label names it; nothing is touched until spec.suspend is set to false", id)
	}
	if !wasIn(f.Status) {
		s := ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbProbe, "osd.%d is already out (and stays so if this retirement is aborted): asking Ceph how many PGs it still holds", id)
		progressed(&s, f.Now)
		return s
	}
	s := ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbOut, "marking osd.%d out while it runs: Ceph copies its PGs elsewhere from a full set of copies", id)
	s.Status.MarkedOut = true
	progressed(&s, f.Now)
	return s
}

// holds says what an identify found on a device, for a refusal.
func holds(l cephjob.Label, answer string) string {
	switch l.State {
	case cephjob.LabelFound:
		return "the OSD with UUID " + l.OSDUUID
	case cephjob.LabelNone:
		return "no BlueStore label"
	case cephjob.LabelMissing:
		return "no device (it is not on the node)"
	}
	return fmt.Sprintf("an answer that does not parse (%q)", answer)
}

// wasIn: Ceph had the OSD in when the retirement checked it (a status
// from before OSDBefore was recorded counts as in, as it then did).
func wasIn(s cephv1alpha1.DiskRetirementStatus) bool {
	return s.OSDBefore == nil || s.OSDBefore.In
}

// diskGone retires an OSD whose disk is dead: gone from its node or
// unreadable while Ceph has the OSD down. Nothing can be drained from it
// or wiped on it; Ceph recovers its copies from the others once it is
// out, calls it safe to destroy when that is done, and it is purged by
// its ID. The device is then taken out of the CephCluster unwiped.
func diskGone(f Facts, why string) Step {
	id := osdID(f)
	f.Status.DiskGone = true
	if f.Suspend {
		return step(f, cephv1alpha1.RetirementSuspended, ActNone, "osd.%d is down and %s: it would be purged by its ID once Ceph has recovered its copies, without wiping the device; nothing is touched until spec.suspend is set to false", id, why)
	}
	if !wasIn(f.Status) {
		s := ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbProbe, "osd.%d is down and out and %s: waiting until Ceph has recovered its copies and calls it safe to destroy; it is then purged by its ID, the device not wiped", id, why)
		progressed(&s, f.Now)
		return s
	}
	s := ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbOut, "osd.%d is down and %s: marking it out so that Ceph recovers its copies from the others; it is purged by its ID once Ceph calls it safe to destroy, the device not wiped", id, why)
	s.Status.MarkedOut = true
	progressed(&s, f.Now)
	return s
}

// replacementStep adds the replacement to the pool and waits until it is
// an OSD; waiting is false once it is (or when there is none). A suspended
// retirement only checks it: the preflight counts it as joined.
func replacementStep(f Facts) (Step, bool) {
	if f.ReplacementName == "" {
		return Step{}, false
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
	case f.Status.Pool == "":
		return step(f, cephv1alpha1.RetirementRefused, ActRelease, "Disk %s is in no DiskPool, so replacement Disk %s has no pool to join: add the replacement to a DiskPool yourself and retire Disk %s without one", f.DiskName, r.Name, f.DiskName), true
	case f.Suspend:
		return Step{}, false
	case !f.ReplacementInPool:
		s := step(f, cephv1alpha1.RetirementWaitingForReplacement, ActAddReplacement, "adding Disk %s to DiskPool %s", r.Name, f.Status.Pool)
		progressed(&s, f.Now)
		return s, true
	case !f.ReplacementJoined && stalled(f):
		return step(f, cephv1alpha1.RetirementFailed, ActRelease, "Rook did not make replacement Disk %s an OSD within %s (look at the rook-ceph-osd-prepare Job of node %s): nothing else was touched; Disk %s stays in DiskPool %s (take it out if it should not be there) and Disk %s keeps its OSD",
			r.Name, f.Timing.Stall, r.Status.NodeName, r.Name, f.Status.Pool, f.DiskName), true
	case !f.ReplacementJoined:
		s := step(f, cephv1alpha1.RetirementWaitingForReplacement, ActNone, "waiting for Rook to make replacement Disk %s an OSD (its prepare Job on node %s) for at most %s; the old disk stays until it is", r.Name, r.Status.NodeName, f.Timing.Stall)
		if f.Status.Progressed == nil {
			progressed(&s, f.Now)
		}
		return s, true
	}
	return Step{}, false
}

// abort starts giving back what the retirement changed, for why.
func abort(f Facts, why string) Step {
	s := step(f, cephv1alpha1.RetirementAborting, ActNone, "aborting: %s; giving osd.%d back", why, osdID(f))
	s.Status.AbortReason = why
	s.Status.PGsLeft, s.Status.ObjectsToMove = nil, nil
	progressed(&s, f.Now) // the OSD has the stall limit to come up again
	return aborting(f.then(s))
}

// draining waits, probe after probe, until Ceph says the OSD (out, still
// running) is safe to destroy: no PG maps to it any more.
func draining(f Facts) Step {
	id := osdID(f)
	switch {
	case f.Deleting:
		return abort(f, "cancelled")
	case answered(f, cephjob.VerbOut) && !f.Answer.Succeeded:
		return abort(f, fmt.Sprintf("Ceph did not mark osd.%d out (%s)", id, f.Answer.Message))
	case answered(f, cephjob.VerbOut):
		return ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbProbe, "osd.%d is out; asking Ceph how many PGs it still holds", id)
	case answered(f, cephjob.VerbProbe):
		if f.Ceph == nil {
			return waitOrAbort(f, fmt.Sprintf("Ceph did not answer (%s)", f.Answer.Message))
		}
		if f.Status.MarkedOut && f.Ceph.OSD.In {
			return abort(f, fmt.Sprintf("Ceph still has osd.%d in after it was marked out", id))
		}
		if trouble := drainTrouble(*f.Ceph, int(id)); trouble != "" {
			return abort(f, trouble)
		}
		if down := othersDownButIn(*f.Ceph); down != "" {
			// Nothing is stopped meanwhile; Ceph marking it out aborts.
			return waitOrAbort(f, "waiting for "+down+", down but still in")
		}
		left := int32(f.Ceph.OSD.PGs)
		if f.Ceph.SafeToDestroy() {
			s := step(f, cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "Ceph says osd.%d is safe to destroy (no PG maps to it); stopping it", id)
			s.Status.PGsLeft, s.Status.OSDStopped = new(int32(0)), true
			progressed(&s, f.Now)
			return s
		}
		toMove := f.Ceph.Recovery.ToMove()
		s := step(f, cephv1alpha1.RetirementDraining, ActNone, "osd.%d is out and drains: %d PGs left on it, %d object copies to recover or move (Ceph: %s)", id, left, toMove, f.Ceph.OSD.SafeToDestroy.Message)
		pgsLow, objectsLow, fell := lowWater(f.Status, left, toMove)
		if fell {
			progressed(&s, f.Now)
		} else if stalled(f) {
			return abort(f, fmt.Sprintf("neither a PG left osd.%d nor an object copy was recovered or moved for %s (%d PGs left, %d object copies; Ceph: %s)", id, f.Timing.Stall, left, toMove, f.Ceph.OSD.SafeToDestroy.Message))
		}
		s.Status.PGsLeft, s.Status.ObjectsToMove = &pgsLow, &objectsLow
		return s
	case probeDue(f):
		return ask(f, cephv1alpha1.RetirementDraining, cephjob.VerbProbe, "%s", f.Status.Message)
	}
	return step(f, cephv1alpha1.RetirementDraining, ActNone, "%s", f.Status.Message)
}

// lowWater keeps the drain's low-water marks, the fewest PGs left on the
// OSD and object copies to move seen since it began, and says whether
// either fell: progress is a new low, so counts that only go up and down
// (cluster-wide recovery from other causes) never hold the stall off.
// Whole PGs alone are too coarse: on a big HDD one PG is hundreds of GB,
// and with mClock's one backfill at a time it takes longer than any stall
// limit to move; a dead OSD's PGs left it at once, and only the recovery
// shows.
//
// An objects mark of 0 is none yet: right after the out, before the PGs
// have peered, Ceph reports nothing misplaced, and the first count it
// reports seeds the mark.
func lowWater(s cephv1alpha1.DiskRetirementStatus, pgs int32, objects int64) (int32, int64, bool) {
	if s.PGsLeft == nil || s.ObjectsToMove == nil {
		return pgs, objects, true
	}
	lowObjects := min(*s.ObjectsToMove, objects)
	if *s.ObjectsToMove == 0 {
		lowObjects = objects
	}
	lowPGs := min(*s.PGsLeft, pgs)
	return lowPGs, lowObjects, lowPGs < *s.PGsLeft || lowObjects < *s.ObjectsToMove
}

// drainTrouble says why a drain cannot go on: another OSD is out (Ceph
// counts it gone: an operator took it out, or the monitors did once it
// stayed down for mon_osd_down_out_interval), so the data needs room the
// preflight did not plan for; or OSDs or pools are (nearly) full. PGs that
// peer for a moment (transientChecks) and OSDs down but still in (Rook
// restarts each OSD whose Deployment changed after a CephCluster edit, one
// at a time) are not trouble: a drain they hold makes no progress, and the
// stall limit ends it.
func drainTrouble(c cephjob.Facts, osd int) string {
	if why := lastingCheck(c); why != "" {
		return why
	}
	// The probe lists the out ones first, so a list cut short keeps them.
	for _, o := range c.Missing {
		if !o.In {
			return fmt.Sprintf("osd.%d on host %s is %s: Ceph lacks copies there while osd.%d drains", o.ID, o.Host, upIn(o.Up, o.In), osd)
		}
	}
	return ""
}

// othersDownButIn names the OSDs besides osd that are down but still in,
// "" when there are none.
func othersDownButIn(c cephjob.Facts) string {
	if len(c.Missing) == 0 || slices.ContainsFunc(c.Missing, func(o cephjob.MissingOSD) bool { return !o.In }) {
		return "" // none, or one is out: drainTrouble's
	}
	return message.Clauses(othersMissing(c, func(o cephjob.MissingOSD) string { return fmt.Sprintf("osd.%d on host %s", o.ID, o.Host) }))
}

// waitOrAbort waits for the next probe unless the wait has stalled.
func waitOrAbort(f Facts, why string) Step {
	if stalled(f) {
		return abort(f, fmt.Sprintf("%s for %s", why, f.Timing.Stall))
	}
	return step(f, f.Status.Phase, ActNone, "%s; asking again", why)
}

// stopping stops the drained OSD and waits until its pod is gone and Ceph
// sees it down and still safe to destroy; then it is purged.
func stopping(f Facts) Step {
	id := osdID(f)
	switch {
	case f.Deleting:
		return abort(f, "cancelled")
	case f.Deployment != nil && f.Deployment.Replicas != 0:
		return step(f, cephv1alpha1.RetirementStoppingOSD, ActScaleDown, "stopping osd.%d", id)
	case f.Deployment != nil && f.Deployment.Running > 0:
		// A pod on a node that went NotReady stays Terminating for ever.
		return waitOrAbort(f, fmt.Sprintf("waiting for osd.%d's pod to stop (%d still there, terminating ones counted)", id, f.Deployment.Running))
	case answered(f, cephjob.VerbProbe):
		switch {
		case f.Ceph == nil:
			return waitOrAbort(f, fmt.Sprintf("Ceph did not answer (%s)", f.Answer.Message))
		case !ours(f):
			s := step(f, cephv1alpha1.RetirementRemoving, ActNone, "Ceph no longer has osd.%d with UUID %s", id, f.Status.OSDUUID)
			s.Status.Purged = true
			return s
		case f.Ceph.OSD.Up:
			return waitOrAbort(f, fmt.Sprintf("osd.%d's pod is gone, but Ceph still sees it up", id))
		case !f.Ceph.SafeToDestroy():
			return waitOrAbort(f, fmt.Sprintf("osd.%d is down, and Ceph does not call it safe to destroy (%s)", id, f.Ceph.OSD.SafeToDestroy.Message))
		case stalled(f):
			// Down and safe, and still here: purges that Ceph refused.
			return abort(f, fmt.Sprintf("Ceph did not purge osd.%d within %s", id, f.Timing.Stall))
		}
		s := ask(f, cephv1alpha1.RetirementRemoving, cephjob.VerbPurge, "osd.%d is down and safe to destroy; purging it (Ceph checks once more)", id)
		if host := f.Ceph.OSD.Host; host != "" {
			s.Request.Host = host // CRUSH's name for the node
		}
		return s
	case probeDue(f):
		return ask(f, cephv1alpha1.RetirementStoppingOSD, cephjob.VerbProbe, "osd.%d's pod is gone; asking Ceph whether it sees it down", id)
	}
	return step(f, cephv1alpha1.RetirementStoppingOSD, ActNone, "%s", f.Status.Message)
}

// removing purges the OSD from Ceph. A purge Job that succeeded read the
// OSD map after the purge; one that failed is followed by a probe, which
// says whether the OSD is gone: a purge can succeed while its Job fails (a
// timeout after Ceph acted), and an OSD that may be purged is never
// started again. Only a probe that finds it still in the map sends
// the retirement back to StoppingOSD, to check and purge again (and there
// only may it be aborted).
func removing(f Facts) Step {
	id := osdID(f)
	switch {
	case answered(f, cephjob.VerbPurge) && f.Answer.Succeeded:
		// The purge Job succeeds only when the OSD map it read after the
		// purge lacks the OSD's UUID (job.go): a verified answer.
		s := step(f, cephv1alpha1.RetirementRemoving, ActNone, "osd.%d is purged from Ceph (%s)", id, f.Answer.Message)
		s.Status.Purged = true
		return removing(f.then(s))
	case answered(f, cephjob.VerbPurge):
		return ask(f, cephv1alpha1.RetirementRemoving, cephjob.VerbProbe, "Ceph did not confirm osd.%d's purge (%s); asking it whether osd.%d is gone from its OSD map", id, f.Answer.Message, id)
	case answered(f, cephjob.VerbProbe) && !f.Status.Purged:
		switch {
		case f.Ceph == nil:
			// Purged or not, nothing is given back now: the purge is asked
			// again (Ceph checks once more; a purged OSD stays purged),
			// until a probe says it is gone.
			return step(f, cephv1alpha1.RetirementRemoving, ActNone, "Ceph did not say whether osd.%d is gone after its purge (%s); purging it again", id, f.Answer.Message)
		case ours(f):
			return step(f, cephv1alpha1.RetirementStoppingOSD, ActNone, "osd.%d is still in Ceph's OSD map after its purge (%s); checking it once more before purging it again", id, f.Status.Message)
		}
		s := step(f, cephv1alpha1.RetirementRemoving, ActNone, "osd.%d is purged from Ceph", id)
		s.Status.Purged = true
		return removing(f.then(s))
	case !f.Status.Purged:
		return ask(f, cephv1alpha1.RetirementRemoving, cephjob.VerbPurge, "purging osd.%d (Ceph checks once more that it is safe to destroy)", id)
	}
	// Out of the CephCluster before it is wiped: a prepare of a listed
	// device could make a new OSD on the freshly wiped disk. Its held
	// Deployment stays until the wipe (see wiping).
	return step(f, cephv1alpha1.RetirementWiping, ActMarkRetired, "osd.%d is purged; taking %s out of the CephCluster before it is wiped", id, f.Status.Device)
}

// ours says the probed OSD is still the retirement's: in Ceph's map with
// the recorded UUID (Ceph gives a purged OSD's ID to the next one made).
func ours(f Facts) bool {
	return f.Ceph.OSD.Exists && f.Ceph.OSD.UUID == f.Status.OSDUUID
}

// wiping takes the device out of the CephCluster, waits until it has
// left the list, wipes it, then deletes the OSD's Deployment, as Rook's own
// removal does. Wiped while the stopped Deployment (do-not-reconcile) is
// still there: Rook's prepare lists every labelled device of a node,
// listed or not, and for a labelled device without a Deployment it makes
// one and starts the purged OSD again (seen on real Ceph: osd.2 was back,
// up, a minute after its Deployment was deleted). A dead disk is looked
// at once more first: wiped if it is back, else left unwiped. A zap that
// cannot run (the node is gone or NotReady) or cannot prove the device is
// the OSD's is asked again each stall limit until the operator
// acknowledges the device wiped by hand or gone (spec.acknowledge).
func wiping(f Facts) Step {
	// A Disk that is gone (its device left the node for good) has nothing
	// left to mark; its device left the CephCluster's list with it.
	retired := f.Disk == nil || f.Disk.Annotations[cephv1alpha1.RetiredAnnotation] != ""
	toWipe := f.Status.OSDID != nil && !f.Status.Wiped && f.Status.LeftUnwiped == ""
	switch {
	case answered(f, cephjob.VerbZap) && !f.Answer.Succeeded:
		s := step(f, cephv1alpha1.RetirementWiping, ActNone, "%s was not wiped (%s); the plugin asks again in %s. To finish without the plugin's wipe, wipe the disk by hand (manualSteps) and set spec.acknowledge to %s, or to %s if the disk is no longer in node %s",
			f.Status.Device, f.Answer.Message, f.Timing.Stall, cephv1alpha1.WipedByHand, cephv1alpha1.DiskGone, f.Status.Node)
		s.Status.ManualSteps = manualWipe(f)
		progressed(&s, f.Now)
		return s
	case answered(f, cephjob.VerbZap):
		s := step(f, cephv1alpha1.RetirementWiping, ActNone, "%s", f.Answer.Message)
		s.Status.ManualSteps, s.Status.Wiped = "", true
		return wiping(f.then(s))
	case answered(f, cephjob.VerbIdentify):
		return deadDiskLookedAt(f)
	case !retired:
		return step(f, cephv1alpha1.RetirementWiping, ActMarkRetired, "taking %s out of the CephCluster", f.Status.Device)
	case f.Listed:
		return step(f, cephv1alpha1.RetirementWiping, ActNone, "waiting for %s to leave the CephCluster's device list", f.Status.Device)
	case toWipe && f.PrepareRunning != "":
		// A prepare Rook started while the device was listed keeps that
		// list and could make a new OSD on the freshly wiped disk.
		return step(f, cephv1alpha1.RetirementWiping, ActNone, "waiting for Rook's OSD prepare on node %s (%s) to end before %s is wiped", f.Status.Node, f.PrepareRunning, f.Status.Device)
	case toWipe && f.Acknowledge != "":
		return unwiped(f, fmt.Sprintf("spec.acknowledge says %s", f.Acknowledge))
	case toWipe && f.Status.ManualSteps != "" && !stalled(f):
		return step(f, cephv1alpha1.RetirementWiping, ActNone, "%s", f.Status.Message)
	case toWipe && f.Status.DiskGone:
		return ask(f, cephv1alpha1.RetirementWiping, cephjob.VerbIdentify, "osd.%d is purged and %s is out of the CephCluster; looking whether its dead disk is back on node %s before leaving it unwiped", osdID(f), f.Status.Device, f.Status.Node)
	case toWipe:
		return ask(f, cephv1alpha1.RetirementWiping, cephjob.VerbZap, "osd.%d is purged and %s is out of the CephCluster; wiping it on node %s once its label is checked to name the OSD", osdID(f), f.Status.Device, f.Status.Node)
	case f.Deployment != nil && f.Deployment.UUID == f.Status.OSDUUID:
		return step(f, cephv1alpha1.RetirementWiping, ActDeleteDeployment, "%s is out of the CephCluster; deleting osd.%d's Deployment %s", f.Status.Device, osdID(f), f.Deployment.Deployment)
	}
	// A Deployment of the same name with another UUID is a new OSD that
	// took the purged one's ID (Ceph reuses the lowest free ID): not ours.
	done := step(f, cephv1alpha1.RetirementRetired, ActRelease, "retired: %s", retiredWhat(f))
	done.Status.ManualSteps = strings.TrimSpace(f.Status.ManualSteps + " " + fmt.Sprintf("To give the disk to Ceph again, remove the %s annotation from Disk %s (it stays in its DiskPool's spec.disks until taken out).", cephv1alpha1.RetiredAnnotation, f.DiskName))
	done.Status.OSDStopped = false // removed: nothing to give back
	return done
}

// deadDiskLookedAt reads a dead disk's second identify, once its OSD is
// purged: back with the purged OSD's label, it is wiped; gone, or not
// readable, it is left unwiped with the manual steps.
func deadDiskLookedAt(f Facts) Step {
	label := cephjob.ReadLabel(f.Answer.Message)
	switch {
	case f.Answer.Succeeded && label.State == cephjob.LabelFound && label.OSDUUID == f.Status.OSDUUID:
		s := ask(f, cephv1alpha1.RetirementWiping, cephjob.VerbZap, "the dead disk is back on node %s with osd.%d's label: wiping it", f.Status.Node, osdID(f))
		s.Status.DeviceIdentity = label.Identity
		return s
	case f.Answer.Succeeded && label.State == cephjob.LabelMissing:
		return unwiped(f, "its disk is gone")
	case f.Answer.Succeeded:
		return unwiped(f, fmt.Sprintf("%s now holds %s", f.Status.Device, holds(label, f.Answer.Message)))
	case readTheDisk(f.Answer):
		return unwiped(f, fmt.Sprintf("its disk cannot be read (%s)", f.Answer.Message))
	}
	// The Job never ran (its node down) or refused its own tools: nothing
	// is known of the disk, which may come back with its label; asked
	// again each stall limit.
	s := step(f, cephv1alpha1.RetirementWiping, ActNone, "node %s did not run the look at the dead disk (%s); the plugin asks again in %s. If the disk is gone for good, set spec.acknowledge to %s",
		f.Status.Node, f.Answer.Message, f.Timing.Stall, cephv1alpha1.DiskGone)
	s.Status.ManualSteps = manualWipe(f)
	progressed(&s, f.Now)
	return s
}

// readTheDisk says a failed node verb's answer is about the disk: its
// script ran and tried to read it. A Job that never ran (its node down),
// or that failed before it read the disk (its tools older than the
// cluster's Ceph, L3, or Ceph not there to ask), says nothing of it.
func readTheDisk(a *cephjob.Answer) bool {
	return a.Ran && !cephjob.DiskNotRead(a.Message)
}

// unwiped ends the wipe without one, for why; the manual steps say what
// the operator must do before the disk is used again.
func unwiped(f Facts, why string) Step {
	s := step(f, cephv1alpha1.RetirementWiping, ActNone, "osd.%d is purged; %s: %s stays unwiped", osdID(f), why, f.Status.Device)
	s.Status.LeftUnwiped = why
	s.Status.ManualSteps = fmt.Sprintf("%s of node %s was not wiped by the plugin (%s). If the disk is (or comes back) in a node, wipe it before it is used again: it may still carry osd.%d's label, and Rook's next prepare would start the purged OSD again. %s",
		f.Status.Device, f.Status.Node, why, osdID(f), WipeInstructions(f.Status.Node, f.Status.Device, f.Status.OSDUUID))
	return wiping(f.then(s))
}

// manualWipe is what the operator must do by hand after a zap that did
// not run or did not prove the device is the OSD's. When the device's
// name points at a disk with another OSD's label, no wipe command names
// it: the purged OSD's disk must be found by its label first.
func manualWipe(f Facts) string {
	if cephjob.ZapFoundAnotherOSD(f.Answer.Message) {
		return fmt.Sprintf("%s of node %s now holds another OSD: do not wipe it. Find the disk whose BlueStore label names osd_uuid %s (`ceph-volume raw list` on node %s lists every device's), wipe that one as Rook's teardown guide shows, then set spec.acknowledge to %s.",
			f.Status.Device, f.Status.Node, f.Status.OSDUUID, f.Status.Node, cephv1alpha1.WipedByHand)
	}
	return WipeInstructions(f.Status.Node, f.Status.Device, f.Status.OSDUUID) + fmt.Sprintf(" Then set spec.acknowledge to %s.", cephv1alpha1.WipedByHand)
}

// aborting gives back what the retirement changed, and only that: the
// OSD started again if it was stopped, then marked in if the retirement
// marked it out, once Ceph sees it up (an OSD marked in while down takes
// PGs it cannot serve, and Ceph marks it out again only after
// mon_osd_down_out_interval). Each "in" is checked with a probe before the
// status says so. It ends Cancelled or Failed with the reason.
func aborting(f Facts) Step {
	id := osdID(f)
	switch {
	case f.Status.OSDStopped && f.Deployment != nil && f.Deployment.Replicas == 0:
		return step(f, cephv1alpha1.RetirementAborting, ActScaleUp, "aborting (%s): starting osd.%d again", f.Status.AbortReason, id)
	case f.Status.OSDStopped:
		s := step(f, cephv1alpha1.RetirementAborting, ActNone, "aborting (%s): osd.%d is started again", f.Status.AbortReason, id)
		s.Status.OSDStopped = false
		return aborting(f.then(s))
	case f.Status.MarkedOut && answered(f, cephjob.VerbIn):
		// Succeeded or not, the probe says whether it is in.
		return ask(f, cephv1alpha1.RetirementAborting, cephjob.VerbProbe, "aborting (%s): Ceph answered `osd in` (%s); asking it whether osd.%d is in", f.Status.AbortReason, f.Answer.Message, id)
	case f.Status.MarkedOut && answered(f, cephjob.VerbProbe):
		return markInOnceUp(f)
	case f.Status.MarkedOut && probeDue(f):
		return ask(f, cephv1alpha1.RetirementAborting, cephjob.VerbProbe, "aborting (%s): asking Ceph whether osd.%d is up, to mark it in again", f.Status.AbortReason, id)
	case f.Status.MarkedOut:
		return step(f, cephv1alpha1.RetirementAborting, ActNone, "%s", f.Status.Message)
	}
	phase := cephv1alpha1.RetirementFailed
	if f.Deleting || f.Status.AbortReason == "cancelled" {
		phase = cephv1alpha1.RetirementCancelled
	}
	s := step(f, phase, ActRelease, "aborted: %s; %s, and its device stays in the CephCluster", f.Status.AbortReason, givenBack(f.Status))
	s.Status.PGsLeft, s.Status.ObjectsToMove = nil, nil
	return s
}

// markInOnceUp reads an abort's probe: the OSD is in (done), or up (mark
// it in), or still down: wait up to the stall limit, then leave it out
// and say so. A dead disk's OSD is never marked in.
func markInOnceUp(f Facts) Step {
	id := osdID(f)
	gaveUp := func(why string) Step {
		s := step(f, cephv1alpha1.RetirementAborting, ActNone, "aborting (%s): %s", f.Status.AbortReason, why)
		s.Status.MarkedOut, s.Status.LeftOut = false, why
		return aborting(f.then(s))
	}
	switch o := f.Ceph; {
	case o == nil:
		return waitOrGiveUp(f, fmt.Sprintf("aborting (%s): Ceph did not answer (%s); asking again", f.Status.AbortReason, f.Answer.Message))
	case !ours(f):
		return gaveUp(fmt.Sprintf("Ceph no longer has osd.%d with UUID %s", id, f.Status.OSDUUID))
	case o.OSD.In:
		s := step(f, cephv1alpha1.RetirementAborting, ActNone, "aborting (%s): osd.%d is in again", f.Status.AbortReason, id)
		s.Status.MarkedOut = false
		return aborting(f.then(s))
	case f.Status.DiskGone && !o.OSD.Up:
		return gaveUp("its disk cannot be read")
	case !o.OSD.Up && stalled(f):
		return gaveUp(fmt.Sprintf("Ceph did not see it up within %s", f.Timing.Stall))
	case !o.OSD.Up:
		return step(f, cephv1alpha1.RetirementAborting, ActNone, "aborting (%s): waiting for Ceph to see osd.%d up before it is marked in", f.Status.AbortReason, id)
	}
	return ask(f, cephv1alpha1.RetirementAborting, cephjob.VerbIn, "aborting (%s): osd.%d is up; marking it in again", f.Status.AbortReason, id)
}

// waitOrGiveUp is an abort's wait on a Ceph that does not answer: asked
// again each poll; past the stall limit the OSD is left as it is, out.
func waitOrGiveUp(f Facts, msg string) Step {
	if !stalled(f) {
		return step(f, cephv1alpha1.RetirementAborting, ActNone, "%s", msg)
	}
	s := step(f, cephv1alpha1.RetirementAborting, ActNone, "%s", msg)
	s.Status.MarkedOut, s.Status.LeftOut = false, fmt.Sprintf("Ceph did not answer for %s, so it may still be out (see `ceph osd tree`)", f.Timing.Stall)
	return aborting(f.then(s))
}

// givenBack says in what state an abort left the OSD.
func givenBack(s cephv1alpha1.DiskRetirementStatus) string {
	id := int32(-1)
	if s.OSDID != nil {
		id = *s.OSDID
	}
	switch {
	case !wasIn(s):
		return fmt.Sprintf("osd.%d is as it was before (out)", id)
	case s.LeftOut != "":
		return fmt.Sprintf("osd.%d was left out: %s; mark it in with `ceph osd in osd.%d` once it runs", id, s.LeftOut, id)
	}
	return fmt.Sprintf("osd.%d is up and in again", id)
}

func retiredWhat(f Facts) string {
	if f.Status.OSDID == nil {
		return fmt.Sprintf("%s of node %s is out of the CephCluster (it carried no OSD)", f.Status.Device, f.Status.Node)
	}
	if f.Status.LeftUnwiped != "" {
		return fmt.Sprintf("osd.%d is purged from Ceph, %s of node %s is out of the CephCluster, not wiped (%s; see manualSteps)", *f.Status.OSDID, f.Status.Device, f.Status.Node, f.Status.LeftUnwiped)
	}
	return fmt.Sprintf("osd.%d is purged from Ceph, %s of node %s is wiped and out of the CephCluster", *f.Status.OSDID, f.Status.Device, f.Status.Node)
}

func osdID(f Facts) int32 {
	if f.Status.OSDID == nil {
		return -1
	}
	return *f.Status.OSDID
}
