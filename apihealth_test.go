package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

var (
	refused  = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	degraded = func(msg string) pluginruntime.PluginStatus {
		return pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: msg}
	}
)

func TestAPIHealthStatus(t *testing.T) {
	cases := []struct {
		name   string
		probes []error
		want   pluginruntime.PluginStatus
	}{
		{"no probe yet is running", nil, runningStatus},
		{"one failed probe is not yet an outage", []error{refused}, runningStatus},
		{"two failed probes in a row degrade, naming the error", []error{refused, refused},
			degraded("cannot reach the Kubernetes API server (2 probes in a row failed): " + refused.Error())},
		{"the count keeps growing while the outage lasts", []error{refused, refused, nil, refused, refused, refused},
			degraded("cannot reach the Kubernetes API server (3 probes in a row failed): " + refused.Error())},
		{"one success ends the outage", []error{refused, refused, refused, nil}, runningStatus},
		{"failures apart from each other never degrade", []error{refused, nil, refused, nil, refused}, runningStatus},
		{"the last error is the one reported", []error{refused, errors.New("the server is currently unable to handle the request")},
			degraded("cannot reach the Kubernetes API server (2 probes in a row failed): the server is currently unable to handle the request")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h APIHealth
			for _, err := range tc.probes {
				h = h.Observe(err)
			}
			assert.Equal(t, tc.want, APIHealthStatus(h, apiFailureThreshold))
		})
	}
}

func TestMergeHealth(t *testing.T) {
	apiDown := degraded("cannot reach the Kubernetes API server")
	clusterDown := degraded("storage cluster: mons out of quorum")
	failed := pluginruntime.PluginStatus{Phase: pluginruntime.PhaseFailed, Message: "broken"}
	cephWarns := pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running; Ceph reports HEALTH_WARN (OSD_DOWN: 1 osds down)"}
	cases := []struct {
		name    string
		reports []pluginruntime.PluginStatus
		want    pluginruntime.PluginStatus
	}{
		{"no reports is running", nil, runningStatus},
		{"unset reports count as healthy", []pluginruntime.PluginStatus{{}, {}}, runningStatus},
		{"all healthy is running", []pluginruntime.PluginStatus{runningStatus, runningStatus}, runningStatus},
		{"an unreachable API server wins over a healthy cluster", []pluginruntime.PluginStatus{apiDown, runningStatus}, apiDown},
		{"a failed cluster wins over a reachable API server", []pluginruntime.PluginStatus{runningStatus, clusterDown}, clusterDown},
		{"a cluster report cannot hide the outage before it", []pluginruntime.PluginStatus{apiDown, {}}, apiDown},
		{"two degraded sources say both, in source order", []pluginruntime.PluginStatus{apiDown, clusterDown},
			degraded("cannot reach the Kubernetes API server; storage cluster: mons out of quorum")},
		{"failed is worse than degraded", []pluginruntime.PluginStatus{apiDown, failed}, failed},
		{"Ceph's warnings reach a running status", []pluginruntime.PluginStatus{runningStatus, cephWarns}, cephWarns},
		{"an outage hides Ceph's warnings", []pluginruntime.PluginStatus{apiDown, cephWarns}, apiDown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, MergeHealth(tc.reports...))
		})
	}
}

func TestHealthBoardReportsTheWorseSourceOnlyOnChange(t *testing.T) {
	host := &recordingHost{}
	board := newHealthBoard(host)
	cluster := sourceHost{Host: host, board: board, source: healthSourceCluster}

	cluster.ReportStatus(degraded("storage cluster: mons out of quorum"))
	assert.Empty(t, host.statuses, "nothing is reported before the plugin is ready")
	board.activate()
	assert.Equal(t, degraded("storage cluster: mons out of quorum"), host.last(), "activation reports what the sources said")

	board.report(healthSourceAPI, degraded("cannot reach the Kubernetes API server"))
	assert.Equal(t, degraded("cannot reach the Kubernetes API server; storage cluster: mons out of quorum"), host.last())
	cluster.ReportStatus(runningStatus)
	assert.Equal(t, degraded("cannot reach the Kubernetes API server"), host.last(), "a healthy cluster does not end the outage")
	n := len(host.statuses)
	board.report(healthSourceAPI, degraded("cannot reach the Kubernetes API server"))
	assert.Len(t, host.statuses, n, "an unchanged merged status is not reported again")
	board.report(healthSourceAPI, runningStatus)
	assert.Equal(t, runningStatus, host.last())
}

// scriptedProbe answers with the scripted results in turn, then keeps
// succeeding.
type scriptedProbe struct {
	mu      sync.Mutex
	results []error
}

func (p *scriptedProbe) probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.results) == 0 {
		return nil
	}
	err := p.results[0]
	p.results = p.results[1:]
	return err
}

func TestAPIWatchdogReportsAnOutageAndTheRecovery(t *testing.T) {
	host := &recordingHost{}
	board := newHealthBoard(host)
	board.activate()
	probe := &scriptedProbe{results: []error{nil, refused, refused, refused}}
	w := &apiWatchdog{
		Probe:     probe.probe,
		Interval:  time.Millisecond,
		Threshold: apiFailureThreshold,
		Report:    func(s pluginruntime.PluginStatus) { board.report(healthSourceAPI, s) },
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	require.Eventually(t, func() bool {
		probe.mu.Lock()
		defer probe.mu.Unlock()
		return len(probe.results) == 0 && host.last() == runningStatus
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done

	var phases []pluginruntime.Phase
	for _, s := range host.statuses {
		if len(phases) == 0 || phases[len(phases)-1] != s.Phase {
			phases = append(phases, s.Phase)
		}
	}
	assert.Equal(t, []pluginruntime.Phase{pluginruntime.PhaseRunning, pluginruntime.PhaseDegraded, pluginruntime.PhaseRunning}, phases)
}
