// Package bench measures ceph-rook at scale against a real API server:
// the plugin binary runs as in production (its own manager, its default
// client settings) behind a proxy that counts its requests, while the
// benchmark publishes a simulated inventory, pools, consumers and edits,
// and compares with a floor measured in the same run. `just bench` runs it.
package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// Namespace is the plugin's default operator and cluster namespace.
const Namespace = "rook-ceph"

// Scenario is one inventory size and what runs on it.
type Scenario struct {
	Nodes, DevicesPerNode int
	Pools                 int
	Block, File, Object   int
	Edits                 int
	Idle                  time.Duration
	FloorWorkers          int
	// PluginEnv adds FUNP_ settings (e.g. FUNP_KUBE_API_QPS) to the plugin.
	PluginEnv []string
	// Profiles, when set, is a folder for the plugin's pprof profiles:
	// the heap after convergence and at the end, the CPU during the edits.
	Profiles string
}

// Result is what one scenario measured.
type Result struct {
	Disks            int            `json:"disks"`
	FloorSeconds     float64        `json:"floorSeconds"`
	ConvergeSeconds  float64        `json:"convergeSeconds"`
	ConvergeWrites   int            `json:"convergeWrites"`
	ConvergeWritesBy map[string]int `json:"convergeWritesBy"`
	ReconcileErrors  float64        `json:"reconcileErrors"`
	ReconcileRetries float64        `json:"reconcileRetries"`
	FailedRequests   map[string]int `json:"failedRequests"`
	IdleWrites       int            `json:"idleWrites"`
	IdleWritesBy     map[string]int `json:"idleWritesBy"`
	RestartWrites    int            `json:"restartWrites"`
	RestartWritesBy  map[string]int `json:"restartWritesBy"`
	EditP50Millis    float64        `json:"editP50Millis"`
	EditP99Millis    float64        `json:"editP99Millis"`
	// The API server's own time for a write to the CephCluster, measured
	// in the same run (measureServerFloor).
	EditFloorP50Millis float64        `json:"editFloorP50Millis"`
	EditFloorP99Millis float64        `json:"editFloorP99Millis"`
	FanoutReconciles   map[string]int `json:"fanoutReconciles"`
	FanoutWrites       map[string]int `json:"fanoutWrites"`
	PeakRSSBytes       int64          `json:"peakRSSBytes"`
	PeakAnonBytes      int64          `json:"peakAnonBytes"`
	PeakFileBytes      int64          `json:"peakFileBytes"`
	// HelperPeakRSSBytes is the largest VmHWM of the plugin's child
	// processes (the Helm helper, during the install at each start).
	HelperPeakRSSBytes int64   `json:"helperPeakRSSBytes"`
	IdleSeconds        float64 `json:"idleSeconds"`
}

// WritesPerDisk is the convergence's writes over the published disks.
func (r Result) WritesPerDisk() float64 { return float64(r.ConvergeWrites) / float64(max(1, r.Disks)) }

// Run measures one scenario on a fresh control plane.
func Run(ctx context.Context, binary string, sc Scenario, log io.Writer) (res Result, err error) {
	start := time.Now()
	var plugin *pluginProcess
	// Every step says when it ended and the plugin's peak memory so far,
	// which places the peak.
	logf := func(format string, a ...any) {
		note := ""
		if plugin != nil {
			anon, file := plugin.peakSplit()
			note = fmt.Sprintf("  [%.0fs; peak heap etc. %.0f MiB, binary %.0f MiB]", time.Since(start).Seconds(), float64(anon)/(1<<20), float64(file)/(1<<20))
		}
		fmt.Fprintf(log, "  "+format+note+"\n", a...)
	}
	res.Disks = sc.Nodes * sc.DevicesPerNode
	scheme := testenv.DefaultScheme()
	if err := cephv1alpha1.AddToScheme(scheme); err != nil {
		return res, err
	}
	env, err := testenv.Start(testenv.Options{Scheme: scheme})
	if err != nil {
		return res, err
	}
	defer env.Stop()
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 5000, 10000
	admin, err := client.New(fast, client.Options{Scheme: scheme})
	if err != nil {
		return res, err
	}
	proxy, err := startProxy(env.Config)
	if err != nil {
		return res, err
	}
	defer proxy.Close()
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	kubeconfig, err := proxy.kubeconfig(dir)
	if err != nil {
		return res, err
	}
	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	if err != nil {
		return res, err
	}
	defer repo.Close()
	pluginLog, err := os.Create(filepath.Join(os.TempDir(), fmt.Sprintf("bench-plugin-%d.log", sc.Nodes*sc.DevicesPerNode)))
	if err != nil {
		return res, err
	}
	defer pluginLog.Close()

	plugin, err = startPluginProcess(binary, kubeconfig, repo, sc.PluginEnv, sc.Profiles != "", pluginLog)
	if err != nil {
		return res, err
	}
	defer func() {
		if plugin != nil {
			_ = plugin.stop()
		}
	}()
	if err := plugin.WaitReady(ctx, 3*time.Minute); err != nil {
		return res, err
	}
	logf("plugin installed and ready")

	// The floor: a plain client publishing the same inventory.
	floor := floorDisks(sc.Nodes, sc.DevicesPerNode)
	floorStart := time.Now()
	if err := writeFloor(ctx, admin, sc.FloorWorkers, floor); err != nil {
		return res, fmt.Errorf("floor: %w", err)
	}
	res.FloorSeconds = time.Since(floorStart).Seconds()
	logf("floor: %d disks in %.1fs", len(floor), res.FloorSeconds)
	if err := admin.DeleteAllOf(ctx, &cephv1alpha1.Disk{}, client.MatchingLabels{floorLabel: "true"}); err != nil {
		return res, err
	}

	watcher, err := newWatcher(ctx, env.Config, scheme)
	if err != nil {
		return res, err
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool { return watcher.floorDisks() == 0 }); err != nil {
		return res, fmt.Errorf("floor disks not deleted: %w", err)
	}

	// Discovery convergence.
	cms, err := discoveryConfigMaps(Namespace, sc.Nodes, sc.DevicesPerNode)
	if err != nil {
		return res, err
	}
	before, metricsBefore := proxy.snapshot(), mustMetrics(plugin)
	convergeStart := time.Now()
	if err := parallel(ctx, sc.FloorWorkers, cms, func(ctx context.Context, cm *corev1.ConfigMap) error { return admin.Create(ctx, cm) }); err != nil {
		return res, fmt.Errorf("create discovery ConfigMaps: %w", err)
	}
	if err := waitFor(ctx, 30*time.Minute, func() bool { return watcher.publishedDisks() >= res.Disks }); err != nil {
		return res, fmt.Errorf("discovery did not converge (%d of %d Disks): %w", watcher.publishedDisks(), res.Disks, err)
	}
	res.ConvergeSeconds = watcher.lastPublished().Sub(convergeStart).Seconds()
	if err := waitQuiet(ctx, proxy, 2*time.Second, time.Minute); err != nil {
		return res, err
	}
	res.ConvergeWrites, res.ConvergeWritesBy = writesSince(before, proxy.snapshot())
	metricsAfter := mustMetrics(plugin)
	res.ReconcileErrors = metricsAfter["errors"] - metricsBefore["errors"]
	res.ReconcileRetries = (metricsAfter["all error"] - metricsBefore["all error"]) + (metricsAfter["all requeue"] - metricsBefore["all requeue"])
	if err := plugin.profiler(sc.Profiles, res.Disks).heap(ctx, "converged"); err != nil {
		return res, err
	}
	logf("discovery: %d disks in %.1fs (%.2f writes/disk, %v errors, %v retries)", res.Disks, res.ConvergeSeconds, res.WritesPerDisk(), res.ReconcileErrors, res.ReconcileRetries)

	// Pools and consumers; the simulated operator marks Rook objects Ready.
	opCtx, stopOperator := context.WithCancel(ctx)
	defer stopOperator()
	operator := &simulate.Operator{Client: admin, Namespace: Namespace, Interval: 500 * time.Millisecond}
	go func() { _ = operator.Run(opCtx) }()
	plan := poolPlan(watcher.disks(), sc.Pools)
	for i, disks := range plan {
		pool := &cephv1alpha1.DiskPool{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pool-%02d", i)}, Spec: cephv1alpha1.DiskPoolSpec{Disks: disks}}
		if err := admin.Create(ctx, pool); err != nil {
			return res, err
		}
	}
	if err := createConsumers(ctx, admin, sc); err != nil {
		return res, err
	}
	if err := waitFor(ctx, 10*time.Minute, func() bool { return consumersReady(ctx, admin) == sc.Block+sc.File+sc.Object }); err != nil {
		return res, fmt.Errorf("consumers not Ready (%d): %w", consumersReady(ctx, admin), err)
	}
	logf("pools and consumers ready")

	// Quiet when converged: idle, then a restart.
	if err := waitQuiet(ctx, proxy, 3*time.Second, 2*time.Minute); err != nil {
		return res, err
	}
	before = proxy.snapshot()
	time.Sleep(sc.Idle)
	res.IdleSeconds = sc.Idle.Seconds()
	res.IdleWrites, res.IdleWritesBy = writesSince(before, proxy.snapshot())
	if rss, err := plugin.peakRSS(); err == nil {
		res.PeakRSSBytes = rss
	}
	res.PeakAnonBytes, res.PeakFileBytes = plugin.peakSplit()
	res.HelperPeakRSSBytes = plugin.childPeak()
	if err := plugin.stop(); err != nil {
		return res, err
	}
	before = proxy.snapshot()
	plugin, err = startPluginProcess(binary, kubeconfig, repo, sc.PluginEnv, sc.Profiles != "", pluginLog)
	if err != nil {
		return res, err
	}
	if err := plugin.WaitReady(ctx, 3*time.Minute); err != nil {
		return res, err
	}
	if err := waitSettled(ctx, plugin, 3*time.Second, 2*time.Minute); err != nil {
		return res, err
	}
	res.RestartWrites, res.RestartWritesBy = writesSince(before, proxy.snapshot())
	logf("quiet: %d writes in %.0fs idle, %d after a restart", res.IdleWrites, res.IdleSeconds, res.RestartWrites)

	// DiskPool edit latency. The simulated operator stops first: it would
	// write the CephCluster's capacity after every edit, competing with the
	// plugin's patch for the API server.
	stopOperator()
	var latencies []time.Duration
	err = plugin.profiler(sc.Profiles, res.Disks).cpu(ctx, "edits", func() (err error) {
		latencies, err = measureEdits(ctx, admin, watcher, sc.Edits)
		return err
	})
	if err != nil {
		return res, err
	}
	res.EditP50Millis, res.EditP99Millis = percentile(latencies, 50), percentile(latencies, 99)
	floorLatencies, err := measureServerFloor(ctx, admin, watcher, max(10, sc.Edits/2))
	if err != nil {
		return res, err
	}
	res.EditFloorP50Millis, res.EditFloorP99Millis = percentile(floorLatencies, 50), percentile(floorLatencies, 99)
	logf("edits: p50 %.0fms p99 %.0fms over %d (API server alone: p50 %.0fms p99 %.0fms)", res.EditP50Millis, res.EditP99Millis, len(latencies), res.EditFloorP50Millis, res.EditFloorP99Millis)

	// Fan-out of one disk added to one pool.
	res.FanoutReconciles, res.FanoutWrites, err = measureFanout(ctx, admin, watcher, proxy, plugin)
	if err != nil {
		return res, err
	}
	logf("fan-out: reconciles %v, writes %v", res.FanoutReconciles, res.FanoutWrites)
	if rss, err := plugin.peakRSS(); err == nil && rss > res.PeakRSSBytes {
		res.PeakRSSBytes = rss
	}
	anon, file := plugin.peakSplit()
	res.PeakAnonBytes, res.PeakFileBytes = max(res.PeakAnonBytes, anon), max(res.PeakFileBytes, file)
	res.HelperPeakRSSBytes = max(res.HelperPeakRSSBytes, plugin.childPeak())
	res.FailedRequests = proxy.failures()
	return res, plugin.profiler(sc.Profiles, res.Disks).heap(ctx, "end")
}

func mustMetrics(p *pluginProcess) map[string]float64 {
	m, err := p.metrics()
	if err != nil {
		return map[string]float64{}
	}
	return m
}

func createConsumers(ctx context.Context, c client.Client, sc Scenario) error {
	var objs []client.Object
	for i := range sc.Block {
		objs = append(objs, &cephv1alpha1.BlockStorage{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("block-%03d", i)}, Spec: cephv1alpha1.BlockStorageSpec{Default: i == 0}})
	}
	for i := range sc.File {
		objs = append(objs, &cephv1alpha1.FileStorage{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("file-%03d", i)}, Spec: cephv1alpha1.FileStorageSpec{MetadataServers: 1}})
	}
	for i := range sc.Object {
		objs = append(objs, &cephv1alpha1.ObjectStorage{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("object-%03d", i)}, Spec: cephv1alpha1.ObjectStorageSpec{GatewayInstances: 1}})
	}
	return parallel(ctx, 8, objs, func(ctx context.Context, o client.Object) error { return c.Create(ctx, o) })
}

func consumersReady(ctx context.Context, c client.Client) int {
	ready := 0
	for _, kind := range []string{"BlockStorage", "FileStorage", "ObjectStorage"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "ceph.fundament.io", Version: "v1alpha1", Kind: kind + "List"})
		if err := c.List(ctx, list); err != nil {
			return 0
		}
		for _, item := range list.Items {
			if phase, _, _ := unstructured.NestedString(item.Object, "status", "phase"); phase == "Ready" {
				ready++
			}
		}
	}
	return ready
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// waitQuiet waits until the plugin has written nothing for quiet.
func waitQuiet(ctx context.Context, p *countingProxy, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		before := p.snapshot()
		time.Sleep(quiet)
		n, by := writesSince(before, p.snapshot())
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the plugin kept writing: %s in the last %s", describe(by), quiet)
		}
	}
}

// waitSettled waits until the plugin's reconcile counters stop moving.
func waitSettled(ctx context.Context, p *pluginProcess, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	prev := -1.0
	for {
		m := mustMetrics(p)
		total := 0.0
		for k, v := range m {
			if len(k) > 4 && k[:4] == "all " {
				total += v
			}
		}
		if total == prev && total > 0 {
			return nil
		}
		prev = total
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the restarted plugin kept reconciling")
		}
		time.Sleep(quiet)
	}
}

func percentile(values []time.Duration, p float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	idx := int(float64(len(sorted)-1) * p / 100)
	return float64(sorted[idx].Microseconds()) / 1000
}

// Options configure a `just bench` run.
type Options struct {
	RepoRoot string
	// Sizes are the node counts to measure, smallest first.
	Sizes []int
	Scenario
	Out io.Writer
}

// Measure builds the plugin and runs the scenario at every size.
func Measure(ctx context.Context, o Options) (Report, error) {
	dir, err := os.MkdirTemp("", "bench-bin-")
	if err != nil {
		return Report{}, err
	}
	defer os.RemoveAll(dir)
	binary, err := buildPlugin(ctx, o.RepoRoot, dir)
	if err != nil {
		return Report{}, err
	}
	report := Report{Settings: fmt.Sprintf("%d devices/node; %d pools; %d BlockStorage, %d FileStorage, %d ObjectStorage; %d edits; %s idle; floor %d workers; plugin env %v (defaults: FUNP_KUBE_API_QPS=1000, FUNP_KUBE_API_BURST=2000)",
		o.DevicesPerNode, o.Pools, o.Block, o.File, o.Object, o.Edits, o.Idle, o.FloorWorkers, o.PluginEnv)}
	for _, nodes := range o.Sizes {
		sc := o.Scenario
		sc.Nodes = nodes
		fmt.Fprintf(o.Out, "scenario: %d nodes × %d devices = %d disks\n", nodes, sc.DevicesPerNode, nodes*sc.DevicesPerNode)
		res, err := Run(ctx, binary, sc, o.Out)
		if err != nil {
			return report, fmt.Errorf("%d disks: %w", nodes*sc.DevicesPerNode, err)
		}
		report.Scales = append(report.Scales, res)
	}
	return report, nil
}
