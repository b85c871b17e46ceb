package pluginruntime_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/console"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

func TestProbes(t *testing.T) {
	p := newTestPlugin()
	rt := startRuntime(t, p, nil)
	host := p.host(t)

	assert.Equal(t, http.StatusOK, rt.get(t, "/livez"), "live from the start")
	assert.Equal(t, http.StatusServiceUnavailable, rt.get(t, "/readyz"), "unready until ReportReady")

	host.ReportReady()

	assert.Equal(t, http.StatusOK, rt.get(t, "/livez"))
	assert.Equal(t, http.StatusOK, rt.get(t, "/readyz"))
}

func TestGetStatusFollowsThePhase(t *testing.T) {
	p := newTestPlugin()
	rt := startRuntime(t, p, nil)
	host := p.host(t)

	assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseInstalling}, rt.status(t), "a plugin starts installing")

	// Each step is a transition the lifecycle allows, in an order it allows.
	steps := []struct {
		name   string
		report func()
		want   pluginruntime.PluginStatus
	}{
		{
			name:   "ReportReady moves installing to running",
			report: host.ReportReady,
			want:   pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning},
		},
		{
			name: "running to degraded with a message",
			report: func() {
				host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "CRDs not yet ready"})
			},
			want: pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded, Message: "CRDs not yet ready"},
		},
		{
			name: "degraded back to running",
			report: func() {
				host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "recovered"})
			},
			want: pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning, Message: "recovered"},
		},
		{
			name: "running to failed",
			report: func() {
				host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseFailed, Message: "invalid configuration"})
			},
			want: pluginruntime.PluginStatus{Phase: pluginruntime.PhaseFailed, Message: "invalid configuration"},
		},
		{
			name: "failed to uninstalling",
			report: func() {
				host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseUninstalling, Message: "cleaning up"})
			},
			want: pluginruntime.PluginStatus{Phase: pluginruntime.PhaseUninstalling, Message: "cleaning up"},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			step.report()
			assert.Equal(t, step.want, rt.status(t))
		})
	}
}

func TestIllegalTransitionsAreRefusedAndLogged(t *testing.T) {
	p := newTestPlugin()
	rt := startRuntime(t, p, nil)
	host := p.host(t)
	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseFailed, Message: "bad config"})
	require.Equal(t, pluginruntime.PhaseFailed, rt.status(t).Phase)

	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning})
	host.ReportReady()
	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseDegraded})
	host.ReportStatus(pluginruntime.PluginStatus{Phase: "sleeping"})

	assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseFailed, Message: "bad config"}, rt.status(t), "failed is left only by uninstalling")
	refusals := rt.logs.records(t, "status change refused")
	require.Len(t, refusals, 3)
	assert.Equal(t, "illegal phase transition failed → running", refusals[0]["error"])
	assert.Equal(t, "WARN", refusals[0]["level"])
	assert.Equal(t, "illegal phase transition failed → degraded", refusals[1]["error"])
	assert.Equal(t, `unknown phase "sleeping"`, refusals[2]["error"])
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantPhase pluginruntime.Phase
		wantRetry bool
	}{
		{name: "a transient error degrades and is retried", err: pluginerrors.NewTransient(errors.New("CRDs not yet ready")), wantPhase: pluginruntime.PhaseDegraded, wantRetry: true},
		{name: "an unclassified error degrades and is retried", err: errors.New("connection refused"), wantPhase: pluginruntime.PhaseDegraded, wantRetry: true},
		{name: "a permanent error fails and is not retried", err: pluginerrors.NewPermanent(errors.New("invalid configuration")), wantPhase: pluginruntime.PhaseFailed, wantRetry: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var attempts atomic.Int32
			release := make(chan struct{})
			p := newTestPlugin()
			p.start = func(ctx context.Context, host pluginruntime.Host) error {
				if attempts.Add(1) == 1 {
					return tc.err
				}
				// The retry waits for the test, so the degraded phase
				// between the attempts can be observed.
				select {
				case <-release:
				case <-ctx.Done():
					return nil
				}
				host.ReportReady()
				<-ctx.Done()
				return nil
			}
			rt := startRuntime(t, p, nil)

			status := rt.waitForPhase(t, tc.wantPhase)
			assert.Equal(t, "start: "+tc.err.Error(), status.Message)

			if !tc.wantRetry {
				time.Sleep(200 * time.Millisecond) // many backoff periods
				assert.Equal(t, int32(1), attempts.Load(), "a permanent error is not retried")
				assert.Equal(t, pluginruntime.PhaseFailed, rt.status(t).Phase)
				return
			}
			require.Eventually(t, func() bool { return attempts.Load() == 2 }, 5*time.Second, 5*time.Millisecond, "Start is retried")
			assert.Equal(t, pluginruntime.PhaseDegraded, rt.status(t).Phase, "degraded until the retry succeeds")
			close(release)
			rt.waitForPhase(t, pluginruntime.PhaseRunning)
			assert.Equal(t, http.StatusOK, rt.get(t, "/readyz"))
		})
	}
}

func TestStartRetriesBackOff(t *testing.T) {
	var calls []time.Time
	callsCh := make(chan time.Time, 10)
	p := newTestPlugin()
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		callsCh <- time.Now()
		return pluginerrors.NewTransient(errors.New("not yet"))
	}
	startRuntime(t, p, nil, pluginruntime.WithRetryBackoff(40*time.Millisecond, 160*time.Millisecond))
	for len(calls) < 5 {
		select {
		case c := <-callsCh:
			calls = append(calls, c)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d attempts", len(calls))
		}
	}
	// Delays 40, 80, 160, 160 ms: doubling, then capped.
	want := []time.Duration{40, 80, 160, 160}
	for i, w := range want {
		gap := calls[i+1].Sub(calls[i])
		assert.GreaterOrEqual(t, gap, w*time.Millisecond, "delay before attempt %d", i+2)
		assert.Less(t, gap, w*time.Millisecond+150*time.Millisecond, "delay before attempt %d", i+2)
	}
}

func TestStartPanicDegradesInsteadOfCrashing(t *testing.T) {
	var attempts atomic.Int32
	p := newTestPlugin()
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		if attempts.Add(1) == 1 {
			panic("nil map")
		}
		host.ReportReady()
		<-ctx.Done()
		return nil
	}
	rt := startRuntime(t, p, nil)
	rt.waitForPhase(t, pluginruntime.PhaseRunning)
	assert.Equal(t, int32(2), attempts.Load())
	require.Len(t, rt.logs.records(t, "plugin panicked"), 1)
}

// reconcilingPlugin adds a Reconciler to testPlugin.
type reconcilingPlugin struct {
	*testPlugin
	reconcile func(ctx context.Context, host pluginruntime.Host) error
}

func (p *reconcilingPlugin) Reconcile(ctx context.Context, host pluginruntime.Host) error {
	return p.reconcile(ctx, host)
}

func TestReconcileLoop(t *testing.T) {
	results := make(chan error)
	var calls atomic.Int32
	p := &reconcilingPlugin{testPlugin: newTestPlugin()}
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		host.ReportReady()
		<-ctx.Done()
		return nil
	}
	// Each Reconcile returns what the test sends next.
	p.reconcile = func(ctx context.Context, host pluginruntime.Host) error {
		calls.Add(1)
		select {
		case err := <-results:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	rt := startRuntime(t, p, []string{"FUNP_RECONCILE_INTERVAL=10ms"})
	rt.waitForPhase(t, pluginruntime.PhaseRunning)

	t.Run("ticks at the configured interval", func(t *testing.T) {
		for range 3 {
			select {
			case results <- nil:
			case <-time.After(5 * time.Second):
				t.Fatal("Reconcile was not called")
			}
		}
		assert.Equal(t, pluginruntime.PhaseRunning, rt.status(t).Phase)
	})
	t.Run("a transient error degrades", func(t *testing.T) {
		results <- pluginerrors.NewTransient(errors.New("CephCluster missing"))
		status := rt.waitForPhase(t, pluginruntime.PhaseDegraded)
		assert.Equal(t, "reconcile: CephCluster missing", status.Message)
	})
	t.Run("a successful reconcile recovers", func(t *testing.T) {
		results <- nil
		assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseRunning}, rt.waitForPhase(t, pluginruntime.PhaseRunning))
	})
	t.Run("a permanent error fails and stops reconciling", func(t *testing.T) {
		results <- pluginerrors.NewPermanent(errors.New("foreign CephCluster in the way"))
		rt.waitForPhase(t, pluginruntime.PhaseFailed)
		before := calls.Load()
		time.Sleep(100 * time.Millisecond) // ten intervals
		assert.Equal(t, before, calls.Load(), "no reconcile while failed")
	})
	t.Run("every reconcile is a span", func(t *testing.T) {
		var reconciles, failed int
		for _, s := range rt.spans.GetSpans() {
			if s.Name == "pluginruntime.Reconcile" {
				reconciles++
				if s.Status.Code == codes.Error {
					failed++
				}
			}
		}
		assert.Equal(t, 6, reconciles)
		assert.Equal(t, 2, failed)
	})
}

func TestStartAndReconcileSpans(t *testing.T) {
	var attempts atomic.Int32
	p := &reconcilingPlugin{testPlugin: newTestPlugin(), reconcile: func(context.Context, pluginruntime.Host) error { return nil }}
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		if attempts.Add(1) == 1 {
			return pluginerrors.NewTransient(errors.New("chart repository unreachable"))
		}
		host.ReportReady()
		return nil // Start may return early; the plugin keeps serving
	}
	rt := startRuntime(t, p, []string{"FUNP_RECONCILE_INTERVAL=10ms"})
	require.Eventually(t, func() bool {
		count := map[string]int{}
		for _, name := range rt.spanNames() {
			count[name]++
		}
		return count["pluginruntime.Start"] == 2 && count["pluginruntime.Reconcile"] > 0
	}, 5*time.Second, 10*time.Millisecond, "both Start attempts and a Reconcile end")
	require.NoError(t, rt.stop(t))

	var starts []string
	for _, s := range rt.spans.GetSpans() {
		if s.Name != "pluginruntime.Start" {
			continue
		}
		starts = append(starts, s.Status.Code.String())
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if s.Status.Code == codes.Error {
			assert.Equal(t, "1", attrs["pluginruntime.attempt"])
			assert.Equal(t, "transient", attrs["pluginruntime.error_class"])
			assert.Equal(t, "chart repository unreachable", s.Status.Description)
		}
		serviceName, _ := s.Resource.Set().Value("service.name")
		assert.Equal(t, "test-plugin", serviceName.AsString(), "service.name comes from the definition")
	}
	assert.Equal(t, []string{"Error", "Unset"}, starts)
	assert.Contains(t, rt.spanNames(), "pluginruntime.Shutdown")
}

// installingPlugin adds an Installer to testPlugin.
type installingPlugin struct {
	*testPlugin
	installs  atomic.Int32
	uninstall func(ctx context.Context) error
}

func (p *installingPlugin) Install(context.Context, pluginruntime.Host) error {
	p.installs.Add(1)
	return nil
}

func (p *installingPlugin) Uninstall(ctx context.Context, _ pluginruntime.Host) error {
	return p.uninstall(ctx)
}

func (p *installingPlugin) Upgrade(context.Context, pluginruntime.Host) error { return nil }

func TestRequestUninstall(t *testing.T) {
	t.Run("runs Uninstall, stops the plugin and keeps serving", func(t *testing.T) {
		uninstallStarted, finishUninstall := make(chan struct{}), make(chan error)
		p := &installingPlugin{testPlugin: newTestPlugin()}
		var once sync.Once
		p.uninstall = func(ctx context.Context) error {
			once.Do(func() { close(uninstallStarted) })
			return <-finishUninstall
		}
		rt := startRuntime(t, p, nil)
		p.host(t).ReportReady()
		startCtx := <-p.startCalls
		assert.Equal(t, int32(1), p.installs.Load(), "Install runs before Start")

		_, err := rt.client.RequestUninstall(context.Background(), connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{}))
		require.NoError(t, err)

		<-uninstallStarted
		assert.Error(t, startCtx.Err(), "Start is stopped before Uninstall runs")
		assert.Equal(t, pluginruntime.PhaseUninstalling, rt.status(t).Phase)

		_, err = rt.client.RequestUninstall(context.Background(), connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{}))
		require.NoError(t, err, "a repeated request is accepted")

		finishUninstall <- pluginerrors.NewTransient(errors.New("release locked"))
		assert.Eventually(t, func() bool {
			status, err := rt.tryStatus()
			return err == nil && strings.Contains(status.Message, "release locked")
		}, 5*time.Second, 5*time.Millisecond, "a transient uninstall error is reported")
		finishUninstall <- nil

		select {
		case <-p.shutdownCtx:
		case <-time.After(5 * time.Second):
			t.Fatal("Shutdown was not called after Uninstall")
		}
		assert.Equal(t, pluginruntime.PluginStatus{Phase: pluginruntime.PhaseUninstalling, Message: "uninstalled; waiting to be removed"}, rt.status(t))
		assert.Equal(t, http.StatusOK, rt.get(t, "/livez"), "the process stays up until the platform removes it")
		require.NoError(t, rt.stop(t))
		assert.Len(t, p.startCalls, 0, "Start is not called again")
	})

	t.Run("a permanent uninstall error fails the plugin", func(t *testing.T) {
		p := &installingPlugin{testPlugin: newTestPlugin()}
		p.uninstall = func(ctx context.Context) error { return pluginerrors.NewPermanent(errors.New("finalizer stuck")) }
		rt := startRuntime(t, p, nil)
		p.host(t)
		_, err := rt.client.RequestUninstall(context.Background(), connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{}))
		require.NoError(t, err)
		status := rt.waitForPhase(t, pluginruntime.PhaseFailed)
		assert.Equal(t, "uninstall: finalizer stuck", status.Message)
	})

	t.Run("without an Installer it is an error", func(t *testing.T) {
		p := newTestPlugin()
		rt := startRuntime(t, p, nil)
		p.host(t).ReportReady()

		_, err := rt.client.RequestUninstall(context.Background(), connect.NewRequest(&pluginmetadatav1.RequestUninstallRequest{}))
		require.Error(t, err)
		assert.Equal(t, connect.CodeUnimplemented, connect.CodeOf(err))
		assert.Contains(t, err.Error(), "does not implement pluginruntime.Installer")
		assert.Equal(t, pluginruntime.PhaseRunning, rt.status(t).Phase, "nothing changed")
		assert.Len(t, p.shutdownCtx, 0, "the plugin was not stopped")
	})
}

func TestStopSignal(t *testing.T) {
	p := newTestPlugin()
	var startErr atomic.Value
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		host.ReportReady()
		<-ctx.Done()
		startErr.Store(context.Cause(ctx))
		return nil
	}
	const timeout = 3 * time.Second
	rt := startRuntime(t, p, nil,
		pluginruntime.WithSignals(syscall.SIGTERM),
		pluginruntime.WithShutdownTimeout(timeout))
	p.host(t)
	require.Equal(t, http.StatusOK, rt.get(t, "/readyz"))

	sent := time.Now()
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))

	var shutdownCtx context.Context
	select {
	case shutdownCtx = <-p.shutdownCtx:
	case <-time.After(timeout):
		t.Fatal("Shutdown was not called after SIGTERM")
	}
	deadline, ok := shutdownCtx.Deadline()
	require.True(t, ok, "Shutdown gets a deadline")
	assert.WithinDuration(t, sent.Add(timeout), deadline, time.Second)
	assert.NotNil(t, startErr.Load(), "Start's context was cancelled first")

	select {
	case err := <-rt.done:
		rt.done <- err
		require.NoError(t, err)
	case <-time.After(timeout):
		t.Fatal("RunContext did not return after SIGTERM")
	}
	assert.Less(t, time.Since(sent), timeout)
	_, err := net.DialTimeout("tcp", rt.addr, time.Second)
	assert.Error(t, err, "the server no longer accepts connections")
}

func TestShutdownDeadline(t *testing.T) {
	p := newTestPlugin()
	p.shutdown = func(ctx context.Context) error {
		select {} // a Shutdown that never returns
	}
	rt := startRuntime(t, p, nil, pluginruntime.WithShutdownTimeout(200*time.Millisecond))
	p.host(t)
	began := time.Now()
	err := rt.stop(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plugin shutdown did not return within the shutdown timeout of 200ms")
	assert.Less(t, time.Since(began), 2*time.Second)
}

func TestShutdownErrorIsReturned(t *testing.T) {
	p := newTestPlugin()
	p.shutdown = func(ctx context.Context) error { return errors.New("release lock") }
	rt := startRuntime(t, p, nil)
	p.host(t)
	err := rt.stop(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "plugin shutdown: release lock")
}

func TestEnvironmentReachesThePlugin(t *testing.T) {
	got := make(chan pluginruntime.Environment, 1)
	p := newTestPlugin()
	p.start = func(ctx context.Context, host pluginruntime.Host) error {
		got <- pluginruntime.EnvironmentFrom(ctx)
		<-ctx.Done()
		return nil
	}
	startRuntime(t, p, []string{"FUNP_REPLICAS=3", "FUNP_RECONCILE_INTERVAL=1m", "UNRELATED=x"})
	env := <-got
	assert.Equal(t, "cluster-1", env.ClusterID)
	assert.Equal(t, "install-1", env.InstallID)
	assert.Equal(t, "org-1", env.OrganizationID)
	assert.Equal(t, time.Minute, env.ReconcileInterval)
	assert.Equal(t, map[string]string{"REPLICAS": "3", "RECONCILE_INTERVAL": "1m", "LOG_LEVEL": "debug"}, env.Config)
}

func TestLogsAreJSONAtTheConfiguredLevel(t *testing.T) {
	tests := []struct {
		level     string
		wantDebug bool
	}{
		{level: "debug", wantDebug: true},
		{level: "info", wantDebug: false},
	}
	for _, tc := range tests {
		t.Run(tc.level, func(t *testing.T) {
			p := newTestPlugin()
			rt := startRuntime(t, p, []string{"FUNP_LOG_LEVEL=" + tc.level})
			p.host(t).Logger().Debug("debug detail")
			started := rt.logs.records(t, "plugin runtime started")
			require.Len(t, started, 1)
			assert.Equal(t, "test-plugin", started[0]["plugin"])
			assert.Equal(t, "cluster-1", started[0]["clusterID"])
			assert.Equal(t, tc.wantDebug, len(rt.logs.records(t, "debug detail")) == 1)
		})
	}
}

// consolePlugin adds a ConsoleProvider to testPlugin.
type consolePlugin struct {
	*testPlugin
	assets http.FileSystem
}

func (p *consolePlugin) ConsoleAssets() http.FileSystem { return p.assets }

func TestConsole(t *testing.T) {
	t.Run("served under /console/", func(t *testing.T) {
		p := &consolePlugin{testPlugin: newTestPlugin(), assets: console.MustFileSystem(fstest.MapFS{
			"console/index.html":      {Data: []byte("<h1>pools</h1>")},
			"console/pools/list.html": {Data: []byte("<table>")},
		}, "console")}
		rt := startRuntime(t, p, nil)
		for path, want := range map[string]string{"/console/": "<h1>pools</h1>", "/console/pools/list.html": "<table>"} {
			res, err := http.Get(rt.baseURL + path)
			require.NoError(t, err)
			body, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			assert.Equal(t, http.StatusOK, res.StatusCode, path)
			assert.Equal(t, want, string(body), path)
		}
	})
	t.Run("absent without a ConsoleProvider", func(t *testing.T) {
		rt := startRuntime(t, newTestPlugin(), nil)
		assert.Equal(t, http.StatusNotFound, rt.get(t, "/console/"))
	})
}

func TestInvalidEnvironmentRefusesToStart(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		wantErr []string
	}{
		{
			name:    "all required ids missing are named at once",
			environ: []string{"FUNP_LOG_LEVEL=info"},
			wantErr: []string{"FUNDAMENT_CLUSTER_ID is required", "FUNDAMENT_INSTALL_ID is required", "FUNDAMENT_ORGANIZATION_ID is required"},
		},
		{
			name:    "an empty id counts as missing",
			environ: []string{"FUNDAMENT_CLUSTER_ID=", "FUNDAMENT_INSTALL_ID=i", "FUNDAMENT_ORGANIZATION_ID=o"},
			wantErr: []string{"FUNDAMENT_CLUSTER_ID is required"},
		},
		{
			name:    "an unknown log level",
			environ: append(append([]string{}, baseEnviron...), "FUNP_LOG_LEVEL=chatty"),
			wantErr: []string{`FUNP_LOG_LEVEL="chatty" is not a log level`},
		},
		{
			name:    "a reconcile interval that is not a duration",
			environ: append(append([]string{}, baseEnviron...), "FUNP_RECONCILE_INTERVAL=5"),
			wantErr: []string{`FUNP_RECONCILE_INTERVAL="5" is not a positive duration`},
		},
		{
			name:    "a zero reconcile interval",
			environ: append(append([]string{}, baseEnviron...), "FUNP_RECONCILE_INTERVAL=0s"),
			wantErr: []string{`FUNP_RECONCILE_INTERVAL="0s" is not a positive duration`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPlugin()
			err := pluginruntime.RunContext(context.Background(), p,
				pluginruntime.WithEnviron(tc.environ),
				pluginruntime.WithAddr("127.0.0.1:0"),
				pluginruntime.WithSignals(),
				pluginruntime.WithLogOutput(io.Discard))
			require.Error(t, err)
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
			assert.Len(t, p.startCalls, 0, "never starts half-configured")
		})
	}
}

// invalidDefinitionPlugin's definition has no name.
type invalidDefinitionPlugin struct{ *testPlugin }

func (invalidDefinitionPlugin) Definition() pluginruntime.PluginDefinition {
	return pluginruntime.PluginDefinition{APIVersion: "fundament.io/v1", Kind: "PluginDefinition"}
}

func TestInvalidDefinitionRefusesToStart(t *testing.T) {
	p := invalidDefinitionPlugin{newTestPlugin()}
	err := pluginruntime.RunContext(context.Background(), p,
		pluginruntime.WithEnviron(baseEnviron), pluginruntime.WithAddr("127.0.0.1:0"),
		pluginruntime.WithSignals(), pluginruntime.WithLogOutput(io.Discard))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metadata.name: Required value")
	assert.Len(t, p.startCalls, 0)
}

func TestPortInUseIsAnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	err = pluginruntime.RunContext(context.Background(), newTestPlugin(),
		pluginruntime.WithEnviron(baseEnviron), pluginruntime.WithAddr(ln.Addr().String()),
		pluginruntime.WithSignals(), pluginruntime.WithLogOutput(io.Discard))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "listen on "+ln.Addr().String())
}

// TestRunExitsWhenClusterIDIsMissing runs Run in a child process (this test
// binary, re-executed) because Run exits the process; only a real exit
// status proves it.
func TestRunExitsWhenClusterIDIsMissing(t *testing.T) {
	if os.Getenv("PLUGINRUNTIME_TEST_RUN_CHILD") == "1" {
		pluginruntime.Run(newTestPlugin(), pluginruntime.WithAddr("127.0.0.1:0"))
		fmt.Println("Run returned")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunExitsWhenClusterIDIsMissing$", "-test.count=1")
	cmd.Env = []string{
		"PLUGINRUNTIME_TEST_RUN_CHILD=1",
		"FUNDAMENT_INSTALL_ID=install-1",
		"FUNDAMENT_ORGANIZATION_ID=org-1",
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the child must exit with an error status; output:\n%s", out)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, string(out), `"level":"ERROR"`)
	assert.Contains(t, string(out), "FUNDAMENT_CLUSTER_ID is required but not set")
	assert.NotContains(t, string(out), "Run returned")
	assert.NotContains(t, string(out), "FUNDAMENT_INSTALL_ID is required", "only what is missing is named")
}

func TestMetadataHandlerOptions(t *testing.T) {
	// An interceptor standing in for auth.Validator.Interceptor.
	deny := connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if req.Header().Get("Authorization") != "Bearer platform" {
				return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("no token"))
			}
			return next(ctx, req)
		}
	})
	rt := startRuntime(t, newTestPlugin(), nil, pluginruntime.WithMetadataHandlerOptions(connect.WithInterceptors(deny)))

	_, err := rt.client.GetStatus(context.Background(), connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
	assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))

	req := connect.NewRequest(&pluginmetadatav1.GetStatusRequest{})
	req.Header().Set("Authorization", "Bearer platform")
	res, err := rt.client.GetStatus(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "installing", res.Msg.GetPhase())
}
