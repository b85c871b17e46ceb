package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// harness runs the plugin's reconcilers on their own manager against the
// package's real API server, in namespaces of their own. Cluster-scoped
// objects (Disks, pools, consumers) are removed when the test ends, so the
// next test starts from an empty inventory.
type harness struct {
	t      *testing.T
	ctx    context.Context
	env    *testenv.Env
	c      client.Client
	cfg    Config
	host   *recordingHost
	writes *writeCounter
	stop   func()
	// cache is the running manager's cache (set by start).
	cache cache.Cache
}

var harnessSeq atomic.Int32

// harnessConfig is the default configuration in namespaces of the test's
// own. LoadConfig keeps the CephCluster in the operator namespace; the
// harness moves it to a namespace of its own anyway, so that a value used
// for the other namespace's purpose (CSI driver names follow the operator
// namespace; clusterID, CSI secrets and the bucket provisioner the
// cluster's) fails a test instead of passing by coincidence.
func harnessConfig(t *testing.T) Config {
	n := harnessSeq.Add(1)
	cfg, err := LoadConfig(func(key string) string {
		if key == EnvOperatorNamespace {
			return fmt.Sprintf("rook-op-%d", n)
		}
		return ""
	})
	require.NoError(t, err)
	cfg.ClusterNamespace = fmt.Sprintf("rook-cl-%d", n)
	// Probes of the simulated Ceph answer within a pass of the simulation:
	// asked often, and a drain that makes no progress for 10 s is stuck.
	cfg.RetirementTiming = retirement.Timing{Poll: 100 * time.Millisecond, Stall: 10 * time.Second, Sweep: 200 * time.Millisecond}
	return cfg
}

// newHarness prepares namespaces and the CephCluster, as install does, on
// the package's control plane.
func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessOn(t, controlPlane.Env(t))
}

// newHarnessOn is newHarness on another control plane (one with other
// CRDs than the package's).
func newHarnessOn(t *testing.T, cp *testenv.Env) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, ctx: ctx, env: cp, c: cp.Client, cfg: harnessConfig(t), host: &recordingHost{}, writes: &writeCounter{}}
	t.Cleanup(cancel)
	for _, ns := range []string{h.cfg.OperatorNamespace, h.cfg.ClusterNamespace} {
		require.NoError(t, createNamespaceIfMissing(ctx, cp.Client, ns))
	}
	_, err := ensureCephCluster(ctx, cp.Client, h.cfg, discardLog)
	require.NoError(t, err)
	t.Cleanup(func() { cleanupClusterScoped(t, cp.Client) })
	return h
}

// start runs the reconcilers until the test ends (or stop is called).
func (h *harness) start() {
	h.t.Helper()
	h.startWith(h.host, nil)
}

// startWith is start through host, with wrap (if any) around the API
// client's transport after the write counter.
func (h *harness) startWith(host pluginruntime.Host, wrap func(http.RoundTripper) http.RoundTripper) {
	h.t.Helper()
	restCfg := configAsPlugin(h.t, h.env)
	restCfg.Wrap(h.writes.wrap)
	if wrap != nil {
		restCfg.Wrap(wrap)
	}
	scheme, err := newScheme()
	require.NoError(h.t, err)
	mgr, err := newManager(restCfg, scheme, h.cfg, host, "0", "")
	require.NoError(h.t, err)
	require.NoError(h.t, setupReconcilers(mgr, h.cfg, host))
	h.cache = mgr.GetCache()
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	require.True(h.t, mgr.GetCache().WaitForCacheSync(ctx))
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(h.t, <-done)
		})
	}
	h.t.Cleanup(h.stop)
}

func cleanupClusterScoped(t *testing.T, c client.Client) {
	ctx := context.Background()
	for _, obj := range []client.Object{&cephv1alpha1.DiskRetirement{}, &cephv1alpha1.BlockStorage{}, &cephv1alpha1.FileStorage{}, &cephv1alpha1.ObjectStorage{}, &cephv1alpha1.DiskPool{}, &cephv1alpha1.Disk{}} {
		if err := c.DeleteAllOf(ctx, obj); err != nil {
			t.Logf("cleanup %T: %v", obj, err)
		}
	}
	var classes storagev1.StorageClassList
	if err := c.List(ctx, &classes); err == nil {
		for i := range classes.Items {
			_ = c.Delete(ctx, &classes.Items[i])
		}
	}
	// Foreign classes a test made; ours go with their consumers. Absent
	// when the control plane has no snapshot CRDs.
	if err := c.DeleteAllOf(ctx, &snapshotv1.VolumeSnapshotClass{}); err != nil && !meta.IsNoMatchError(err) {
		t.Logf("cleanup VolumeSnapshotClasses: %v", err)
	}
}

// eventually fails the test when cond does not hold within the timeout:
// a minute, as the slowest step the API server takes on a loaded machine
// (a CRD's deletion, its finalizer clearing every instance first) took
// over 30 s while the whole suite ran beside an e2e. A passing condition
// returns as soon as it holds.
func (h *harness) eventually(what string, cond func() error) {
	h.t.Helper()
	err := testenv.Eventually(h.ctx, time.Minute, func(context.Context) error { return cond() })
	require.NoError(h.t, err, what)
}

// publishDiscovery creates or replaces a node's discovery ConfigMap in the
// operator namespace, as Rook's discovery daemon does.
func (h *harness) publishDiscovery(node string, devices ...device) {
	h.t.Helper()
	cm := discoveryConfigMap(h.t, node, devices...)
	cm.Namespace = h.cfg.OperatorNamespace
	require.NoError(h.t, simulate.EnsureNode(h.ctx, h.c, node))
	var existing corev1.ConfigMap
	err := h.c.Get(h.ctx, client.ObjectKeyFromObject(cm), &existing)
	if apierrors.IsNotFound(err) {
		require.NoError(h.t, h.c.Create(h.ctx, cm))
		return
	}
	require.NoError(h.t, err)
	existing.Data = cm.Data
	require.NoError(h.t, h.c.Update(h.ctx, &existing))
}

// createReport registers the node a discovery ConfigMap names, as its
// kubelet does, and creates the ConfigMap, as Rook's daemon there does.
func createReport(t testing.TB, ctx context.Context, c client.Client, cm *corev1.ConfigMap) {
	t.Helper()
	require.NoError(t, simulate.EnsureNode(ctx, c, cm.Labels[DiscoveryNodeLabel]))
	require.NoError(t, c.Create(ctx, cm))
}

func (h *harness) removeDiscovery(node string) {
	h.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local-device-" + node, Namespace: h.cfg.OperatorNamespace}}
	require.NoError(h.t, h.c.Delete(h.ctx, cm))
}

// disksOf lists the published Disks of a node.
func (h *harness) disksOf(node string) map[string]cephv1alpha1.Disk {
	var list cephv1alpha1.DiskList
	require.NoError(h.t, h.c.List(h.ctx, &list))
	out := map[string]cephv1alpha1.Disk{}
	for _, d := range list.Items {
		if d.Status.NodeName == node {
			out[d.Status.Path] = d
		}
	}
	return out
}

// waitDisks waits until node has n Disks with a status, and returns them
// by kernel path.
func (h *harness) waitDisks(node string, n int) map[string]cephv1alpha1.Disk {
	h.t.Helper()
	var disks map[string]cephv1alpha1.Disk
	h.eventually(fmt.Sprintf("%d Disks on %s", n, node), func() error {
		disks = h.disksOf(node)
		if len(disks) != n {
			return fmt.Errorf("%d Disks on %s, want %d", len(disks), node, n)
		}
		return nil
	})
	return disks
}

// update reads obj again and applies change to it until the write does
// not conflict. The plugin and the simulated Rook write the objects the
// tests edit (their status, a Deployment's scale, the CephCluster's
// devices), so a test's own read-then-write races them: every edit of an
// object something else writes goes through here.
func (h *harness) update(obj client.Object, change func()) {
	h.t.Helper()
	require.NoError(h.t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return h.c.Update(h.ctx, obj)
	}))
}

func (h *harness) cluster() *cephv1.CephCluster {
	h.t.Helper()
	var cc cephv1.CephCluster
	require.NoError(h.t, h.c.Get(h.ctx, client.ObjectKey{Namespace: h.cfg.ClusterNamespace, Name: CephClusterName}, &cc))
	return &cc
}

// clusterDevices is the CephCluster's device list as node → device names.
func (h *harness) clusterDevices() map[string][]string {
	out := map[string][]string{}
	for _, n := range h.cluster().Spec.Storage.Nodes {
		for _, d := range n.Devices {
			out[n.Name] = append(out[n.Name], d.Name)
		}
	}
	return out
}

func (h *harness) createPool(name string, disks ...string) *cephv1alpha1.DiskPool {
	h.t.Helper()
	pool := &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cephv1alpha1.DiskPoolSpec{Disks: disks}}
	require.NoError(h.t, h.c.Create(h.ctx, pool))
	return pool
}

// recordingHost is the plugin's view of the runtime in these tests.
type recordingHost struct {
	mu       sync.Mutex
	statuses []pluginruntime.PluginStatus
	ready    bool
}

func (r *recordingHost) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
func (r *recordingHost) Telemetry() pluginruntime.TelemetryService { return nil }
func (r *recordingHost) ReportReady()                              { r.mu.Lock(); r.ready = true; r.mu.Unlock() }
func (r *recordingHost) ReportStatus(s pluginruntime.PluginStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses = append(r.statuses, s)
}

func (r *recordingHost) last() pluginruntime.PluginStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.statuses) == 0 {
		return pluginruntime.PluginStatus{}
	}
	return r.statuses[len(r.statuses)-1]
}

// writeCounter counts the requests that change something (every verb but
// GET, LIST and WATCH) the plugin sends to the API server, by resource path.
type writeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		// Lease renewals and Events (leader election records one) are the
		// cost of having a leader, not writes of the plugin's objects.
		// A SelfSubjectReview (who the plugin is, at install) is a question
		// the API server answers and stores nowhere.
		if req.Method != http.MethodGet && !strings.Contains(req.URL.Path, "/coordination.k8s.io/") && !strings.HasSuffix(req.URL.Path, "/events") &&
			!strings.HasSuffix(req.URL.Path, "/selfsubjectreviews") {
			w.mu.Lock()
			if w.counts == nil {
				w.counts = map[string]int{}
			}
			w.counts[req.Method+" "+req.URL.Path]++
			w.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (w *writeCounter) snapshot() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.counts))
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *writeCounter) total() int {
	n := 0
	for _, v := range w.snapshot() {
		n += v
	}
	return n
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var errNotYet = errors.New("not yet")

// eventsv1List finds Events the plugin recorded about an object.
type eventsv1List struct{}

func (eventsv1List) find(h *harness, regarding, reason string) error {
	var list eventsv1.EventList
	if err := h.c.List(h.ctx, &list); err != nil {
		return err
	}
	for _, e := range list.Items {
		if e.Regarding.Name == regarding && e.Reason == reason {
			return nil
		}
	}
	return fmt.Errorf("no %s Event about %s among %d", reason, regarding, len(list.Items))
}
