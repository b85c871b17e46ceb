package upgrade

import (
	"strings"
	"testing"
	"time"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNextUpgradeStep(t *testing.T) {
	tests := []struct {
		name                             string
		installed, target, image, wanted string
		want                             Step
		ok                               bool
	}{
		{"nothing to do", "v1.18.11", "v1.18.11", "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3", "", false},
		{"a new chart", "v1.18.0", "v1.18.11", "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3", StepRook, true},
		{"a new image", "v1.18.11", "v1.18.11", "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.4", StepCeph, true},
		{"both: Rook first", "v1.18.0", "v1.18.11", "quay.io/ceph/ceph:v18.2.7", "quay.io/ceph/ceph:v19.2.3", StepRook, true},
		{"the target Rook cannot run the cluster's Ceph, the installed one runs the target: Ceph first", "v1.18.11", "v1.19.0", "quay.io/ceph/ceph:v18.2.7", "quay.io/ceph/ceph:v19.2.3", StepCeph, true},
		{"neither Rook runs what the other needs: Rook first, and its preflight says why", "v1.18.0", "v1.19.0", "quay.io/ceph/ceph:v18.2.7", "quay.io/ceph/ceph:v20.2.0", StepRook, true},
		{"the target Rook runs the cluster's Ceph: Rook first", "v1.18.11", "v1.19.0", "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v20.2.0", StepRook, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := NextStep(tt.installed, tt.target, tt.image, tt.wanted)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, step)
		})
	}
}

func TestParseVersions(t *testing.T) {
	ceph := map[string]Version{
		"18.2.7":   {18, 2, 7},
		"18.2.7-0": {18, 2, 7},
		"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)": {18, 2, 7},
		"v19.2.3":          {19, 2, 3},
		"v18.2.7-20250101": {18, 2, 7},
	}
	for in, want := range ceph {
		got, err := ParseCephVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "latest", "reef", "18.2", "v18.2.7.1x"} {
		_, err := ParseCephVersion(bad)
		assert.Error(t, err, bad)
	}

	got, err := ParseRookVersion("v1.18.11")
	require.NoError(t, err)
	assert.Equal(t, Version{1, 18, 11}, got)
	for _, unofficial := range []string{"1.18.11", "v1.18.11-rc.1", "v1.18.11-4-gabc", "master"} {
		_, err := ParseRookVersion(unofficial)
		assert.Error(t, err, unofficial)
	}

	images := map[string]string{
		"quay.io/ceph/ceph:v19.2.3":                  "19.2.3",
		"registry.local:5000/ceph/ceph:v18.2.7-e2e":  "18.2.7",
		"quay.io/ceph/ceph:v19.2.3@sha256:0123abcd":  "19.2.3",
		"quay.io/ceph/ceph":                          "no tag",
		"registry.local:5000/ceph/ceph":              "no tag",
		"quay.io/ceph/ceph:latest":                   "names no Ceph version",
		"quay.io/ceph/ceph@sha256:0123456789abcdef0": "no tag",
	}
	for image, want := range images {
		v, err := CephImageVersion(image)
		if err != nil {
			assert.Contains(t, err.Error(), want, image)
			continue
		}
		assert.Equal(t, want, v.String(), image)
	}
}

func TestVersionCompare(t *testing.T) {
	assert.Negative(t, Version{18, 2, 7}.Compare(Version{19, 2, 0}))
	assert.Negative(t, Version{19, 2, 0}.Compare(Version{19, 10, 0}), "numeric, not lexical")
	assert.Positive(t, Version{1, 18, 11}.Compare(Version{1, 18, 9}))
	assert.Zero(t, Version{18, 2, 7}.Compare(Version{18, 2, 7}))
}

// healthyUpgrade are the facts of a settled, healthy cluster on Rook
// v1.18.0 and Ceph 18.2.7 whose plugin brings Rook v1.18.11.
func healthyUpgrade() Facts {
	f := Facts{
		Step:          StepRook,
		InstalledRook: "v1.18.0", TargetRook: "v1.18.11",
		ClusterImage: "quay.io/ceph/ceph:v18.2.7", DetectedImage: "quay.io/ceph/ceph:v18.2.7", TargetImage: "quay.io/ceph/ceph:v18.2.7",
		RunningCeph:  []string{"ceph version 18.2.7 (6b0e988052ec84cf2d4a54ff9bbbc5e720b621ad) reef (stable)"},
		Kubernetes:   "v1.34.2",
		RookVersions: []string{"v1.18.0"}, CephVersions: []string{"18.2.7-0"},
	}
	f.Ceph.Health.Status = "HEALTH_OK"
	f.Ceph.PGStates = map[string]int{"active+clean": 97}
	f.OSDs = 3
	return f
}

func TestUpgradePreflight(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Facts)
		// refused names the failing check and a phrase of its message;
		// empty: every check passes.
		refused, says string
	}{
		{name: "a settled healthy cluster, a Rook patch", change: func(*Facts) {}},
		{name: "Rook's copy of Ceph's status two minutes old", change: func(f *Facts) {
			f.Now = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			f.StatusChecked = f.Now.Add(-2 * time.Minute)
		}},
		{name: "tolerated warnings", change: func(f *Facts) {
			f.Ceph.Health.Status = "HEALTH_WARN"
			f.Ceph.Health.Checks = map[string]string{"RECENT_CRASH": "1 daemons have recently crashed", "AUTH_INSECURE_GLOBAL_ID_RECLAIM_ALLOWED": "mons are allowing insecure global_id reclaim"}
		}},
		{name: "size-1 pools on two OSDs: Ceph is never asked", change: func(f *Facts) {
			f.Ceph.Health.Status = "HEALTH_WARN"
			f.Ceph.Health.Checks = map[string]string{"POOL_NO_REDUNDANCY": "1 pool(s) have no replicas configured"}
			f.OSDs = 2
		}},
		{name: "the next minor", change: func(f *Facts) {
			f.InstalledRook, f.TargetRook = "v1.18.11", "v1.19.10"
			f.RookVersions = []string{f.InstalledRook}
			f.RunningCeph, f.ClusterImage, f.DetectedImage = []string{"19.2.3-0"}, "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3"
		}},
		{name: "the same Ceph under a new tag rolls every daemon", change: func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v18.2.7-e2e2"
			f.RookVersions = []string{f.InstalledRook}
		}},
		{name: "Ceph one major up", change: func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v19.2.3"
			f.RookVersions = []string{f.InstalledRook}
		}},

		{"HEALTH_ERR", func(f *Facts) {
			f.Ceph.Health.Status, f.Ceph.Health.Checks = "HEALTH_ERR", map[string]string{"MON_DOWN": "2/3 mons down"}
		}, cephv1alpha1.CheckHealth, "HEALTH_ERR (MON_DOWN)"},
		{"health unknown", func(f *Facts) { f.Ceph.Health.Status = "" }, cephv1alpha1.CheckHealth, "could not read ceph status"},
		{"Rook's copy of Ceph's status is stale", func(f *Facts) {
			f.Now = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			f.StatusChecked = f.Now.Add(-4 * time.Minute)
		}, cephv1alpha1.CheckHealth, "4m0s ago"},
		{"a blocking warning", func(f *Facts) {
			f.Ceph.Health.Status, f.Ceph.Health.Checks = "HEALTH_WARN", map[string]string{"MON_DOWN": "1/3 mons down", "RECENT_CRASH": "1 crash"}
		}, cephv1alpha1.CheckHealth, "MON_DOWN: 1/3 mons down"},
		{"a warning nobody reviewed", func(f *Facts) {
			f.Ceph.Health.Status, f.Ceph.Health.Checks = "HEALTH_WARN", map[string]string{"SOMETHING_NEW": "new in Ceph 21"}
		}, cephv1alpha1.CheckHealth, "SOMETHING_NEW"},
		{"size-1 pools on three OSDs: ok-to-stop would refuse", func(f *Facts) {
			f.Ceph.Health.Status, f.Ceph.Health.Checks = "HEALTH_WARN", map[string]string{"POOL_NO_REDUNDANCY": "1 pool(s) have no replicas configured"}
		}, cephv1alpha1.CheckHealth, "POOL_NO_REDUNDANCY: 1 pool(s) have no replicas configured: resolve it before upgrading (a pool of one copy"},
		{"PGs not active+clean", func(f *Facts) {
			f.Ceph.PGStates = map[string]int{"active+clean": 90, "active+undersized+degraded": 7}
		}, cephv1alpha1.CheckHealth, "7 active+undersized+degraded"},
		{"a retirement in progress", func(f *Facts) { f.Retirements = []string{"node-a-sdb"} }, CheckRetirements, "node-a-sdb is in progress"},
		{"an OSD held down", func(f *Facts) { f.HeldOSDs = []string{"rook-ceph-osd-2"} }, CheckRetirements, "rook-ceph-osd-2 held"},
		{"a node with daemons NotReady", func(f *Facts) { f.UnfitNodes = []string{"node-b is NotReady"} }, CheckNodes, "node-b is NotReady: a daemon there would not come back"},
		{"Rook two minors on", func(f *Facts) { f.TargetRook = "v1.20.6" }, CheckVersions, "one minor at a time"},
		{"Rook from a build that is no release", func(f *Facts) {
			f.InstalledRook, f.RookVersions = "v1.18.0-12-gabcdef", []string{"v1.18.0-12-gabcdef"}
		}, CheckVersions, "official releases"},
		{"Rook downgraded", func(f *Facts) {
			f.InstalledRook, f.TargetRook, f.RookVersions = "v1.18.11", "v1.18.0", []string{"v1.18.11"}
		}, CheckVersions, "no downgrade"},
		{"Rook v1.20: the CSI drivers chart the plugin does not install", func(f *Facts) {
			f.InstalledRook, f.TargetRook = "v1.19.5", "v1.20.6"
			f.RookVersions = []string{f.InstalledRook}
			f.RunningCeph, f.ClusterImage, f.DetectedImage = []string{"19.2.3-0"}, "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3"
		}, CheckVersions, "ceph-csi-drivers chart"},
		{"Rook v1.20 from below v1.19.5", func(f *Facts) {
			f.InstalledRook, f.TargetRook = "v1.19.2", "v1.20.6"
			f.RookVersions = []string{f.InstalledRook}
			f.RunningCeph, f.ClusterImage, f.DetectedImage = []string{"19.2.3-0"}, "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3"
		}, CheckVersions, "upgrade to v1.19.5 first"},
		{"Rook v1.19 while Ceph runs 18", func(f *Facts) {
			f.InstalledRook, f.TargetRook = "v1.18.11", "v1.19.10"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "runs Ceph 18.2.7 and Rook v1.19.10 needs Ceph 19.2.0 or newer: upgrade Ceph first"},
		{"Rook v1.19 on an old Kubernetes", func(f *Facts) {
			f.InstalledRook, f.TargetRook, f.Kubernetes = "v1.18.11", "v1.19.10", "v1.29.4"
			f.RookVersions = []string{f.InstalledRook}
			f.RunningCeph, f.ClusterImage, f.DetectedImage = []string{"19.2.3-0"}, "quay.io/ceph/ceph:v19.2.3", "quay.io/ceph/ceph:v19.2.3"
		}, CheckVersions, "needs Kubernetes 1.30 or newer"},
		{"a Rook line the plugin does not know", func(f *Facts) {
			f.InstalledRook, f.TargetRook = "v1.20.6", "v1.21.0"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "knows nothing of Rook v1.21"},
		{"Ceph downgraded", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v18.2.4"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "never downgraded"},
		{"Ceph two majors on", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v20.2.1"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "upgrade to Ceph 19 first"},
		{"Tentacle on a Rook before v1.18.8", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.7", "quay.io/ceph/ceph:v20.2.1"
			f.RookVersions = []string{f.InstalledRook}
			f.RunningCeph = []string{"19.2.3-0"}
		}, CheckVersions, "Ceph 20 needs Rook v1.18.8 or newer"},
		{"a Ceph below the running Rook's minimum", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v17.2.8"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "needs Ceph 18.2.0 or newer"},
		{"an image whose tag names no version", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage = StepCeph, "v1.18.11", "quay.io/ceph/ceph:latest"
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "names no Ceph version"},
		{"no running versions reported yet", func(f *Facts) {
			f.Step, f.InstalledRook, f.TargetImage, f.RunningCeph = StepCeph, "v1.18.11", "quay.io/ceph/ceph:v19.2.3", nil
			f.RookVersions = []string{f.InstalledRook}
		}, CheckVersions, "no running Ceph versions"},
		{"daemons on two Ceph versions", func(f *Facts) {
			f.RunningCeph = append(f.RunningCeph, "ceph version 19.2.3 (c92aebb279828e9c3c1f5d24613efca272649e62) squid (stable)")
		}, CheckSettled, "daemons run"},
		{"Deployments on two Rook versions", func(f *Facts) { f.RookVersions = []string{"v1.18.0", "v1.18.11"} }, CheckSettled, "rook-version v1.18.0 and v1.18.11"},
		{"the new operator has not yet rewritten the daemons", func(f *Facts) {
			f.Step, f.InstalledRook = StepCeph, "v1.18.11"
			f.TargetImage = "quay.io/ceph/ceph:v18.2.8"
		}, CheckSettled, "rook-version v1.18.0, not yet the running operator's v1.18.11"},
		{"Deployments on two Ceph versions", func(f *Facts) { f.CephVersions = []string{"18.2.7-0", "19.2.3-0"} }, CheckSettled, "ceph-version"},
		{"a daemon not available", func(f *Facts) { f.Unavailable = []string{"rook-ceph-mon-b"} }, CheckSettled, "rook-ceph-mon-b not available"},
		{"a new image not yet detected", func(f *Facts) { f.ClusterImage = "quay.io/ceph/ceph:v18.2.7-e2e2" }, CheckSettled, "not yet detected"},
		{"do-not-reconcile on the CephCluster", func(f *Facts) { f.DoNotReconcile = true }, CheckRookOverrides, "do-not-reconcile"},
		{"Rook's checks switched off", func(f *Facts) { f.SkipUpgradeChecks = true }, CheckRookOverrides, "spec.skipUpgradeChecks"},
		{"continue when unhealthy", func(f *Facts) { f.ContinueIfNotHealthy = true }, CheckRookOverrides, "continueUpgradeAfterChecksEvenIfNotHealthy"},
		{"unsupported Ceph allowed", func(f *Facts) { f.AllowUnsupported = true }, CheckRookOverrides, "allowUnsupported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := healthyUpgrade()
			tt.change(&f)
			checks := Preflight(f)
			var failed []string
			for _, c := range checks {
				assert.NotEmpty(t, c.Message, c.Name)
				if !c.Passed {
					failed = append(failed, c.Name)
					if c.Name == tt.refused {
						assert.Contains(t, c.Message, tt.says)
					}
				}
			}
			if tt.refused == "" {
				assert.Empty(t, failed, "%+v", checks)
				assert.True(t, cephv1alpha1.PreflightChecks(checks).Passed())
				return
			}
			assert.Equal(t, []string{tt.refused}, failed, "%+v", checks)
			assert.False(t, cephv1alpha1.PreflightChecks(checks).Passed())
		})
	}
}

// Every check the preflight makes is reported, so a refusal's status shows
// what passed beside what did not.
func TestUpgradePreflightReportsEveryCheck(t *testing.T) {
	var names []string
	for _, c := range Preflight(healthyUpgrade()) {
		names = append(names, c.Name)
	}
	assert.Equal(t, "Versions Settled Health Retirements RookOverrides Nodes", strings.Join(names, " "))
}

// The plugin's own floor (its finalizer guard's ValidatingAdmissionPolicy
// v1) agrees with the version check: a Rook step onto a Kubernetes Rook
// accepts but the plugin cannot run on is refused, and so is the start.
func TestKubernetesFloor(t *testing.T) {
	assert.NoError(t, KubernetesFloor("v1.30.0"))
	assert.NoError(t, KubernetesFloor("v1.34.2-gke.100"))
	assert.ErrorContains(t, KubernetesFloor("v1.29.9"), "the plugin needs Kubernetes 1.30 or newer")
	assert.ErrorContains(t, KubernetesFloor("1.29"), "Kubernetes version")
	v118, err := ParseRookVersion("v1.18.11")
	require.NoError(t, err)
	assert.ErrorContains(t, kubernetesSupports("v1.29.9", v118, rookLines[[2]int{1, 18}]), "ValidatingAdmissionPolicy")
}
