package upgrade

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/message"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// Where an upgrade stands: the pure decisions. The plan (PlanFrom) says
// which step is due and whether its preflight passed; the progress says how
// far Rook has rolled the daemons onto a step already taken. Together they
// make the State the plugin reports, records on the CephCluster for
// the console, and announces in Events.

// Stage is where an upgrade stands.
type Stage string

const (
	// StageIdle: nothing to do, every daemon runs the plugin's Rook and
	// Ceph.
	StageIdle Stage = ""
	// StageRefused: a step is due and its preflight refused it; nothing
	// changed.
	StageRefused Stage = "Refused"
	// StageWaiting: a step is due and waits only for the cluster to
	// settle (the Settled check), which it does without anyone's help.
	StageWaiting Stage = "Waiting"
	// StageRolling: a step was taken and Rook rolls the daemons onto it.
	StageRolling Stage = "Rolling"
	// StageDone: the last step's roll finished. Only recorded, never
	// decided: the record keeps the last upgrade for the console.
	StageDone Stage = "Done"
)

// DaemonRoll is one of the cluster's daemon Deployments as far as a roll
// goes.
type DaemonRoll struct {
	Name string
	// RookVersion is the rook-version label: the Rook that last wrote it.
	RookVersion string
	// Images are its pod template's images, init containers included.
	Images []string
	// RolledOut: the Deployment controller saw the last spec, and every
	// desired replica is updated and available.
	RolledOut bool
}

// DaemonRollOf reads a DaemonRoll from a Deployment.
func DaemonRollOf(d *appsv1.Deployment) DaemonRoll {
	var images []string
	for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
		images = append(images, c.Image)
	}
	return DaemonRoll{
		Name:        d.Name,
		RookVersion: d.Labels[rook.VersionLabel],
		Images:      images,
		RolledOut:   rolledOut(d),
	}
}

// rolledOut says whether the Deployment controller saw d's last spec, and
// every desired replica is updated and available.
func rolledOut(d *appsv1.Deployment) bool {
	replicas := desiredReplicas(d)
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas >= replicas && d.Status.AvailableReplicas >= replicas
}

// desiredReplicas is d's replicas, 1 when unset (the API server's default).
func desiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// Progress is how many of the daemons run a step's target, which
// ones do not yet, and what those run instead.
type Progress struct {
	// Done of Total daemons are on the target and rolled out; Behind are
	// not yet on it even in their spec.
	Done, Total, Behind int
	// Pending are the daemons not done, sorted.
	Pending []string
	// From are the versions or images the daemons behind run, sorted.
	From []string
}

// rollingFor says whether a step's roll is under way: some daemon's spec is
// not yet on the target, or the roll was under way at the last look and
// some daemon has not yet rolled out. The second keeps a roll's last
// restarts in it; without the first, a new cluster's daemons starting for
// the first time would look like an upgrade.
func (p Progress) rollingFor(step Step, to string, recorded *State) bool {
	wasRolling := recorded != nil && recorded.Stage == StageRolling && recorded.Step == step && recorded.To == to
	return p.Behind > 0 || (wasRolling && p.Done < p.Total)
}

// RookRoll is how far the daemons are on the target Rook: a daemon is done
// when the new operator relabelled it (rook-version) and it rolled out.
// Rook v1.18's operator writes every daemon Deployment of the cluster at
// its first reconcile, with its own version label, changed pod spec or not.
func RookRoll(target string, daemons []DaemonRoll) Progress {
	return rollProgress(daemons, func(d DaemonRoll) (bool, []string) {
		return d.RookVersion == target, []string{d.RookVersion}
	})
}

// CephRoll is how far the daemons are on the target Ceph image: a daemon is
// done when every container that does not run Rook's own image (Rook runs
// some sidecars from its operator image) runs the target, and it rolled
// out. Images, not the ceph-version labels, decide: a new tag of the same
// Ceph rolls every daemon and leaves their labels as they were.
func CephRoll(targetImage, rookImage string, daemons []DaemonRoll) Progress {
	return rollProgress(daemons, func(d DaemonRoll) (bool, []string) {
		var others []string
		for _, image := range d.Images {
			if image != targetImage && image != rookImage {
				others = append(others, image)
			}
		}
		return len(others) == 0, others
	})
}

// rollProgress counts the daemons onTarget says are on it and rolled out.
func rollProgress(daemons []DaemonRoll, onTarget func(DaemonRoll) (bool, []string)) Progress {
	p := Progress{Total: len(daemons)}
	from := map[string]bool{}
	for _, d := range daemons {
		ok, runs := onTarget(d)
		if ok && d.RolledOut {
			p.Done++
			continue
		}
		p.Pending = append(p.Pending, d.Name)
		if ok {
			continue
		}
		p.Behind++
		for _, r := range runs {
			if r != "" {
				from[r] = true
			}
		}
	}
	slices.Sort(p.Pending)
	p.From = slices.Sorted(maps.Keys(from))
	return p
}

// State is where the upgrade stands: what the plugin reports, what
// it records on the CephCluster for the console (upgradeAnnotation), and
// what its Events announce.
type State struct {
	Stage Stage `json:"stage"`
	Step  Step  `json:"step"`
	// From and To: versions for a Rook step, images for a Ceph step.
	From string `json:"from,omitempty"`
	To   string `json:"to"`
	// Done of Total daemons run To; Pending are (the first of) the others.
	Done    int      `json:"done"`
	Total   int      `json:"total"`
	Pending []string `json:"pending,omitempty"`
	// Checks are the preflight's failed checks, for Refused and Waiting.
	Checks []cephv1alpha1.PreflightCheck `json:"checks,omitempty"`
	// Since is when a Waiting or Rolling state began, or its roll last
	// moved a daemon on; Stalled says it has not moved for StallLimit.
	Since   *metav1.Time `json:"since,omitempty"`
	Stalled bool         `json:"stalled,omitempty"`
}

// StallLimit is how long a roll may move no daemon onto its target, or a
// due step wait for the cluster to settle, before the upgrade is reported
// Degraded with the daemons it waits for named: a daemon that never
// becomes available (a dead OSD's disk, a pinned pod) would otherwise keep
// it Running for ever. Rook restarts OSDs in batches once Ceph says they
// are ok to stop, which on a busy cluster takes minutes each, never an
// hour without one finishing.
const StallLimit = time.Hour

// WithStall dates a Waiting or Rolling state: since the recorded one of
// the same stage, step and target (when its roll has not moved a daemon
// on since), else since now; stalled past limit.
func WithStall(s State, recorded *State, now time.Time, limit time.Duration) State {
	if s.Stage != StageWaiting && s.Stage != StageRolling {
		return s
	}
	since := now
	if r := recorded; r != nil && r.Since != nil && r.Stage == s.Stage && r.Step == s.Step && r.To == s.To && s.Done <= r.Done {
		since = r.Since.Time
	}
	s.Since = &metav1.Time{Time: since.UTC().Truncate(time.Second)}
	s.Stalled = now.Sub(since) > limit
	return s
}

// UnderWay says what an upgrade does that a disk retirement must not start
// beside, from the CephCluster's annotations: a step about to be taken
// (its PG-states Job asked: every other check passed), or a roll. A roll
// that stalled is not (a retirement may be what it waits for: a dead
// disk's OSD never comes back); "" when nothing.
func UnderWay(annotations map[string]string) string {
	if job := annotations[cephv1alpha1.UpgradePGJobAnnotation]; job != "" {
		return fmt.Sprintf("an upgrade step is about to be taken (Ceph Job %s asks Ceph whether every PG is active+clean)", job)
	}
	var s State
	if json.Unmarshal([]byte(annotations[cephv1alpha1.UpgradeAnnotation]), &s) != nil || s.Stage != StageRolling || s.Stalled {
		return ""
	}
	return s.Progress()
}

// pendingShown bounds the daemons a state names: the console and the
// status say how many there are, and the first few.
const pendingShown = 5

// DecideState puts the plan, the two rolls and the state recorded
// at the last look together. A Rook step due comes first (no daemon rolls
// onto a Rook whose chart was not upgraded); then a Rook roll under way,
// which holds the Ceph step back (its Settled check); then a Ceph step due;
// then a Ceph roll under way.
func DecideState(plan Plan, rook, ceph Progress, targetRook, targetImage string, recorded *State) State {
	due := func() State {
		s := State{Step: plan.Step, From: plan.From, To: plan.To, Stage: StageRolling}
		for _, c := range plan.Checks {
			if !c.Passed {
				s.Checks = append(s.Checks, c)
			}
		}
		switch {
		case len(s.Checks) > 0:
			s.Stage = StageRefused
			if !slices.ContainsFunc(s.Checks, func(c cephv1alpha1.PreflightCheck) bool { return c.Name != CheckSettled }) {
				s.Stage = StageWaiting
			}
		case !plan.PGsRead:
			s.Stage = StageWaiting
			s.Checks = []cephv1alpha1.PreflightCheck{{Name: cephv1alpha1.CheckHealth, Message: "every other check passed; asking Ceph whether every PG is active+clean"}}
		}
		return s
	}
	rolling := func(step Step, to string, p Progress) State {
		from := strings.Join(p.From, ", ")
		if from == "" && recorded != nil && recorded.Step == step && recorded.To == to {
			from = recorded.From // the last daemons restart on specs already new
		}
		return State{Stage: StageRolling, Step: step, From: from, To: to,
			Done: p.Done, Total: p.Total, Pending: p.Pending[:min(len(p.Pending), pendingShown)]}
	}
	switch {
	case plan.Step == StepRook:
		return due()
	case rook.rollingFor(StepRook, targetRook, recorded):
		return rolling(StepRook, targetRook, rook)
	case plan.Step == StepCeph:
		return due()
	case ceph.rollingFor(StepCeph, targetImage, recorded):
		return rolling(StepCeph, targetImage, ceph)
	}
	return State{}
}

// PluginStatus is what the state adds to the plugin's status: degraded when
// refused (the plugin runs versions it was not built for until someone
// fixes what the checks say); running, saying what happens, while it waits
// or rolls; nothing when idle.
func (s State) PluginStatus() pluginruntime.PluginStatus {
	switch s.Stage {
	case StageRefused:
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: message.Bound(fmt.Sprintf(
			"upgrade of %s from %s to %s refused, nothing changed: %s; checked again each minute",
			s.Step, s.From, s.To, failedChecks(s.Checks)))}
	case StageWaiting, StageRolling:
		if s.Stalled {
			return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: message.Bound(s.Stall())}
		}
	}
	switch s.Stage {
	case StageWaiting:
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: message.Bound(fmt.Sprintf(
			"upgrade of %s from %s to %s waits: %s", s.Step, s.From, s.To, failedChecks(s.Checks)))}
	case StageRolling:
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: message.Bound(s.Progress())}
	}
	return pluginruntime.PluginStatus{}
}

// Stall says what a stalled wait or roll waits for.
func (s State) Stall() string {
	since := "a while"
	if s.Since != nil {
		since = s.Since.UTC().Format(time.RFC3339)
	}
	if s.Stage == StageWaiting {
		return fmt.Sprintf("upgrade of %s from %s to %s has waited since %s for the cluster to settle, which it has not: %s; fix what keeps them from running (a dead disk's OSD is retired with a DiskRetirement)",
			s.Step, s.From, s.To, since, failedChecks(s.Checks))
	}
	return fmt.Sprintf("%s, and no daemon has moved on since %s: look at the daemons it waits for (a dead disk's OSD is retired with a DiskRetirement)", s.Progress(), since)
}

// Progress says how far a rolling step is.
func (s State) Progress() string {
	msg := fmt.Sprintf("upgrading %s to %s: %d of %d daemons on it", s.Step, s.To, s.Done, s.Total)
	if s.From != "" {
		msg = fmt.Sprintf("upgrading %s from %s to %s: %d of %d daemons on it", s.Step, s.From, s.To, s.Done, s.Total)
	}
	if len(s.Pending) > 0 {
		msg += "; waiting for " + strings.Join(s.Pending, ", ")
		if more := s.Total - s.Done - len(s.Pending); more > 0 {
			msg += fmt.Sprintf(" and %d more", more)
		}
	}
	return msg
}

func failedChecks(checks []cephv1alpha1.PreflightCheck) string {
	var failed []string
	for _, c := range checks {
		if !c.Passed {
			failed = append(failed, c.Name+": "+c.Message)
		}
	}
	return strings.Join(failed, "; ")
}

// NextRecord is the record the CephCluster carries after this
// state, given the one it carries (nil: none), and whether it changed. A
// finished roll is kept as Done, so the console says what the last upgrade
// was; a step that is no longer due without having rolled (its target was
// configured back) leaves no record.
func NextRecord(recorded *State, now State) (*State, bool) {
	if now.Stage != StageIdle {
		return &now, recorded == nil || !sameState(*recorded, now)
	}
	switch {
	case recorded == nil:
		return nil, false
	case recorded.Stage == StageDone:
		return recorded, false
	case recorded.Stage == StageRolling:
		done := State{Stage: StageDone, Step: recorded.Step, From: recorded.From, To: recorded.To,
			Done: recorded.Total, Total: recorded.Total}
		return &done, true
	}
	return nil, true
}

func sameState(a, b State) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// EventReason is the reason of an Event the upgrade announces.
type EventReason string

// The upgrade's Event reasons, one per stage it announces.
const (
	ReasonRefused   EventReason = "UpgradeRefused"
	ReasonWaiting   EventReason = "UpgradeWaiting"
	ReasonUpgrading EventReason = "Upgrading"
	ReasonUpgraded  EventReason = "Upgraded"
	ReasonStalled   EventReason = "UpgradeStalled"
)

// Event is the Event a change of record announces: its type (a
// corev1.EventType*), reason and message; ok false when the change is not
// news (progress within a roll, or the same refusal again).
func Event(recorded, next *State) (eventType string, reason EventReason, message string, ok bool) {
	if next != nil && next.Stalled && (recorded == nil || !recorded.Stalled) {
		return corev1.EventTypeWarning, ReasonStalled, next.Stall(), true
	}
	if next == nil || (recorded != nil && recorded.Stage == next.Stage && recorded.Step == next.Step && recorded.To == next.To) {
		return "", "", "", false
	}
	switch next.Stage {
	case StageRefused:
		return corev1.EventTypeWarning, ReasonRefused, next.PluginStatus().Message, true
	case StageWaiting:
		return corev1.EventTypeNormal, ReasonWaiting, next.PluginStatus().Message, true
	case StageRolling:
		return corev1.EventTypeNormal, ReasonUpgrading, next.Progress(), true
	case StageDone:
		return corev1.EventTypeNormal, ReasonUpgraded, fmt.Sprintf("%s upgraded from %s to %s: every daemon (%d) runs it", next.Step, next.From, next.To, next.Total), true
	}
	return "", "", "", false
}
