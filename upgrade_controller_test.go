package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cephjob"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/upgrade"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	crhelper "github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
)

// TestUpgradeReconcilerCarriesTheUpgradeThrough: a plugin with a newer Rook
// chart and a new Ceph image runs on a cluster its Start could not upgrade
// (Ceph in HEALTH_ERR). With no restart, the upgrade reconciler takes the
// Rook step once Ceph is healthy, follows the new operator's roll, takes
// the Ceph step once the daemons settle, follows that roll, and says so at
// each stage: the plugin's status, the record on the CephCluster the
// console reads, and an Event per stage. Rook's part (relabelling and
// re-imaging the daemons, copying Ceph's health into the CephCluster) is
// played by the test; the API server is real.
func TestUpgradeReconcilerCarriesTheUpgradeThrough(t *testing.T) {
	h := newHarness(t)
	old := h.cfg
	cfg := old
	cfg.CephImage = "quay.io/ceph/ceph:v19.2.4"
	installedRook(t, old, oldRook)
	mon := rookDaemon(t, old, "rook-ceph-mon-a", oldRook)
	osd := rookDaemon(t, old, "rook-ceph-osd-0", oldRook)
	cephReports(t, old, "HEALTH_ERR", map[string]string{"MON_DOWN": "1/3 mons down"}, squid193)

	var rookSteps atomic.Int32
	host := &recordingHost{}
	restCfg := configAsPlugin(t, h.env)
	scheme, err := newScheme()
	require.NoError(t, err)
	mgr, err := newManager(restCfg, scheme, cfg, host, "0", "")
	require.NoError(t, err)
	r := &upgrade.Reconciler{
		Client: mgr.GetClient(), Live: mgr.GetAPIReader(), Targets: upgradeTargets(cfg, testKubernetesVersion), Host: host,
		Recorder: crhelper.BoundedRecorder(mgr.GetEventRecorder("ceph-rook")),
		// What the chart's upgrade leaves: the operator Deployment relabelled.
		TakeRookStep: func(context.Context) error {
			rookSteps.Add(1)
			installedRook(t, cfg, RookChartVersion)
			return nil
		},
	}
	require.NoError(t, r.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(h.ctx)
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, mgr.Start(ctx)) })
	// Ceph's side of the plugin's Ceph Jobs: the PG states asked before
	// each step (no OSDs: no PGs, nothing unclean).
	ceph := &simulate.Ceph{Client: controlPlane.Env(t).Client, Namespace: cfg.ClusterNamespace}
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := ceph.Step(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("simulated Ceph: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })

	recorded := func() upgrade.State {
		var cluster cephv1.CephCluster
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}, &cluster))
		var s upgrade.State
		if raw, ok := cluster.Annotations[cephv1alpha1.UpgradeAnnotation]; ok {
			require.NoError(t, json.Unmarshal([]byte(raw), &s))
		}
		return s
	}
	waitFor := func(what string, stage upgrade.Stage, step upgrade.Step, reason string) upgrade.State {
		t.Helper()
		var s upgrade.State
		h.eventually(what, func() error {
			if s = recorded(); s.Stage != stage || s.Step != step {
				return fmt.Errorf("recorded %+v", s)
			}
			return clusterEvent(h, cfg, reason, string(step))
		})
		if stage == upgrade.StageRolling || stage == upgrade.StageWaiting {
			assert.NotNil(t, s.Since, "a roll or a wait is dated, for its stall")
		}
		s.Since = nil
		return s
	}

	// Refused: nothing changes, and the plugin says why.
	s := waitFor("the Rook step refused", upgrade.StageRefused, upgrade.StepRook, "UpgradeRefused")
	assert.Equal(t, oldRook, s.From)
	assert.Equal(t, RookChartVersion, s.To)
	assert.Equal(t, pluginruntime.PhaseDegraded, host.last().Phase)
	assert.Contains(t, host.last().Message, "Health: Ceph reports HEALTH_ERR (MON_DOWN)")
	assert.Zero(t, rookSteps.Load())
	assert.Equal(t, old.CephImage, clusterImage(t, cfg))

	// Healthy: the Rook step is taken, and the new operator's roll followed.
	cephReports(t, cfg, "HEALTH_OK", nil, squid193)
	s = waitFor("the Rook roll under way", upgrade.StageRolling, upgrade.StepRook, "Upgrading")
	assert.Equal(t, int32(1), rookSteps.Load())
	assert.Equal(t, upgrade.State{Stage: upgrade.StageRolling, Step: upgrade.StepRook, From: oldRook, To: RookChartVersion, Total: 2,
		Pending: []string{"rook-ceph-mon-a", "rook-ceph-osd-0"}}, s)
	assert.Equal(t, pluginruntime.PhaseRunning, host.last().Phase)
	assert.Contains(t, host.last().Message, "upgrading Rook from "+oldRook+" to "+RookChartVersion+": 0 of 2 daemons on it")
	assert.Equal(t, old.CephImage, clusterImage(t, cfg), "never Rook and Ceph at once")

	// The new operator rewrites every daemon: the Ceph step follows, with
	// no restart of the plugin.
	rollDaemon(t, mon, RookChartVersion, old.CephImage)
	rollDaemon(t, osd, RookChartVersion, old.CephImage)
	cephReports(t, cfg, "HEALTH_OK", nil, squid193) // Rook's status refresh wakes the reconciler, as each minute
	s = waitFor("the Ceph roll under way", upgrade.StageRolling, upgrade.StepCeph, "Upgrading")
	assert.Equal(t, cfg.CephImage, clusterImage(t, cfg))
	assert.Equal(t, upgrade.State{Stage: upgrade.StageRolling, Step: upgrade.StepCeph, From: old.CephImage, To: cfg.CephImage, Total: 2,
		Pending: []string{"rook-ceph-mon-a", "rook-ceph-osd-0"}}, s)
	assert.Equal(t, int32(1), rookSteps.Load(), "the Rook step is not taken twice")

	// One daemon at a time, as Rook rolls them; then done.
	rollDaemon(t, mon, RookChartVersion, cfg.CephImage)
	cephReports(t, cfg, "HEALTH_OK", nil, squid193)
	h.eventually("one daemon done", func() error {
		if s := recorded(); s.Done != 1 {
			return fmt.Errorf("recorded %+v", s)
		}
		return nil
	})
	rollDaemon(t, osd, RookChartVersion, cfg.CephImage)
	cephReports(t, cfg, "HEALTH_OK", nil, "ceph version 19.2.4 (abc) squid (stable)")
	s = waitFor("the upgrade done", upgrade.StageDone, upgrade.StepCeph, "Upgraded")
	assert.Equal(t, upgrade.State{Stage: upgrade.StageDone, Step: upgrade.StepCeph, From: old.CephImage, To: cfg.CephImage, Done: 2, Total: 2}, s)
	h.eventually("the plugin's status has no upgrade in it", func() error {
		if last := host.last(); last.Phase != "" {
			return fmt.Errorf("status %+v", last)
		}
		return nil
	})
}

// rollDaemon does to a daemon Deployment what Rook's operator and the
// Deployment controller do in a roll: the new labels and image, then every
// replica updated and available.
func rollDaemon(t *testing.T, d *appsv1.Deployment, rookVersion, image string) {
	t.Helper()
	env := controlPlane.Env(t)
	ctx := context.Background()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		d.Labels[rook.VersionLabel] = rookVersion
		d.Spec.Template.Spec.Containers[0].Image = image
		return env.Client.Update(ctx, d)
	}))
	d.Status.ObservedGeneration = d.Generation
	d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1, 1, 1
	require.NoError(t, env.Client.Status().Update(ctx, d))
}

// clusterEvent finds an Event of the reason about the harness's CephCluster
// whose note names the step.
func clusterEvent(h *harness, cfg Config, reason string, step string) error {
	var list eventsv1.EventList
	if err := h.c.List(h.ctx, &list, client.InNamespace(cfg.ClusterNamespace)); err != nil {
		return err
	}
	var seen []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "CephCluster" && e.Regarding.Name == CephClusterName {
			if e.Reason == reason && strings.Contains(e.Note, step) {
				return nil
			}
			seen = append(seen, e.Reason)
		}
	}
	return fmt.Errorf("no %s Event about the CephCluster; seen %s", reason, strings.Join(seen, ", "))
}

// TestUpgradeReadsThePGJobItStartedAfterARestart: before a step, the
// upgrade names its PG-states Job on the CephCluster and only then creates
// it; a plugin that restarts while the Job runs reads that Job's answer and
// takes the step on it, starting no second Job, and takes the name off
// once the Job is read and deleted.
func TestUpgradeReadsThePGJobItStartedAfterARestart(t *testing.T) {
	h := newHarness(t)
	cfg := h.cfg
	installedRook(t, cfg, oldRook)
	cephReports(t, cfg, "HEALTH_OK", nil, squid193)
	rookSteps := 0
	reconciler := func() *upgrade.Reconciler {
		return &upgrade.Reconciler{
			Client: h.c, Live: h.c, Targets: upgradeTargets(cfg, testKubernetesVersion), Host: &recordingHost{},
			Recorder: events.NewFakeRecorder(10), Clock: clock.RealClock{},
			TakeRookStep: func(context.Context) error {
				rookSteps++
				installedRook(t, cfg, RookChartVersion)
				return nil
			},
		}
	}
	pgJob := func() string {
		var cluster cephv1.CephCluster
		require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}, &cluster))
		return cluster.Annotations[cephv1alpha1.UpgradePGJobAnnotation]
	}

	_, err := reconciler().Reconcile(h.ctx, reconcile.Request{})
	require.NoError(t, err)
	asked := pgJob()
	require.NotEmpty(t, asked, "the Job is named on the CephCluster")
	var job batchv1.Job
	require.NoError(t, h.c.Get(h.ctx, client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: asked}, &job), "and created")
	assert.Zero(t, rookSteps, "no step before Ceph answers")

	// The plugin restarts; meanwhile Ceph answers the Job.
	ceph := &simulate.Ceph{Client: h.c, Namespace: cfg.ClusterNamespace}
	require.NoError(t, ceph.Step(h.ctx))
	_, err = reconciler().Reconcile(h.ctx, reconcile.Request{})
	require.NoError(t, err)
	assert.Equal(t, 1, rookSteps, "the restarted plugin takes the step on the answer of the Job the first one started")
	assert.Empty(t, pgJob(), "the name goes once the Job was read")
	var jobs batchv1.JobList
	require.NoError(t, h.c.List(h.ctx, &jobs, client.InNamespace(cfg.ClusterNamespace), client.MatchingLabels{cephjob.VerbLabel: string(cephjob.VerbPGStates)}))
	assert.Empty(t, jobs.Items, "no second Job was started, and the one read is deleted")
}
