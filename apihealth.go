package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// The plugin's phase has more than one source: whether the plugin can reach
// the API server at all (the watchdog below) and how the storage cluster is
// (clusterHealthReconciler). Each reports on its own; the runtime is told the
// worse of the latest reports, so a healthy CephCluster event cannot hide an
// unreachable API server and a returning API server cannot hide a failed
// cluster.

// Health sources, in the order their messages are joined when several are
// degraded at once.
const (
	healthSourceAPI     = "api"
	healthSourceCluster = "cluster"
	healthSourceUpgrade = "upgrade"
)

// runningStatus is the plugin's status when every source is healthy.
var runningStatus = pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "rook-ceph storage plugin running"}

// Defaults of the API watchdog: a probe every apiProbeInterval (each bounded
// by the same duration), and degraded after apiFailureThreshold failures in
// a row, so that one slow answer during a leader change is not an outage.
const (
	defaultAPIProbeInterval = 5 * time.Second
	apiFailureThreshold     = 2
)

// APIHealth is what the watchdog has learnt from its probes so far.
type APIHealth struct {
	// Failures counts the failed probes since the last one that succeeded.
	Failures int
	// LastError is the last failed probe's error.
	LastError string
}

// Observe folds one probe result into h: a success forgets every failure.
func (h APIHealth) Observe(probeErr error) APIHealth {
	if probeErr == nil {
		return APIHealth{}
	}
	return APIHealth{Failures: h.Failures + 1, LastError: probeErr.Error()}
}

// APIHealthStatus is the plugin status that h implies: degraded, naming the
// error, once threshold probes in a row have failed; running otherwise.
func APIHealthStatus(h APIHealth, threshold int) pluginruntime.PluginStatus {
	if h.Failures < max(threshold, 1) {
		return runningStatus
	}
	return pluginruntime.PluginStatus{
		Phase:   pluginruntime.PhaseDegraded,
		Message: fmt.Sprintf("cannot reach the Kubernetes API server (%d probes in a row failed): %s", h.Failures, h.LastError),
	}
}

// severity orders the phases a health source reports; higher is worse.
func severity(p pluginruntime.Phase) int {
	switch p {
	case pluginruntime.PhaseRunning:
		return 0
	case pluginruntime.PhaseDegraded:
		return 1
	case pluginruntime.PhaseFailed:
		return 2
	}
	return 0
}

// MergeHealth is the status the sources' reports add up to: the worst phase
// wins, and when several sources share it their messages are joined in the
// order given; a running source's message counts only when it says more
// than runningStatus (Ceph's warnings). No report at all is running.
func MergeHealth(reports ...pluginruntime.PluginStatus) pluginruntime.PluginStatus {
	worst := runningStatus
	var messages []string
	for _, r := range reports {
		if r.Phase == "" {
			continue
		}
		switch s := severity(r.Phase); {
		case s > severity(worst.Phase):
			worst, messages = r, []string{r.Message}
		case s == severity(worst.Phase) && (s > 0 || r.Message != runningStatus.Message):
			messages = append(messages, r.Message)
		}
	}
	if len(messages) == 0 {
		return runningStatus
	}
	return pluginruntime.PluginStatus{Phase: worst.Phase, Message: strings.Join(messages, "; ")}
}

// healthBoard keeps each source's latest report and tells the runtime the
// merged status when it changes. Until activate (the manager runs and the
// plugin reported ready) it only collects.
type healthBoard struct {
	host pluginruntime.Host

	mu      sync.Mutex
	reports map[string]pluginruntime.PluginStatus
	active  bool
	sent    pluginruntime.PluginStatus
}

func newHealthBoard(host pluginruntime.Host) *healthBoard {
	return &healthBoard{host: host, reports: map[string]pluginruntime.PluginStatus{}}
}

// report records a source's status.
func (b *healthBoard) report(source string, status pluginruntime.PluginStatus) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reports[source] = status
	b.flushLocked(false)
}

// activate starts telling the runtime, with the merged status as it is now.
func (b *healthBoard) activate() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = true
	b.flushLocked(true)
}

func (b *healthBoard) flushLocked(force bool) {
	if !b.active {
		return
	}
	merged := MergeHealth(b.reports[healthSourceAPI], b.reports[healthSourceCluster], b.reports[healthSourceUpgrade])
	if !force && merged == b.sent {
		return
	}
	b.sent = merged
	b.host.ReportStatus(merged)
}

// sourceHost is the runtime's Host as one health source sees it: its
// ReportStatus goes through the board.
type sourceHost struct {
	pluginruntime.Host
	board  *healthBoard
	source string
}

func (h sourceHost) ReportStatus(status pluginruntime.PluginStatus) {
	h.board.report(h.source, status)
}

// apiWatchdog probes the API server every Interval and reports the plugin
// degraded while it cannot be reached. The manager's own clients retry
// quietly, so without it an outage would show nowhere but in the logs.
type apiWatchdog struct {
	Probe     func(context.Context) error
	Interval  time.Duration
	Threshold int
	Report    func(pluginruntime.PluginStatus)
	Logger    *slog.Logger
}

// Run probes until ctx ends.
func (w *apiWatchdog) Run(ctx context.Context) {
	ticker := time.NewTicker(w.Interval)
	defer ticker.Stop()
	var health APIHealth
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		probeCtx, cancel := context.WithTimeout(ctx, w.Interval)
		err := w.Probe(probeCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		before := APIHealthStatus(health, w.Threshold).Phase
		health = health.Observe(err)
		status := APIHealthStatus(health, w.Threshold)
		switch {
		case before != status.Phase && status.Phase == pluginruntime.PhaseDegraded:
			w.Logger.Error("lost the Kubernetes API server", "error", health.LastError, "failedProbes", health.Failures)
		case before != status.Phase:
			w.Logger.Info("the Kubernetes API server is reachable again")
		}
		w.Report(status)
	}
}

// readyzProbe asks the API server's /readyz, which fails as well when the
// API server runs but cannot reach etcd.
func readyzProbe(restCfg *rest.Config) (func(context.Context) error, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("API server probe: %w", err)
	}
	rc := dc.RESTClient()
	return func(ctx context.Context) error {
		return rc.Get().AbsPath("/readyz").Do(ctx).Error()
	}, nil
}
