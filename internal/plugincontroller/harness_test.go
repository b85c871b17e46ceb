package plugincontroller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// testPollInterval is short so status follows the plugin within a test.
const testPollInterval = 200 * time.Millisecond

// controllerHarness is one running plugin controller: its own manager on
// the shared control plane, a definitions directory, and a table of where
// each plugin namespace's metadata API listens (in place of cluster DNS).
type controllerHarness struct {
	definitionsDir string
	// org is unique per harness, so a test run again on the same control
	// plane (-count) does not meet its earlier namespaces, which stay
	// Terminating without a namespace controller.
	org string
	// tokens is the signing key of the running controller.
	tokens *TokenSigner
	// stop ends the running controller.
	stop func()

	mu         sync.Mutex
	pluginURLs map[string]string
}

// harnesses counts the controllers started in this process.
var harnesses atomic.Int64

// startController runs the controller until the test ends.
func startController(t *testing.T) *controllerHarness {
	t.Helper()
	h := &controllerHarness{
		definitionsDir: t.TempDir(),
		org:            fmt.Sprintf("acme%d", harnesses.Add(1)),
		tokens:         newTestSigner(t),
		pluginURLs:     map[string]string{},
	}
	h.stop = h.startManager(t)
	// Registered before any installation's cleanup, so it runs after
	// them: the installations are deleted while a controller still runs.
	t.Cleanup(func() { h.stop() })
	return h
}

// restart stops the controller and starts another signing with tokens, as
// a restart after the signing key Secret was replaced would.
func (h *controllerHarness) restart(t *testing.T, tokens *TokenSigner) {
	t.Helper()
	h.stop()
	h.tokens = tokens
	h.stop = h.startManager(t)
}

// startManager runs a controller signing with h.tokens and returns what
// stops it.
func (h *controllerHarness) startManager(t *testing.T) func() {
	t.Helper()
	env := controlPlane.Env(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:     env.Scheme,
		Cache:      CacheOptions(),
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: ctrlconfig.Controller{SkipNameValidation: ptrTo(true)},
	})
	require.NoError(t, err)
	r := &Reconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Definitions:      &CachedSource{Source: &DirectorySource{Dir: h.definitionsDir}},
		Plugins:          &MetadataClient{BaseURL: h.pluginURL},
		Cluster:          testCluster,
		Tokens:           h.tokens,
		Recorder:         mgr.GetEventRecorder("plugin-controller"),
		PollInterval:     testPollInterval,
		UninstallTimeout: 5 * time.Second,
	}
	require.NoError(t, r.SetupWithManager(mgr))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

// pluginURL stands in for cluster DNS; a namespace without a registered
// plugin gets a port nothing listens on, like a pod not started yet.
func (h *controllerHarness) pluginURL(namespace string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if u, ok := h.pluginURLs[namespace]; ok {
		return u
	}
	return "http://127.0.0.1:1"
}

// publish places raw in the definitions directory, as a registry would.
func (h *controllerHarness) publish(t *testing.T, org, plugin, version string, raw []byte) {
	writeDefinition(t, h.definitionsDir, org, plugin, version, raw)
}

// install publishes a definition of plugin 1.0.0 by the harness's
// organization and creates its installation with config.
func (h *controllerHarness) install(t *testing.T, plugin string, config map[string]string) *pluginsv1.PluginInstallation {
	t.Helper()
	org := h.org
	raw := publishedDefinition(plugin, "1.0.0")
	h.publish(t, org, plugin, "1.0.0", raw)
	inst := &pluginsv1.PluginInstallation{
		ObjectMeta: metav1.ObjectMeta{Name: org + "--" + plugin},
		Spec:       pluginsv1.PluginInstallationSpec{DefinitionRef: refTo(org, plugin, "1.0.0", raw), Config: config},
	}
	require.NoError(t, controlPlane.Env(t).Client.Create(context.Background(), inst))
	t.Cleanup(func() { uninstall(t, inst) })
	return inst
}

// uninstall deletes an installation at the end of a test, while its
// controller still runs, so later tests' controllers do not inherit it.
func uninstall(t *testing.T, inst *pluginsv1.PluginInstallation) {
	t.Helper()
	if err := controlPlane.Env(t).Client.Delete(context.Background(), inst); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete %s: %v", inst.Name, err)
		return
	}
	eventually(t, "the installation is deleted", func(ctx context.Context) error { return gone(t, ctx, inst) })
}

// eventually fails the test unless cond succeeds within 30 s.
func eventually(t *testing.T, what string, cond func(ctx context.Context) error) {
	t.Helper()
	require.NoError(t, testenv.Eventually(context.Background(), 30*time.Second, cond), what)
}

// get reads obj's current state from the API server.
func get(t testing.TB, ctx context.Context, obj client.Object) error {
	return controlPlane.Env(t).Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

// gone is nil once obj no longer exists.
func gone(t testing.TB, ctx context.Context, obj client.Object) error {
	err := get(t, ctx, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%T %s still exists", obj, obj.GetName())
}

// deployedPlugin waits for the installation's Deployment and returns it.
func deployedPlugin(t *testing.T, inst *pluginsv1.PluginInstallation) *appsv1.Deployment {
	t.Helper()
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: NamespaceName(inst.Name), Name: "plugin"}}
	eventually(t, "the plugin's Deployment", func(ctx context.Context) error { return get(t, ctx, deploy) })
	return deploy
}

// statusOf waits until the installation's status satisfies cond.
func statusOf(t *testing.T, inst *pluginsv1.PluginInstallation, what string, cond func(s pluginsv1.PluginInstallationStatus) bool) pluginsv1.PluginInstallationStatus {
	t.Helper()
	live := &pluginsv1.PluginInstallation{ObjectMeta: metav1.ObjectMeta{Name: inst.Name}}
	eventually(t, what, func(ctx context.Context) error {
		if err := get(t, ctx, live); err != nil {
			return err
		}
		if !cond(live.Status) {
			return fmt.Errorf("status is %+v", live.Status)
		}
		return nil
	})
	return live.Status
}

// testPlugin is a minimal plugin built on the runtime. Install blocks until
// the test releases it, so the installing phase can be observed; it records
// the uninstall the controller asks for.
type testPlugin struct {
	def     *definition.PluginDefinition
	release chan struct{}
	hosts   chan pluginruntime.Host

	uninstallOnce sync.Once
	uninstalled   chan struct{}
}

func (p *testPlugin) Definition() pluginruntime.PluginDefinition { return *p.def }

func (p *testPlugin) Install(ctx context.Context, _ pluginruntime.Host) error {
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *testPlugin) Start(ctx context.Context, host pluginruntime.Host) error {
	host.ReportReady()
	p.hosts <- host
	<-ctx.Done()
	return nil
}

func (p *testPlugin) Uninstall(context.Context, pluginruntime.Host) error {
	p.uninstallOnce.Do(func() { close(p.uninstalled) })
	return nil
}

func (p *testPlugin) Upgrade(context.Context, pluginruntime.Host) error { return nil }
func (p *testPlugin) Shutdown(context.Context) error                    { return nil }

// runPlugin runs a test plugin as if it were the Deployment's pod: with the
// environment the controller rendered for its container, serving the
// metadata API on a real local port that stands in for the plugin Service.
func (h *controllerHarness) runPlugin(t *testing.T, deploy *appsv1.Deployment) *testPlugin {
	t.Helper()
	url, p := startTestPlugin(t, deploy.Spec.Template.Spec.Containers[0].Env)
	h.mu.Lock()
	h.pluginURLs[deploy.Namespace] = url
	h.mu.Unlock()
	return p
}

// startTestPlugin runs a test plugin on the runtime with env as its
// environment, until the test ends, and returns its URL.
func startTestPlugin(t *testing.T, env []corev1.EnvVar) (string, *testPlugin) {
	t.Helper()
	var environ []string
	for _, e := range env {
		environ = append(environ, e.Name+"="+e.Value)
	}
	p := &testPlugin{
		def:         definition.MustParseDefinition(publishedDefinition("test-plugin", "1.0.0")),
		release:     make(chan struct{}),
		hosts:       make(chan pluginruntime.Host, 1),
		uninstalled: make(chan struct{}),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs io.Writer = io.Discard
	if testing.Verbose() {
		logs = os.Stderr
	}
	go func() {
		done <- pluginruntime.RunContext(ctx, p,
			pluginruntime.WithListener(ln),
			pluginruntime.WithEnviron(environ),
			pluginruntime.WithSignals(),
			pluginruntime.WithLogOutput(logs),
			pluginruntime.WithShutdownTimeout(5*time.Second))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("test plugin: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), p
}

// servePlugin answers for the plugin in namespace with handler, a stand-in
// for a plugin that does not run on the runtime (a broken or hostile one).
func (h *controllerHarness) servePlugin(t *testing.T, namespace string, handler http.Handler) {
	t.Helper()
	plugin := httptest.NewServer(handler)
	t.Cleanup(plugin.Close)
	h.mu.Lock()
	h.pluginURLs[namespace] = plugin.URL
	h.mu.Unlock()
}
