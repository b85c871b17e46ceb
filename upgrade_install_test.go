package main

import (
	"context"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/upgrade"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// testKubernetesVersion is the API server version install is told in
// tests: new enough for every Rook line the plugin knows.
const testKubernetesVersion = "v1.34.2"

// recordingCharts records the releases install asks for and installs
// nothing: what Helm does with them is TestInstallFromTheRookChartIsIdempotent's.
type recordingCharts struct{ releases []chartRelease }

func (r *recordingCharts) EnsureRelease(_ context.Context, release chartRelease) error {
	r.releases = append(r.releases, release)
	return nil
}

// installedRook makes (or relabels) the operator Deployment as Rook's chart
// of the given version leaves it.
func installedRook(t *testing.T, cfg Config, version string) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	labels := map[string]string{"app": "rook-ceph-operator"}
	operator := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: rook.OperatorDeployment, Namespace: cfg.OperatorNamespace},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "rook-ceph-operator", Image: "docker.io/rook/ceph:" + version}}},
			},
		},
	}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(operator), operator)
	if err != nil {
		require.NoError(t, client.IgnoreNotFound(err))
	}
	operator.Labels = map[string]string{rook.HelmChartLabel: rook.ChartName + "-" + version}
	if operator.ResourceVersion == "" {
		require.NoError(t, env.Client.Create(ctx, operator))
		return
	}
	require.NoError(t, env.Client.Update(ctx, operator))
}

// cephReports writes what Rook writes into the CephCluster's status: the
// health, its checks, the detected image and the daemons' versions.
func cephReports(t *testing.T, cfg Config, health string, checks map[string]string, versions ...string) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	status := &cephv1.CephStatus{Health: health, Versions: &cephv1.CephDaemonsVersions{Overall: map[string]int{}}}
	for name, message := range checks {
		if status.Details == nil {
			status.Details = map[string]cephv1.CephHealthMessage{}
		}
		status.Details[name] = cephv1.CephHealthMessage{Severity: "HEALTH_WARN", Message: message}
	}
	for _, v := range versions {
		status.Versions.Overall[v] = 5
	}
	// The plugin may write the CephCluster meanwhile, as it may Rook's.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cluster cephv1.CephCluster
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}, &cluster); err != nil {
			return err
		}
		cluster.Status.CephStatus = status
		cluster.Status.CephVersion = &cephv1.ClusterVersion{Image: cluster.Spec.CephVersion.Image}
		return env.Client.Status().Update(ctx, &cluster)
	}))
}

func clusterImage(t *testing.T, cfg Config) string {
	t.Helper()
	var cluster cephv1.CephCluster
	require.NoError(t, controlPlane.Env(t).Client.Get(context.Background(), client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}, &cluster))
	return cluster.Spec.CephVersion.Image
}

// oldRook is a release before the plugin's: an official one its line
// upgrades from.
const oldRook = "v1.18.0"

const squid193 = "ceph version 19.2.3 (c92aebb279828e9c3c1f5d24613efca272649e62) squid (stable)"

// TestInstallUpgradesStepByStep: a plugin with a newer Rook chart and a new
// Ceph image, started on a cluster installed by an older one. Each start
// judges the next step, Rook before Ceph, against what the real API server
// holds, and takes none (a step waits for Ceph's PG states, which the
// upgrade controller asks for); a refused step says why; the plan with
// PG states allows the step only when every PG is active+clean; a start
// after a crash at any point judges the same again, so no step is taken
// twice.
func TestInstallUpgradesStepByStep(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	old := testConfigFor(t, "upgrade-steps")
	old.CephImage = "quay.io/ceph/ceph:v19.2.3"
	installedRook(t, old, oldRook)
	_, err := ensureCephCluster(ctx, env.Client, old, discardLog)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = env.Client.Delete(ctx, &cephv1.CephCluster{ObjectMeta: metav1.ObjectMeta{Namespace: old.ClusterNamespace, Name: CephClusterName}})
	})
	cfg := old
	cfg.CephImage = "quay.io/ceph/ceph:v19.2.4"
	charts := &recordingCharts{}
	start := func() upgrade.Plan {
		t.Helper()
		charts.releases = nil
		plan, err := install(ctx, env.Client, charts, cfg, testKubernetesVersion, discardLog)
		require.NoError(t, err)
		return plan
	}

	t.Run("Ceph in HEALTH_ERR: the Rook step is refused and nothing changes", func(t *testing.T) {
		cephReports(t, cfg, "HEALTH_ERR", map[string]string{"MON_DOWN": "2/3 mons down"}, squid193)
		plan := start()
		assert.Equal(t, upgrade.StepRook, plan.Step)
		assert.Equal(t, oldRook, plan.From)
		assert.False(t, plan.Allowed())
		assert.Empty(t, charts.releases, "no helm upgrade")
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.3", clusterImage(t, cfg), "the image is not touched")
		status := plan.Status()
		assert.Equal(t, pluginruntime.PhaseDegraded, status.Phase)
		assert.Contains(t, status.Message, "upgrade of Rook from v1.18.0 to "+RookChartVersion+" refused, nothing changed")
		assert.Contains(t, status.Message, "Health: Ceph reports HEALTH_ERR (MON_DOWN)")
	})

	t.Run("a retirement in progress refuses it too", func(t *testing.T) {
		cephReports(t, cfg, "HEALTH_OK", nil, squid193)
		retirement := &cephv1alpha1.DiskRetirement{ObjectMeta: metav1.ObjectMeta{Name: "upgrade-steps-sdb"}, Spec: cephv1alpha1.DiskRetirementSpec{Disk: "upgrade-steps-sdb"}}
		require.NoError(t, env.Client.Create(ctx, retirement))
		t.Cleanup(func() { _ = env.Client.Delete(ctx, retirement) })
		retirement.Status.Phase = cephv1alpha1.RetirementDraining
		require.NoError(t, env.Client.Status().Update(ctx, retirement))
		plan := start()
		assert.False(t, plan.Allowed())
		assert.Contains(t, plan.Status().Message, "Retirements: retirement upgrade-steps-sdb is in progress")
		assert.Empty(t, charts.releases)

		retirement.Status.Phase = cephv1alpha1.RetirementRetired
		require.NoError(t, env.Client.Status().Update(ctx, retirement))
	})

	t.Run("healthy: Start leaves the Rook step to the upgrade controller, which asks Ceph for its PGs first", func(t *testing.T) {
		plan := start()
		assert.True(t, plan.Passed(), "%+v", plan.Checks)
		assert.False(t, plan.Allowed(), "no PG states read")
		assert.Empty(t, charts.releases, "no helm upgrade at Start")
		status := plan.Status()
		assert.Equal(t, pluginruntime.PhaseRunning, status.Phase)
		assert.Contains(t, status.Message, "asking Ceph whether every PG is active+clean")
	})

	t.Run("PG states from Ceph decide: one backfilling PG refuses, all active+clean allow", func(t *testing.T) {
		plan, err := planOnPGs(ctx, t, cfg, map[string]int{"active+clean": 94, "active+remapped+backfilling": 3})
		require.NoError(t, err)
		assert.False(t, plan.Allowed())
		assert.Contains(t, plan.Status().Message, "Health: not every PG is active+clean (3 active+remapped+backfilling)")
		plan, err = planOnPGs(ctx, t, cfg, map[string]int{"active+clean": 97})
		require.NoError(t, err)
		assert.True(t, plan.Allowed(), "%+v", plan.Checks)
		assert.Equal(t, upgrade.StepRook, plan.Step)
	})

	// The chart's upgrade relabels the operator Deployment.
	installedRook(t, cfg, RookChartVersion)

	t.Run("Rook still rolling its daemons: the Ceph step waits", func(t *testing.T) {
		mon := rookDaemon(t, cfg, "rook-ceph-mon-a", oldRook)
		osd := rookDaemon(t, cfg, "rook-ceph-osd-0", RookChartVersion)
		t.Cleanup(func() { _ = env.Client.Delete(ctx, mon); _ = env.Client.Delete(ctx, osd) })
		plan := start()
		assert.Equal(t, upgrade.StepCeph, plan.Step)
		assert.False(t, plan.Allowed())
		assert.Contains(t, plan.Status().Message, "Settled: Deployments carry rook-version v1.18.0 and "+RookChartVersion)
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.3", clusterImage(t, cfg))
		assert.Len(t, charts.releases, 1, "the release is ensured as on every start (an identical one is left as it is)")
	})

	t.Run("settled and healthy: Start keeps the image; with clean PGs the controller applies it", func(t *testing.T) {
		plan := start()
		assert.Equal(t, upgrade.StepCeph, plan.Step)
		assert.True(t, plan.Passed(), "%+v", plan.Checks)
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.3", clusterImage(t, cfg), "not at Start")
		plan, err := planOnPGs(ctx, t, cfg, map[string]int{"active+clean": 97})
		require.NoError(t, err)
		require.True(t, plan.Allowed(), "%+v", plan.Checks)
		require.NoError(t, (&upgrade.Reconciler{Client: env.Client, Live: env.Client, Targets: upgradeTargets(cfg, testKubernetesVersion)}).ApplyCephImage(ctx, plan))
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", clusterImage(t, cfg))
	})

	t.Run("a restart after both steps takes none", func(t *testing.T) {
		plan := start()
		assert.Empty(t, plan.Step)
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", clusterImage(t, cfg))
	})

	t.Run("a Ceph downgrade is refused", func(t *testing.T) {
		cephReports(t, cfg, "HEALTH_OK", nil, "ceph version 19.2.4 (abc) squid (stable)")
		back := cfg
		back.CephImage = "quay.io/ceph/ceph:v19.2.3"
		plan, err := install(ctx, env.Client, charts, back, testKubernetesVersion, discardLog)
		require.NoError(t, err)
		assert.False(t, plan.Allowed())
		assert.Contains(t, plan.Status().Message, "never downgraded")
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", clusterImage(t, cfg))
	})
}

// rookDaemon makes a Deployment as Rook labels a daemon of the cluster,
// available.
func rookDaemon(t *testing.T, cfg Config, name, rookVersion string) *appsv1.Deployment {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cfg.ClusterNamespace, Labels: map[string]string{
			rook.ClusterLabel: cfg.ClusterNamespace, rook.VersionLabel: rookVersion, rook.CephVersionLabel: "19.2.3-0", "app": name}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "daemon", Image: "quay.io/ceph/ceph:v19.2.3"}}},
			},
		},
	}
	require.NoError(t, env.Client.Create(ctx, d))
	d.Status.ObservedGeneration = d.Generation
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1, 1
	require.NoError(t, env.Client.Status().Update(ctx, d))
	return d
}

// planOnPGs judges the upgrade on what the cluster holds and the PG states
// Ceph gave.
func planOnPGs(ctx context.Context, t *testing.T, cfg Config, pgs map[string]int) (upgrade.Plan, error) {
	t.Helper()
	targets := upgradeTargets(cfg, testKubernetesVersion)
	o, err := upgrade.Gather(ctx, controlPlane.Env(t).Client, targets)
	return upgrade.PlanFrom(o, targets, time.Now(), pgs), err
}
