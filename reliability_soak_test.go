//go:build soak

package main

// The long forms of the reliability tests, run by `just soak`
// (go test -tags soak): more kills, longer outages that cost the plugin its
// leadership, a bigger scenario, and the largest node discovery accepts.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// 25 SIGKILLs with leader election on (the default): every restart after a
// kill waits out the dead process's lease (and, after a kill during the
// install, the install lock's) before it writes.
func TestSoakPluginCrashes(t *testing.T) {
	runCrashes(t, crashRun{kills: 25, scenario: "soak", nodes: 4, perNode: 25, maxGap: 8 * time.Second,
		env: []string{"FUNP_KUBE_API_QPS=50", "FUNP_KUBE_API_BURST=50"}})
}

// The same with leader election off, where restarts are immediate and the
// kills come faster.
func TestSoakPluginCrashesWithoutLeaderElection(t *testing.T) {
	runCrashes(t, crashRun{kills: 40, scenario: "soak", nodes: 4, perNode: 25, maxGap: 3 * time.Second,
		env: []string{"FUNP_LEADER_ELECTION=false", "FUNP_KUBE_API_QPS=20", "FUNP_KUBE_API_BURST=20"}})
}

// Three outages of 30 s each: longer than the leader lease's renew
// deadline, so the plugin loses its leadership every time, its manager
// stops, and the runtime starts it again once the API server is back.
func TestSoakAPIServerOutages(t *testing.T) {
	runOutage(t, outageRun{outages: 3, down: 30 * time.Second, scenario: "soak", nodes: 4, perNode: 25,
		env: map[string]string{EnvKubeAPIQPS: "20", EnvKubeAPIBurst: "20"}})
}

// The concurrent writers, five times over.
func TestSoakConcurrentWriters(t *testing.T) {
	for i := range 5 {
		t.Run(fmt.Sprintf("round %d", i+1), TestReliabilityConcurrentWriters)
	}
}

// A node with as many devices as discovery accepts (MaxDiscoveryEntries) is
// published in full, while a small node's change next to it is not held up
// behind it.
func TestSoakLargestNodeIsPublished(t *testing.T) {
	h := newHarness(t)
	h.start()
	ns := h.cfg.OperatorNamespace
	// Minimal entries: realistic ones (about 600 bytes each) would not fit
	// a ConfigMap's 1 MiB at this count.
	createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, "soak-big", manyDevices(MaxDiscoveryEntries)))
	small, err := simulate.DevicesJSON(simulate.MixedDevices("soak-small", 3))
	require.NoError(t, err)
	createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, "soak-small", small))
	h.waitDisks("soak-small", 3)
	err = testenv.Eventually(h.ctx, 10*time.Minute, func(context.Context) error {
		if n := len(h.disksOf("soak-big")); n != MaxDiscoveryEntries {
			return fmt.Errorf("%d of %d Disks", n, MaxDiscoveryEntries)
		}
		return nil
	})
	require.NoError(t, err)
	noDuplicateDisks(t, h.ctx, h.c)
}

// Every malformed input, then the plugin keeps serving a good node: the
// short form's inputs, repeated with every one rewritten ten times.
func TestSoakMalformedDiscoveryRewritten(t *testing.T) {
	h := newHarness(t)
	logs := h.startLogged()
	ns := h.cfg.OperatorNamespace
	good := simulate.MixedDevices("good-a", 4)
	for round := range 10 {
		for _, tc := range badDiscoveries("good-a", good[0]) {
			cm := tc.cm(ns)
			if round > 0 {
				for k := range cm.Data {
					cm.Data[k] += strings.Repeat(" ", round)
				}
				require.NoError(t, h.c.Update(h.ctx, cm), tc.name)
				continue
			}
			ensureReportedNode(t, h, cm)
			require.NoError(t, h.c.Create(h.ctx, cm), tc.name)
		}
	}
	data, err := simulate.DevicesJSON(good)
	require.NoError(t, err)
	createReport(t, h.ctx, h.c, simulate.ConfigMap(ns, "good-a", data))
	h.waitDisks("good-a", 4)
	assert.Contains(t, logs.String(), "ignoring malformed discovery ConfigMap")
}
