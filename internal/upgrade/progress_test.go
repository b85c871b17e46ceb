package upgrade

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

const (
	oldCephImage = "quay.io/ceph/ceph:v19.2.3"
	newCephImage = "quay.io/ceph/ceph:v19.2.4"
	rookImage    = "docker.io/rook/ceph:v1.18.11"
)

func TestDaemonRollOf(t *testing.T) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mgr-a", Generation: 3, Labels: map[string]string{rook.VersionLabel: "v1.18.11"}},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Image: oldCephImage}},
			Containers:     []corev1.Container{{Image: oldCephImage}, {Image: rookImage}},
		}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 3, UpdatedReplicas: 1, AvailableReplicas: 1},
	}
	assert.Equal(t, DaemonRoll{Name: "rook-ceph-mgr-a", RookVersion: "v1.18.11", Images: []string{oldCephImage, oldCephImage, rookImage}, RolledOut: true}, DaemonRollOf(d))

	d.Generation = 4 // a new spec the Deployment controller has not seen
	assert.False(t, DaemonRollOf(d).RolledOut)
	d.Status.ObservedGeneration, d.Status.AvailableReplicas = 4, 0
	assert.False(t, DaemonRollOf(d).RolledOut, "a replica not available")
	zero := int32(0)
	d.Spec.Replicas = &zero
	assert.True(t, DaemonRollOf(d).RolledOut, "an OSD scaled to zero has nothing to roll")
}

func TestRolls(t *testing.T) {
	daemons := []DaemonRoll{
		{Name: "rook-ceph-mon-a", RookVersion: "v1.18.11", Images: []string{newCephImage}, RolledOut: true},
		{Name: "rook-ceph-mgr-a", RookVersion: "v1.18.11", Images: []string{newCephImage, rookImage}, RolledOut: true},
		{Name: "rook-ceph-osd-0", RookVersion: "v1.18.11", Images: []string{newCephImage}, RolledOut: false},
		{Name: "rook-ceph-osd-1", RookVersion: "v1.18.0", Images: []string{oldCephImage, oldCephImage}, RolledOut: true},
	}
	assert.Equal(t, Progress{Done: 2, Total: 4, Behind: 1, Pending: []string{"rook-ceph-osd-0", "rook-ceph-osd-1"}, From: []string{oldCephImage}},
		CephRoll(newCephImage, rookImage, daemons), "Rook's own image in a sidecar is not a Ceph image left behind")
	assert.Equal(t, Progress{Done: 2, Total: 4, Behind: 1, Pending: []string{"rook-ceph-osd-0", "rook-ceph-osd-1"}, From: []string{"v1.18.0"}},
		RookRoll("v1.18.11", daemons))
	none := CephRoll(newCephImage, rookImage, nil)
	assert.Zero(t, none.Total+none.Behind+none.Done, "no daemons yet: nothing rolls")
}

func TestDecideUpgradeState(t *testing.T) {
	failed := func(names ...string) []cephv1alpha1.PreflightCheck {
		var checks []cephv1alpha1.PreflightCheck
		for _, n := range names {
			checks = append(checks, cephv1alpha1.PreflightCheck{Name: n, Message: n + " says no"})
		}
		return append(checks, cephv1alpha1.PreflightCheck{Name: CheckVersions, Passed: true, Message: "fine"})
	}
	rookPlan := Plan{Step: StepRook, From: "v1.18.0", To: "v1.18.11"}
	cephPlan := Plan{Step: StepCeph, From: oldCephImage, To: newCephImage}
	settled := Progress{Done: 3, Total: 3}
	rookBehind := Progress{Done: 1, Total: 3, Behind: 2, Pending: []string{"rook-ceph-mon-a", "rook-ceph-osd-0"}, From: []string{"v1.18.0"}}
	restarting := Progress{Done: 2, Total: 3, Pending: []string{"rook-ceph-osd-0"}} // specs all on it, one not yet available
	cephBehind := Progress{Done: 0, Total: 3, Behind: 3, Pending: []string{"a", "b", "c"}, From: []string{oldCephImage}}
	rollingCeph := &State{Stage: StageRolling, Step: StepCeph, From: oldCephImage, To: newCephImage}

	tests := []struct {
		name       string
		plan       Plan
		rook, ceph Progress
		recorded   *State
		want       State
	}{
		{name: "nothing due, nothing rolling", rook: settled, ceph: settled, want: State{}},
		{name: "a new cluster's daemons starting are no upgrade", rook: restarting, ceph: restarting, want: State{}},
		{name: "Rook step refused by health", plan: withChecks(rookPlan, failed(cephv1alpha1.CheckHealth)), rook: settled, ceph: settled,
			want: State{Stage: StageRefused, Step: StepRook, From: "v1.18.0", To: "v1.18.11", Checks: failed(cephv1alpha1.CheckHealth)[:1]}},
		{name: "Ceph step held only by the roll settling waits", plan: withChecks(cephPlan, failed(CheckSettled)), rook: settled, ceph: settled,
			want: State{Stage: StageWaiting, Step: StepCeph, From: oldCephImage, To: newCephImage, Checks: failed(CheckSettled)[:1]}},
		{name: "Settled and Health failing is a refusal", plan: withChecks(cephPlan, failed(CheckSettled, cephv1alpha1.CheckHealth)), rook: settled, ceph: settled,
			want: State{Stage: StageRefused, Step: StepCeph, From: oldCephImage, To: newCephImage, Checks: failed(CheckSettled, cephv1alpha1.CheckHealth)[:2]}},
		{name: "Rook rolling comes before the Ceph step due", plan: withChecks(cephPlan, failed(CheckSettled)), rook: rookBehind, ceph: settled,
			want: State{Stage: StageRolling, Step: StepRook, From: "v1.18.0", To: "v1.18.11", Done: 1, Total: 3, Pending: rookBehind.Pending}},
		{name: "Ceph rolling", ceph: cephBehind, rook: settled,
			want: State{Stage: StageRolling, Step: StepCeph, From: oldCephImage, To: newCephImage, Total: 3, Pending: []string{"a", "b", "c"}}},
		{name: "the roll's last restart is still the roll", ceph: restarting, rook: settled, recorded: rollingCeph,
			want: State{Stage: StageRolling, Step: StepCeph, From: oldCephImage, To: newCephImage, Done: 2, Total: 3, Pending: []string{"rook-ceph-osd-0"}}},
		{name: "a roll to another image is not that roll", ceph: restarting, rook: settled, recorded: &State{Stage: StageRolling, Step: StepCeph, To: "other"},
			want: State{}},
		{name: "every check passed, Ceph not yet asked for its PG states: it waits", plan: withChecks(cephPlan, failed()), rook: settled, ceph: settled,
			want: State{Stage: StageWaiting, Step: StepCeph, From: oldCephImage, To: newCephImage,
				Checks: []cephv1alpha1.PreflightCheck{{Name: cephv1alpha1.CheckHealth, Message: "every other check passed; asking Ceph whether every PG is active+clean"}}}},
		{name: "an allowed step not yet visible is rolling", plan: pgsRead(withChecks(cephPlan, failed())), rook: settled, ceph: settled,
			want: State{Stage: StageRolling, Step: StepCeph, From: oldCephImage, To: newCephImage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DecideState(tt.plan, tt.rook, tt.ceph, "v1.18.11", newCephImage, tt.recorded))
		})
	}
}

func withChecks(p Plan, checks []cephv1alpha1.PreflightCheck) Plan {
	p.Checks = checks
	return p
}

func pgsRead(p Plan) Plan {
	p.PGsRead = true
	return p
}

func TestUpgradeStatePluginStatus(t *testing.T) {
	refused := State{Stage: StageRefused, Step: StepRook, From: "v1.18.0", To: "v1.18.11",
		Checks: []cephv1alpha1.PreflightCheck{{Name: cephv1alpha1.CheckHealth, Message: "Ceph reports HEALTH_ERR (MON_DOWN)"}}}
	assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded,
		Message: "upgrade of Rook from v1.18.0 to v1.18.11 refused, nothing changed: Health: Ceph reports HEALTH_ERR (MON_DOWN); checked again each minute"},
		refused.PluginStatus())

	waiting := State{Stage: StageWaiting, Step: StepCeph, From: "a", To: "b",
		Checks: []cephv1alpha1.PreflightCheck{{Name: CheckSettled, Message: "rook-ceph-osd-0 is not available"}}}
	assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning,
		Message: "upgrade of Ceph from a to b waits: Settled: rook-ceph-osd-0 is not available"}, waiting.PluginStatus())

	rolling := State{Stage: StageRolling, Step: StepCeph, From: "a", To: "b", Done: 2, Total: 9,
		Pending: []string{"p1", "p2", "p3", "p4", "p5"}}
	assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning,
		Message: "upgrading Ceph from a to b: 2 of 9 daemons on it; waiting for p1, p2, p3, p4, p5 and 2 more"}, rolling.PluginStatus())

	assert.Equal(t, pluginruntime.PluginStatus{}, State{}.PluginStatus(), "idle adds nothing")
}

func TestPendingShownIsBounded(t *testing.T) {
	p := Progress{Total: 8, Behind: 8, Pending: []string{"1", "2", "3", "4", "5", "6", "7", "8"}}
	s := DecideState(Plan{}, Progress{}, p, "v1.18.11", newCephImage, nil)
	assert.Len(t, s.Pending, pendingShown)
}

func TestNextUpgradeRecordAndEvent(t *testing.T) {
	rolling := State{Stage: StageRolling, Step: StepCeph, From: "a", To: "b", Done: 1, Total: 3}
	further := rolling
	further.Done = 2
	done := State{Stage: StageDone, Step: StepCeph, From: "a", To: "b", Done: 3, Total: 3}
	refused := State{Stage: StageRefused, Step: StepCeph, From: "a", To: "b"}

	tests := []struct {
		name             string
		recorded         *State
		now              State
		want             *State
		changed          bool
		reason           EventReason
		evtype           string
		messageFragments string
	}{
		{name: "idle, nothing recorded", now: State{}},
		{name: "a roll starts", now: rolling, want: &rolling, changed: true, reason: "Upgrading", evtype: "Normal", messageFragments: "upgrading Ceph from a to b: 1 of 3"},
		{name: "progress is written, not announced", recorded: &rolling, now: further, want: &further, changed: true},
		{name: "the same state is not written again", recorded: &further, now: further, want: &further},
		{name: "a finished roll is kept as Done", recorded: &further, now: State{}, want: &done, changed: true, reason: "Upgraded", evtype: "Normal", messageFragments: "every daemon (3) runs it"},
		{name: "Done stays", recorded: &done, now: State{}, want: &done},
		{name: "a refusal is a warning", recorded: &done, now: refused, want: &refused, changed: true, reason: "UpgradeRefused", evtype: "Warning", messageFragments: "refused, nothing changed"},
		{name: "a refusal no longer due leaves no record", recorded: &refused, now: State{}, want: nil, changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, changed := NextRecord(tt.recorded, tt.now)
			assert.Equal(t, tt.want, next)
			assert.Equal(t, tt.changed, changed)
			evtype, reason, message, ok := Event(tt.recorded, next)
			assert.Equal(t, tt.reason != "", ok)
			assert.Equal(t, tt.reason, reason)
			assert.Equal(t, tt.evtype, evtype)
			assert.Contains(t, message, tt.messageFragments)
		})
	}
}

// A roll (or a wait to settle) that moves no daemon on for StallLimit is
// reported Degraded, with what it waits for; one that moves is not, and
// a new stage starts its own clock.
func TestAStalledRollIsDegraded(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	rolling := State{Stage: StageRolling, Step: StepCeph, To: newCephImage, Done: 3, Total: 6, Pending: []string{"rook-ceph-osd-2"}}
	first := WithStall(rolling, nil, t0, StallLimit)
	assert.Equal(t, t0, first.Since.Time)
	assert.False(t, first.Stalled)

	later := WithStall(rolling, &first, t0.Add(StallLimit+time.Minute), StallLimit)
	assert.Equal(t, t0, later.Since.Time, "no daemon moved on: the clock runs")
	assert.True(t, later.Stalled)
	status := later.PluginStatus()
	assert.Equal(t, pluginruntime.PhaseDegraded, status.Phase)
	assert.Contains(t, status.Message, "waiting for rook-ceph-osd-2")
	assert.Contains(t, status.Message, "no daemon has moved on since 2026-12-07T12:00:00Z")
	eventType, reason, _, ok := Event(&first, &later)
	assert.True(t, ok)
	assert.Equal(t, corev1.EventTypeWarning, eventType)
	assert.Equal(t, ReasonStalled, reason)
	_, _, _, ok = Event(&later, &later)
	assert.False(t, ok, "announced once")

	moved := rolling
	moved.Done = 4
	again := WithStall(moved, &later, t0.Add(StallLimit+2*time.Minute), StallLimit)
	assert.False(t, again.Stalled, "a daemon moved on")
	assert.Equal(t, t0.Add(StallLimit+2*time.Minute), again.Since.Time)

	waiting := State{Stage: StageWaiting, Step: StepCeph, To: newCephImage, Checks: []cephv1alpha1.PreflightCheck{{Name: CheckSettled, Message: "rook-ceph-osd-2 not available"}}}
	w := WithStall(waiting, &State{Stage: StageWaiting, Step: StepCeph, To: newCephImage, Since: &metav1.Time{Time: t0}}, t0.Add(2*StallLimit), StallLimit)
	assert.True(t, w.Stalled)
	assert.Equal(t, pluginruntime.PhaseDegraded, w.PluginStatus().Phase)
	assert.Contains(t, w.PluginStatus().Message, "rook-ceph-osd-2 not available")

	assert.Nil(t, WithStall(State{Stage: StageRefused}, nil, t0, StallLimit).Since, "only waits and rolls are dated")
}

// A retirement does not start beside an upgrade step about to be taken or
// a roll, unless the roll stalled (it may wait for that very retirement).
func TestUnderWay(t *testing.T) {
	record := func(s State) map[string]string {
		raw, err := json.Marshal(s)
		assert.NoError(t, err)
		return map[string]string{cephv1alpha1.UpgradeAnnotation: string(raw)}
	}
	rolling := State{Stage: StageRolling, Step: StepCeph, To: newCephImage, Done: 1, Total: 6}
	assert.Empty(t, UnderWay(nil))
	assert.Contains(t, UnderWay(map[string]string{cephv1alpha1.UpgradePGJobAnnotation: "ceph-rook-pgs-x-1"}), "an upgrade step is about to be taken")
	assert.Contains(t, UnderWay(record(rolling)), "1 of 6 daemons on it")
	stalled := rolling
	stalled.Stalled = true
	assert.Empty(t, UnderWay(record(stalled)))
	assert.Empty(t, UnderWay(record(State{Stage: StageRefused, Step: StepCeph})))
	assert.Empty(t, UnderWay(record(State{Stage: StageDone, Step: StepCeph})))
	assert.Empty(t, UnderWay(map[string]string{cephv1alpha1.UpgradeAnnotation: "{not json"}))
}
