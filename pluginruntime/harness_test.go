package pluginruntime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

var testDefinition = definition.MustParseDefinition([]byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata:
  name: test-plugin
  version: v0.1.0
`))

// baseEnviron is what the platform's controller sets, minus anything a test
// adds.
var baseEnviron = []string{
	"FUNDAMENT_CLUSTER_ID=cluster-1",
	"FUNDAMENT_INSTALL_ID=install-1",
	"FUNDAMENT_ORGANIZATION_ID=org-1",
	"FUNP_LOG_LEVEL=debug",
}

// testPlugin is a Plugin whose behaviour each test chooses. It records
// what the runtime did to it.
type testPlugin struct {
	start    func(ctx context.Context, host pluginruntime.Host) error
	shutdown func(ctx context.Context) error

	hosts       chan pluginruntime.Host
	startCalls  chan context.Context
	shutdownCtx chan context.Context
}

func newTestPlugin() *testPlugin {
	return &testPlugin{
		hosts:       make(chan pluginruntime.Host, 100),
		startCalls:  make(chan context.Context, 100),
		shutdownCtx: make(chan context.Context, 1),
	}
}

func (p *testPlugin) Definition() pluginruntime.PluginDefinition { return *testDefinition }

func (p *testPlugin) Start(ctx context.Context, host pluginruntime.Host) error {
	p.hosts <- host
	p.startCalls <- ctx
	if p.start != nil {
		return p.start(ctx, host)
	}
	<-ctx.Done()
	return nil
}

func (p *testPlugin) Shutdown(ctx context.Context) error {
	p.shutdownCtx <- ctx
	if p.shutdown != nil {
		return p.shutdown(ctx)
	}
	return nil
}

// host waits for Start and returns the host it was given.
func (p *testPlugin) host(t *testing.T) pluginruntime.Host {
	t.Helper()
	select {
	case h := <-p.hosts:
		return h
	case <-time.After(5 * time.Second):
		t.Fatal("Start was not called")
		return nil
	}
}

// syncBuffer is a bytes.Buffer the runtime's logger and the test can share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// records returns the JSON log records with the given msg.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "every log line is JSON: %s", line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// running is a runtime started in-process on a free port.
type running struct {
	baseURL string
	addr    string
	client  pluginmetadatav1connect.PluginMetadataServiceClient
	logs    *syncBuffer
	spans   *tracetest.InMemoryExporter
	cancel  context.CancelFunc
	done    chan error
}

// startRuntime runs p with RunContext on 127.0.0.1:0 and waits until it
// answers /livez. Stop signals are off unless opts turn them on, so tests
// cannot stop each other. The runtime is stopped when the test ends.
func startRuntime(t *testing.T, p pluginruntime.Plugin, environ []string, opts ...pluginruntime.Option) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &running{
		addr:  ln.Addr().String(),
		logs:  &syncBuffer{},
		spans: tracetest.NewInMemoryExporter(),
		done:  make(chan error, 1),
	}
	r.baseURL = "http://" + r.addr
	r.client = pluginmetadatav1connect.NewPluginMetadataServiceClient(http.DefaultClient, r.baseURL)

	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	all := append([]pluginruntime.Option{
		pluginruntime.WithListener(ln),
		pluginruntime.WithSignals(),
		pluginruntime.WithEnviron(append(append([]string{}, baseEnviron...), environ...)),
		pluginruntime.WithLogOutput(r.logs),
		pluginruntime.WithRetryBackoff(10*time.Millisecond, 50*time.Millisecond),
		pluginruntime.WithShutdownTimeout(5 * time.Second),
		pluginruntime.WithTracerProviderOptions(sdktrace.WithSyncer(keepSpans{r.spans})),
	}, opts...)
	go func() { r.done <- pluginruntime.RunContext(ctx, p, all...) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("runtime did not stop")
		}
		if t.Failed() {
			t.Logf("runtime log:\n%s", r.logs.String())
		}
	})

	require.Eventually(t, func() bool {
		res, err := http.Get(r.baseURL + "/livez")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 5*time.Second, 10*time.Millisecond, "runtime never served /livez")
	return r
}

// stop ends the runtime as a cancelled context would and returns
// RunContext's result.
func (r *running) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("runtime did not stop")
		return nil
	}
}

func (r *running) get(t *testing.T, path string) int {
	t.Helper()
	res, err := http.Get(r.baseURL + path)
	require.NoError(t, err)
	_ = res.Body.Close()
	return res.StatusCode
}

func (r *running) status(t *testing.T) pluginruntime.PluginStatus {
	t.Helper()
	status, err := r.tryStatus()
	require.NoError(t, err)
	return status
}

func (r *running) tryStatus() (pluginruntime.PluginStatus, error) {
	res, err := r.client.GetStatus(context.Background(), connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
	if err != nil {
		return pluginruntime.PluginStatus{}, err
	}
	return pluginruntime.PluginStatus{Phase: pluginruntime.Phase(res.Msg.GetPhase()), Message: res.Msg.GetMessage()}, nil
}

// waitForPhase polls GetStatus until the phase is want and returns the
// status.
func (r *running) waitForPhase(t *testing.T, want pluginruntime.Phase) pluginruntime.PluginStatus {
	t.Helper()
	var last pluginruntime.PluginStatus
	ok := assert.Eventually(t, func() bool {
		status, err := r.tryStatus()
		last = status
		return err == nil && status.Phase == want
	}, 5*time.Second, 5*time.Millisecond)
	if !ok {
		t.Fatalf("phase never became %s; last status %+v", want, last)
	}
	return last
}

// keepSpans keeps the exported spans readable after the runtime has shut
// its tracer provider down, which would otherwise reset the exporter.
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

// spanNames returns the names of the exported spans.
func (r *running) spanNames() []string {
	var names []string
	for _, s := range r.spans.GetSpans() {
		names = append(names, s.Name)
	}
	return names
}
