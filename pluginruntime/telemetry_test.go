package pluginruntime_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// TestOTLPExportIsConfiguredByTheStandardVariables points the standard
// OTEL_EXPORTER_OTLP_ENDPOINT at a fake collector and expects the runtime's
// spans there, over OTLP/HTTP.
func TestOTLPExportIsConfiguredByTheStandardVariables(t *testing.T) {
	var mu sync.Mutex
	received := map[string]int{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		received[r.URL.Path] += len(body)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_METRICS_EXPORTER", "none")

	p := newTestPlugin()
	rt := startRuntime(t, p, nil)
	p.host(t)
	require.NoError(t, rt.stop(t), "the batched spans are flushed on stop")

	mu.Lock()
	defer mu.Unlock()
	assert.Positive(t, received["/v1/traces"], "spans exported to the collector")
	assert.Zero(t, received["/v1/metrics"], "OTEL_METRICS_EXPORTER=none")
}

func TestUnsupportedExporterIsAnError(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := pluginruntime.RunContext(ctx, newTestPlugin(),
		pluginruntime.WithEnviron(baseEnviron), pluginruntime.WithAddr("127.0.0.1:0"),
		pluginruntime.WithSignals(), pluginruntime.WithLogOutput(io.Discard))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `OTEL_TRACES_EXPORTER="zipkin" is not supported`)
}
