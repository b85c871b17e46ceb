package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

func TestPluginStatusForCluster(t *testing.T) {
	cases := []struct {
		name   string
		status map[string]any
		want   pluginruntime.PluginStatus
	}{
		{"no status yet is running", nil, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}},
		{"a healthy cluster is running", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_OK"}},
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}},
		{"HEALTH_WARN is still running", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_WARN"}},
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}},
		{"Failure degrades with the cluster's message", map[string]any{"phase": "Failure", "message": "failed to create cluster: mons down"},
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "storage cluster: failed to create cluster: mons down"}},
		{"HEALTH_ERR without a message names phase and health", map[string]any{"phase": "Ready", "ceph": map[string]any{"health": "HEALTH_ERR"}},
			pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: `storage cluster: CephCluster rook-ceph/rook-ceph reports phase "Ready", health "HEALTH_ERR"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cluster := &unstructured.Unstructured{Object: map[string]any{}}
			cluster.SetNamespace("rook-ceph")
			cluster.SetName("rook-ceph")
			if tc.status != nil {
				cluster.Object["status"] = tc.status
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
