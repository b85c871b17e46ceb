package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// outageRun is one API-server-outage experiment.
type outageRun struct {
	// outages is how many times the kube-apiserver is stopped.
	outages int
	// down is how long it stays down after the plugin reported degraded.
	down time.Duration
	// scenario, nodes and perNode are as in crashRun.
	scenario       string
	nodes, perNode int
	// env is extra FUNP_ settings.
	env map[string]string
}

var outageConfig = Config{OperatorNamespace: "outage-rook", ClusterNamespace: "outage-rook"}

// TestReliabilityAPIServerOutage stops the kube-apiserver while the plugin
// (the real runtime, in this process) converges a scenario, and starts it
// again once the plugin said it is degraded. The plugin does not exit,
// reports degraded while the API server is gone and running after, and
// converges to the state an uninterrupted run reaches, nothing lost. The
// outage is short enough that the plugin keeps its leadership; the soak
// form stays down long enough to lose it.
func TestReliabilityAPIServerOutage(t *testing.T) {
	runOutage(t, outageRun{outages: 1, scenario: "rel", nodes: 3, perNode: 10, env: map[string]string{EnvKubeAPIQPS: "20", EnvKubeAPIBurst: "20"}})
}

// phaseLog polls the plugin's metadata API and keeps every phase change.
type phaseLog struct {
	mu      sync.Mutex
	changes []string
	last    pluginruntime.PluginStatus
}

func (l *phaseLog) follow(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		phase, message, err := pluginStatusAt(ctx, addr)
		if err == nil {
			l.mu.Lock()
			if phase != string(l.last.Phase) {
				l.changes = append(l.changes, phase+": "+message)
			}
			l.last = pluginruntime.PluginStatus{Phase: pluginruntime.Phase(phase), Message: message}
			l.mu.Unlock()
		}
		sleepCtx(ctx, 50*time.Millisecond)
	}
}

func (l *phaseLog) current() pluginruntime.PluginStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

func (l *phaseLog) waitFor(t *testing.T, ctx context.Context, timeout time.Duration, phase pluginruntime.Phase, contains string) {
	t.Helper()
	err := testenv.Eventually(ctx, timeout, func(context.Context) error {
		if got := l.current(); got.Phase != phase || !strings.Contains(got.Message, contains) {
			return fmt.Errorf("plugin status %+v", got)
		}
		return nil
	})
	require.NoError(t, err, "the plugin reports %s", phase)
}

func runOutage(t *testing.T, run outageRun) {
	sc := newScenario(t, run.scenario, run.nodes, run.perNode)
	want := referenceState(t, fmt.Sprintf("%s-%d-%d", run.scenario, run.nodes, run.perNode), sc)
	cp := bareControlPlane(t)
	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	vars := map[string]string{
		EnvOperatorNamespace: outageConfig.OperatorNamespace,
		EnvClusterNamespace:  outageConfig.ClusterNamespace,
		EnvChartRepository:   repo.URL,
		EnvDevInsecureCharts: "true",
		EnvChartDigest:       repo.Digest,
	}
	for k, v := range run.env {
		vars[k] = v
	}
	useHelmHelper(t)
	p := &Plugin{
		definition:       definition.MustParseDefinition(definitionYAML),
		getenv:           func(key string) string { return vars[key] },
		restConfig:       func() (*rest.Config, error) { return configAsPlugin(t, cp), nil },
		metricsAddr:      "0",
		apiProbeInterval: 500 * time.Millisecond,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	logPath := filepath.Join(t.TempDir(), "plugin.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	defer logFile.Close()
	runCtx, stopPlugin := context.WithCancel(ctx)
	exited := make(chan error, 1)
	go func() {
		exited <- pluginruntime.RunContext(runCtx, p,
			pluginruntime.WithListener(ln),
			pluginruntime.WithSignals(),
			pluginruntime.WithEnviron([]string{"FUNDAMENT_CLUSTER_ID=outage", "FUNDAMENT_INSTALL_ID=outage", "FUNDAMENT_ORGANIZATION_ID=outage"}),
			pluginruntime.WithLogOutput(logFile),
			pluginruntime.WithRetryBackoff(500*time.Millisecond, 5*time.Second),
			pluginruntime.WithShutdownTimeout(20*time.Second))
	}()
	t.Cleanup(func() {
		stopPlugin()
		<-exited
		if t.Failed() {
			data, _ := os.ReadFile(logPath)
			t.Logf("plugin log (end):\n%s", tail(string(data), 60))
		}
	})
	phases := &phaseLog{}
	go phases.follow(ctx, ln.Addr().String())
	phases.waitFor(t, ctx, 3*time.Minute, pluginruntime.PhaseRunning, "")

	inv := watchNothingLost(t, cp.Config, outageConfig.ClusterNamespace)
	inv.waitWatching()
	inv.protect(sc.claimed...)
	require.NoError(t, sc.publish(ctx, cp.Client, outageConfig.OperatorNamespace))
	requested := make(chan error, 1)
	go func() { requested <- sc.request(ctx, cp.Client, outageConfig.ClusterNamespace, 10*time.Minute) }()

	for i := range run.outages {
		// Mid-convergence: some Disks published, not all (or, later,
		// pools and consumers still on their way).
		err := testenv.Eventually(ctx, 2*time.Minute, func(ctx context.Context) error {
			var disks cephv1alpha1.DiskList
			if err := cp.Client.List(ctx, &disks); err != nil {
				return err
			}
			if i == 0 && len(disks.Items) == 0 {
				return fmt.Errorf("no Disk yet")
			}
			return nil
		})
		require.NoError(t, err)
		var disks cephv1alpha1.DiskList
		require.NoError(t, cp.Client.List(ctx, &disks))
		t.Logf("outage %d begins with %d of %d Disks published", i+1, len(disks.Items), sc.disks)
		stopAPIServer(t, cp)
		began := time.Now()
		phases.waitFor(t, ctx, time.Minute, pluginruntime.PhaseDegraded, "cannot reach the Kubernetes API server")
		time.Sleep(run.down)
		select {
		case err := <-exited:
			t.Fatalf("the plugin exited during the outage: %v", err)
		default:
		}
		startAPIServer(t, cp)
		t.Logf("outage %d lasted %s", i+1, time.Since(began).Round(100*time.Millisecond))
		phases.waitFor(t, ctx, 3*time.Minute, pluginruntime.PhaseRunning, "")
	}

	require.NoError(t, <-requested, "pools and consumers were created")
	waitState(t, ctx, cp.Client, outageConfig, want, 5*time.Minute)
	phases.waitFor(t, ctx, time.Minute, pluginruntime.PhaseRunning, "")
	select {
	case err := <-exited:
		t.Fatalf("the plugin exited: %v", err)
	default:
	}
	noDuplicateDisks(t, ctx, cp.Client)
	inv.check(ctx)
	phases.mu.Lock()
	t.Logf("phases: %s", strings.Join(phases.changes, " → "))
	phases.mu.Unlock()
	assert.GreaterOrEqual(t, countPrefix(phases.changes, "degraded: "), run.outages, "degraded once per outage")
}

func countPrefix(items []string, prefix string) int {
	n := 0
	for _, s := range items {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
