package upgrade

import (
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
)

func TestInstalledRookChart(t *testing.T) {
	for label, want := range map[string]string{
		"rook-ceph-v1.18.0":         "v1.18.0",
		"rook-ceph-v1.18.11":        "v1.18.11",
		"":                          "",
		"rook-ceph-cluster-v1.18.0": "cluster-v1.18.0", // not an official tag: the Rook step refuses it
		"other-v1.0.0":              "",
	} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{rook.HelmChartLabel: label}}}
		assert.Equal(t, want, InstalledRookChart(d), label)
	}
}

func TestUpgradeFactsFrom(t *testing.T) {
	cluster := &cephv1.CephCluster{}
	cluster.Labels = map[string]string{cephv1.SkipReconcileLabelKey: "true"}
	cluster.Spec.CephVersion = cephv1.CephVersionSpec{Image: "quay.io/ceph/ceph:v19.2.4", AllowUnsupported: true}
	cluster.Spec.SkipUpgradeChecks = true
	cluster.Status.CephVersion = &cephv1.ClusterVersion{Image: "quay.io/ceph/ceph:v19.2.3"}
	cluster.Status.CephStatus = &cephv1.CephStatus{
		Health:      "HEALTH_WARN",
		LastChecked: "2026-12-06T12:00:05Z",
		Details:     map[string]cephv1.CephHealthMessage{"OSD_DOWN": {Severity: "HEALTH_WARN", Message: "1 osds down"}},
		Versions:    &cephv1.CephDaemonsVersions{Overall: map[string]int{"ceph version 19.2.4 (b) squid (stable)": 2, "ceph version 19.2.3 (a) squid (stable)": 4}},
	}
	daemon := func(name, app, rookVersion, ceph string, replicas, available int32, extra ...string) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": app, rook.VersionLabel: rookVersion, rook.CephVersionLabel: ceph}}}
		for i := 0; i+1 < len(extra); i += 2 {
			d.Labels[extra[i]] = extra[i+1]
		}
		d.Spec.Replicas = &replicas
		d.Status.UpdatedReplicas, d.Status.AvailableReplicas = available, available
		return d
	}
	daemons := []appsv1.Deployment{
		daemon("rook-ceph-mon-a", "rook-ceph-mon", "v1.18.11", "19.2.4-0", 1, 1),
		daemon("rook-ceph-mon-b", "rook-ceph-mon", "v1.18.11", "19.2.3-0", 1, 0),
		daemon("rook-ceph-osd-1", rook.OSDApp, "v1.18.0", "19.2.3-0", 0, 0),
		daemon("rook-ceph-osd-2", rook.OSDApp, "v1.18.11", "19.2.3-0", 1, 1, cephv1.SkipReconcileLabelKey, "retiring"),
		daemon("rook-ceph-crashcollector-a", "rook-ceph-crashcollector", "v1.18.11", "19.2.3-0", 0, 0),
	}
	retirement := func(name string, phase cephv1alpha1.DiskRetirementPhase) cephv1alpha1.DiskRetirement {
		r := cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: name}}
		r.Status.Phase = phase
		return r
	}
	retirements := []cephv1alpha1.DiskRetirement{
		retirement("done", cephv1alpha1.RetirementRetired), retirement("refused", cephv1alpha1.RetirementRefused),
		retirement("draining", cephv1alpha1.RetirementDraining), retirement("new", ""),
	}

	f := FactsFrom(cluster, daemons, retirements)

	assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", f.ClusterImage)
	assert.Equal(t, "quay.io/ceph/ceph:v19.2.3", f.DetectedImage)
	assert.Equal(t, []string{"ceph version 19.2.3 (a) squid (stable)", "ceph version 19.2.4 (b) squid (stable)"}, f.RunningCeph)
	assert.Equal(t, "HEALTH_WARN", f.Ceph.Health.Status)
	assert.Equal(t, time.Date(2026, 12, 6, 12, 0, 5, 0, time.UTC), f.StatusChecked, "Rook's lastChecked, RFC 3339")
	assert.Equal(t, map[string]string{"OSD_DOWN": "1 osds down"}, f.Ceph.Health.Checks)
	assert.Equal(t, []string{"v1.18.0", "v1.18.11"}, f.RookVersions)
	assert.Equal(t, []string{"19.2.3-0", "19.2.4-0"}, f.CephVersions)
	assert.Equal(t, []string{"rook-ceph-mon-b"}, f.Unavailable, "a scaled-down daemon that is no OSD is not waited for")
	assert.Equal(t, []string{"rook-ceph-osd-1", "rook-ceph-osd-2"}, f.HeldOSDs)
	assert.Equal(t, 2, f.OSDs, "the OSD Deployments, held ones counted: what POOL_NO_REDUNDANCY is judged by")
	assert.Equal(t, []string{"draining"}, f.Retirements, "every retirement that began to change the cluster (a new one waits for the upgrade)")
	assert.True(t, f.DoNotReconcile)
	assert.True(t, f.SkipUpgradeChecks)
	assert.True(t, f.AllowUnsupported)
	assert.False(t, f.ContinueIfNotHealthy)

	empty := FactsFrom(&cephv1.CephCluster{}, nil, nil)
	assert.Empty(t, empty.Ceph.Health.Status, "no status yet: the health check refuses, as health is unknown")
	assert.Nil(t, empty.RunningCeph)
}

func TestUnfitNodes(t *testing.T) {
	node := func(name string, ready corev1.ConditionStatus, cordoned bool) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: cordoned},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	hosts := map[string]*corev1.Node{
		"node-a": node("node-a", corev1.ConditionTrue, false),
		"node-b": node("node-b", corev1.ConditionUnknown, false),
		"node-c": node("node-c", corev1.ConditionTrue, true),
		"node-d": nil,
		"node-e": {ObjectMeta: metav1.ObjectMeta{Name: "node-e"}}, // no Ready condition yet
	}
	assert.Equal(t, []string{"node-b is NotReady", "node-c is cordoned", "node-d is gone", "node-e is NotReady"}, UnfitNodes(hosts))
	assert.Empty(t, UnfitNodes(map[string]*corev1.Node{"node-a": node("node-a", corev1.ConditionTrue, false)}))
}

// A start touches Rook's chart only when it is the plugin's already, or
// the Rook step is due and allowed: a Ceph step that comes first (the
// target Rook would not run the cluster's Ceph) leaves it alone.
func TestRookReleaseMayChange(t *testing.T) {
	passed := []cephv1alpha1.PreflightCheck{{Name: CheckVersions, Passed: true}}
	refused := []cephv1alpha1.PreflightCheck{{Name: CheckVersions, Message: "skips a minor"}}
	for _, tc := range []struct {
		name string
		plan Plan
		want bool
	}{
		{"nothing to upgrade", Plan{}, true},
		{"a Ceph step, the chart the plugin's", Plan{Step: StepCeph, Checks: passed, PGsRead: true}, true},
		{"a Rook step allowed", Plan{Step: StepRook, RookBehind: true, Checks: passed, PGsRead: true}, true},
		{"a Rook step refused", Plan{Step: StepRook, RookBehind: true, Checks: refused, PGsRead: true}, false},
		{"a Ceph step first, the chart behind", Plan{Step: StepCeph, RookBehind: true, Checks: passed, PGsRead: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.plan.RookReleaseMayChange()) })
	}
}

// A retirement that touched nothing waits for the upgrade (UnderWay); only
// one that began to change the cluster holds the upgrade back, so neither
// waits for the other.
func TestRetirementHolds(t *testing.T) {
	for _, tc := range []struct {
		status cephv1alpha1.DiskRetirementStatus
		want   bool
	}{
		{cephv1alpha1.DiskRetirementStatus{}, false},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementPending}, false},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementSuspended}, false},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementPending, MarkedOut: true}, true},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementWaitingForReplacement}, true},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementDraining}, true},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementWiping}, true},
		{cephv1alpha1.DiskRetirementStatus{Phase: cephv1alpha1.RetirementRetired}, false},
	} {
		assert.Equal(t, tc.want, retirementHolds(tc.status), "%+v", tc.status)
	}
}
