package plugincontroller

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
)

func TestComputeStatus(t *testing.T) {
	running := pluginsv1.PluginInstallationStatus{Phase: pluginsv1.PhaseRunning, Ready: true, Namespace: "plugin-a--b", Message: "ok"}
	tests := []struct {
		name        string
		prev        pluginsv1.PluginInstallationStatus
		obs         Observation
		wantPhase   pluginsv1.Phase
		wantReady   bool
		wantMessage string
		wantReason  string
		wantNS      string
	}{
		{
			name:      "a running plugin is ready",
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: "running", Message: "all good"}},
			wantPhase: pluginsv1.PhaseRunning, wantReady: true, wantMessage: "all good", wantReason: "PluginRunning", wantNS: "plugin-a--b",
		},
		{
			name:      "an installing plugin is not ready yet",
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: "installing"}},
			wantPhase: pluginsv1.PhaseInstalling, wantMessage: "the plugin reports installing", wantReason: "PluginInstalling", wantNS: "plugin-a--b",
		},
		{
			name:      "a degraded plugin is not ready and says why",
			prev:      running,
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: "degraded", Message: "CRDs missing"}},
			wantPhase: pluginsv1.PhaseDegraded, wantMessage: "CRDs missing", wantReason: "PluginDegraded", wantNS: "plugin-a--b",
		},
		{
			name:      "a hash mismatch fails a new installation and deploys nothing",
			obs:       Observation{Problem: &Problem{Reason: ReasonDefinitionHashMismatch, Message: "hashes to x", Permanent: true}},
			wantPhase: pluginsv1.PhaseFailed, wantMessage: "hashes to x", wantReason: ReasonDefinitionHashMismatch,
		},
		{
			name:      "an unreachable plugin keeps its last phase but is not ready",
			prev:      running,
			obs:       Observation{Namespace: "plugin-a--b", Problem: &Problem{Reason: ReasonPluginUnreachable, Message: "connection refused"}},
			wantPhase: pluginsv1.PhaseRunning, wantMessage: "connection refused", wantReason: ReasonPluginUnreachable, wantNS: "plugin-a--b",
		},
		{
			name:      "an unreachable new plugin is installing",
			obs:       Observation{Namespace: "plugin-a--b", Problem: &Problem{Reason: ReasonPluginUnreachable, Message: "no endpoints"}},
			wantPhase: pluginsv1.PhaseInstalling, wantMessage: "no endpoints", wantReason: ReasonPluginUnreachable, wantNS: "plugin-a--b",
		},
		{
			name:      "a plugin's long message is truncated, not refused",
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: "degraded", Message: strings.Repeat("x", 5000)}},
			wantPhase: pluginsv1.PhaseDegraded, wantMessage: strings.Repeat("x", 4075) + "… (925 more bytes)", wantReason: "PluginDegraded", wantNS: "plugin-a--b",
		},
		{
			name:      "a long unknown phase is truncated with its message",
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: strings.Repeat("x", 5000)}},
			wantPhase: pluginsv1.PhaseInstalling, wantMessage: `the plugin reports the unknown phase "` + strings.Repeat("x", 4037) + "… (966 more bytes)", wantReason: ReasonPluginPhaseUnknown, wantNS: "plugin-a--b",
		},
		{
			name:      "an unknown phase is not copied, the CRD would refuse it",
			prev:      running,
			obs:       Observation{Namespace: "plugin-a--b", Plugin: &PluginReport{Phase: "dancing"}},
			wantPhase: pluginsv1.PhaseRunning, wantMessage: `the plugin reports the unknown phase "dancing": `, wantReason: ReasonPluginPhaseUnknown, wantNS: "plugin-a--b",
		},
	}
	now := metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.obs.Generation = 3
			got := ComputeStatus(tc.prev, tc.obs, now)
			assert.Equal(t, tc.wantPhase, got.Phase)
			assert.Equal(t, tc.wantReady, got.Ready)
			assert.Equal(t, tc.wantMessage, got.Message)
			assert.Equal(t, tc.wantNS, got.Namespace)
			assert.Equal(t, int64(3), got.ObservedGeneration)
			cond := meta.FindStatusCondition(got.Conditions, pluginsv1.ConditionReady)
			require.NotNil(t, cond)
			assert.Equal(t, tc.wantReason, cond.Reason)
			assert.Equal(t, tc.wantReady, cond.Status == metav1.ConditionTrue)
			assert.Equal(t, tc.wantMessage, cond.Message)
		})
	}

	t.Run("an unchanged condition keeps its transition time, so a converged poll writes nothing", func(t *testing.T) {
		obs := Observation{Generation: 1, Namespace: "ns", Plugin: &PluginReport{Phase: "running", Message: "ok"}}
		first := ComputeStatus(pluginsv1.PluginInstallationStatus{}, obs, now)
		second := ComputeStatus(first, obs, metav1.NewTime(now.Add(time.Hour)))
		assert.Equal(t, first, second)
	})
}

func TestTruncateMessage(t *testing.T) {
	tests := []struct {
		name    string
		message string
		limit   int
		want    string
	}{
		{name: "a message within the limit is kept", message: "all good", limit: 8, want: "all good"},
		{name: "a longer one ends in how much was cut", message: strings.Repeat("a", 40), limit: 30, want: strings.Repeat("a", 11) + "… (29 more bytes)"},
		{name: "the cut never splits a character", message: strings.Repeat("é", 20), limit: 24, want: "éé… (36 more bytes)"},
		{name: "a limit below the marker keeps only the marker", message: strings.Repeat("a", 40), limit: 5, want: "… (40 more bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := truncateMessage(tc.message, tc.limit)
			assert.Equal(t, tc.want, got)
			assert.True(t, utf8.ValidString(got))
			if len(tc.message) > tc.limit && tc.limit >= len("… (40 more bytes)") {
				assert.LessOrEqual(t, len(got), tc.limit)
			}
		})
	}
}
