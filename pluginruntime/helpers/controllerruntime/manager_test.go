package controllerruntime_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
)

// controlPlane is the package's API server, started by the first test that needs it.
var controlPlane = testenv.NewShared(testenv.Options{})

func TestMain(m *testing.M) { controlPlane.Main(m) }

// host is the part of pluginruntime.Host the helper uses: the logger.
type host struct {
	pluginruntime.Host
	logger *slog.Logger
}

func (h host) Logger() *slog.Logger { return h.logger }

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestNewManager(t *testing.T) {
	env := controlPlane.Env(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	h := host{logger: slog.New(slog.NewJSONHandler(logs, nil)).With("plugin", "test-plugin")}
	metricsAddr := freeAddr(t)

	mgr, err := controllerruntime.NewManager(env.Config, h, manager.Options{
		Scheme:  env.Scheme,
		Metrics: metricsserver.Options{BindAddress: metricsAddr},
	})
	require.NoError(t, err)

	ns := "mgr-" + rand.String(5)
	// Controller names are unique per process (they label metrics).
	name := "settings-" + rand.String(5)
	reconciled := make(chan reconcile.Request, 10)
	require.NoError(t, ctrl.NewControllerManagedBy(mgr).
		Named(name).
		For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			if req.Namespace == ns {
				reconciled <- req
			}
			return reconcile.Result{}, nil
		})))
	started := make(chan error, 1)
	go func() { started <- mgr.Start(ctx) }()

	require.NoError(t, env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	require.NoError(t, env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}))
	select {
	case req := <-reconciled:
		assert.Equal(t, "settings", req.Name)
	case err := <-started:
		t.Fatalf("manager stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the controller never reconciled")
	}

	t.Run("logs through the runtime's logger", func(t *testing.T) {
		var found bool
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"msg":"Starting Controller"`) {
				assert.Contains(t, line, `"plugin":"test-plugin"`)
				if strings.Contains(line, `"controller":"`+name+`"`) {
					found = true
				}
			}
		}
		assert.True(t, found, "controller-runtime's startup is logged as JSON:\n%s", logs.String())
	})

	t.Run("serves metrics on its own port", func(t *testing.T) {
		var body string
		require.Eventually(t, func() bool {
			res, err := http.Get("http://" + metricsAddr + "/metrics")
			if err != nil {
				return false
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			body = string(b)
			return res.StatusCode == http.StatusOK
		}, 10*time.Second, 50*time.Millisecond)
		assert.Contains(t, body, `controller_runtime_reconcile_total{controller="`+name+`",result="success"}`)
		// The manager's own list and watch went through the client.
		assert.Regexp(t, `rest_client_request_duration_seconds_count\{verb="GET"\} [1-9]`, body, "where a request's time goes: the API server")
		assert.Regexp(t, `rest_client_rate_limiter_duration_seconds_count\{verb="GET"\} [1-9]`, body, "and the client's rate limiter")
	})

	cancel()
	select {
	case err := <-started:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("manager did not stop")
	}
}
