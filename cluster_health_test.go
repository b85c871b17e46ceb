package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

func TestPluginStatusForCluster(t *testing.T) {
	cases := []struct {
		name     string
		status   map[string]any
		deleting bool
		want     pluginruntime.PluginStatus
	}{
		{"no status yet is running", nil, false, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}},
		{"a healthy cluster is running", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_OK"}}, false,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}},
		{"HEALTH_WARN is still running, and says so", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_WARN"}}, false,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running; Ceph reports HEALTH_WARN"}},
		{"HEALTH_WARN names Ceph's checks, sorted, with their messages", map[string]any{"phase": "Ready", "ceph": map[string]any{
			"health": "HEALTH_WARN",
			"details": map[string]any{
				"PG_DEGRADED": map[string]any{"message": "Degraded data redundancy: 40/120 objects degraded (33.333%), 12 pgs degraded", "severity": "HEALTH_WARN"},
				"OSD_DOWN":    map[string]any{"message": "2 osds down", "severity": "HEALTH_WARN"},
			},
		}}, false,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running; Ceph reports HEALTH_WARN " +
				"(OSD_DOWN: 2 osds down; PG_DEGRADED: Degraded data redundancy: 40/120 objects degraded (33.333%), 12 pgs degraded)"}},
		{"Failure degrades with the cluster's message", map[string]any{"phase": "Failure", "message": "failed to create cluster: mons down"}, false,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "storage cluster: failed to create cluster: mons down"}},
		{"HEALTH_ERR without a message names phase and health", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_ERR"}}, false,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: `storage cluster: CephCluster rook-ceph/rook-ceph reports phase "Ready", health "HEALTH_ERR"`}},
		{"a healthy cluster being deleted degrades, whatever its health", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_OK"}}, true,
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "storage cluster: CephCluster rook-ceph/rook-ceph is being deleted (Rook holds it while pools, filesystems or object stores use it); once gone it is not created again"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster := &unstructured.Unstructured{Object: map[string]any{}}
			cluster.SetNamespace("rook-ceph")
			cluster.SetName("rook-ceph")
			if tc.status != nil {
				cluster.Object["status"] = tc.status
			}
			if tc.deleting {
				cluster.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
			}
			assert.Equal(t, tc.want, PluginStatusForCluster(cluster))
		})
	}
}

func TestPluginStatusFollowsTheCephCluster(t *testing.T) {
	h := newHarness(t)
	h.start()
	cluster := h.cluster()
	setStatus := func(status string) {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"status":`+status+`}`))
		if err := h.c.Status().Patch(h.ctx, cluster, patch); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(`{"phase":"Failure","message":"mons out of quorum"}`)
	h.eventually("the plugin is degraded", func() error {
		if got := h.host.last(); got.Phase != pluginruntime.PhaseDegraded || got.Message != "storage cluster: mons out of quorum" {
			return fmt.Errorf("plugin status %+v", got)
		}
		return nil
	})
	setStatus(`{"phase":"Ready","message":"Cluster created successfully","ceph":{"health":"HEALTH_OK"}}`)
	h.eventually("the plugin runs again", func() error {
		if got := h.host.last(); got.Phase != pluginruntime.PhaseRunning {
			return fmt.Errorf("plugin status %+v", got)
		}
		return nil
	})
}

// A deleted CephCluster is loud and not created again; its return is
// noticed at once (issue 16, defect 10). Rook would block the deletion
// while its CephBlockPool exists (a finalizer, pkg/operator/ceph/cluster/
// dependents.go); envtest runs no Rook, so the CephCluster goes at once,
// as it does once the consumers are gone.
func TestADeletedCephClusterIsLoudNotRecreatedAndItsReturnIsImmediate(t *testing.T) {
	h := newHarness(t)
	h.start()
	pool := h.withPooledNodes("gone", 1)
	bs := &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: "gone-block"}}
	h.createConsumer(bs)
	h.waitPhase(bs, func() cephv1alpha1.StorageStatus { return bs.Status }, cephv1alpha1.StorageProvisioning)

	original := h.cluster()
	require.NoError(t, h.c.Delete(h.ctx, original))
	t.Run("the plugin, the pools and the consumers say the CephCluster is gone", func(t *testing.T) {
		h.eventually("the plugin is degraded", func() error {
			if s := h.host.last(); s.Phase != pluginruntime.PhaseDegraded || !strings.Contains(s.Message, "was deleted and is not created again") {
				return fmt.Errorf("plugin status %+v", s)
			}
			return nil
		})
		h.eventually("the pool is Degraded: NoCephCluster", func() error {
			return poolReason(h, pool, ReasonNoCephCluster)
		})
		h.eventually("the BlockStorage is Degraded: NoCephCluster", func() error {
			return consumerReason(h, bs, cephv1alpha1.StorageDegraded, ReasonNoCephCluster)
		})
	})
	t.Run("a restart does not create a new cluster on the old one's disks", func(t *testing.T) {
		created, err := ensureCephCluster(h.ctx, h.c, h.cfg, discardLog)
		require.NoError(t, err)
		assert.False(t, created)
		err = h.c.Get(h.ctx, client.ObjectKeyFromObject(original), &cephv1.CephCluster{})
		assert.True(t, apierrors.IsNotFound(err), "no CephCluster was created: %v", err)
	})

	// Long enough for a consumer retrying with exponential backoff to be
	// waiting longer than the recovery is allowed to take.
	time.Sleep(10 * time.Second)
	restored := BootstrapCephCluster(h.cfg)
	restored.Spec.Storage = original.Spec.Storage
	restored.Annotations = original.Annotations
	require.NoError(t, h.c.Create(h.ctx, restored))
	t.Run("restoring it recovers everything at once", func(t *testing.T) {
		recovered := func(what string, cond func() error) {
			t.Helper()
			require.NoError(t, testenv.Eventually(h.ctx, 3*time.Second, func(context.Context) error { return cond() }), what)
		}
		recovered("the BlockStorage provisions again", func() error {
			return consumerReason(h, bs, cephv1alpha1.StorageProvisioning, ReasonProvisioning)
		})
		recovered("the pool is Ready", func() error { return h.poolPhase(pool, cephv1alpha1.DiskPoolReady) })
		recovered("the plugin runs", func() error {
			if s := h.host.last(); s.Phase != pluginruntime.PhaseRunning {
				return fmt.Errorf("plugin status %+v", s)
			}
			return nil
		})
	})
}

func poolReason(h *harness, pool *cephv1alpha1.DiskPool, reason string) error {
	if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(pool), pool); err != nil {
		return err
	}
	cond := meta.FindStatusCondition(pool.Status.Conditions, cephv1alpha1.ConditionReady)
	if pool.Status.Phase != cephv1alpha1.DiskPoolDegraded || cond == nil || cond.Reason != reason {
		return fmt.Errorf("pool status %+v", pool.Status)
	}
	return nil
}

func consumerReason(h *harness, obj consumerObject, phase cephv1alpha1.StoragePhase, reason string) error {
	if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	s := obj.StorageStatus()
	cond := meta.FindStatusCondition(s.Conditions, cephv1alpha1.ConditionReady)
	if s.Phase != phase || cond == nil || cond.Reason != reason {
		return fmt.Errorf("%s status %+v", obj.GetName(), s)
	}
	return nil
}
