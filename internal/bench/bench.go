package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
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

// floorQPS and floorBurst are the floor client's limits: the plugin's
// defaults (config.go defaultKubeAPIQPS, defaultKubeAPIBurst).
const (
	floorQPS   = 1000
	floorBurst = 2000
)

// Scenario is one inventory size and what runs on it.
type Scenario struct {
	Nodes, DevicesPerNode int
	Pools                 int
	Block, File, Object   int
	Edits                 int
	Idle                  time.Duration
	FloorWorkers          int
	// Samples is how often discovery convergence and its two floors are
	// measured, interleaved (floor, write limit, plugin, floor, ...).
	Samples int
	// LimitWorkers is how many workers the write-limit floor runs with; 0
	// has Run find it first (sweepWriteLimit).
	LimitWorkers int
	// PluginEnv adds FUNP_ settings (e.g. FUNP_KUBE_API_QPS) to the plugin.
	PluginEnv []string
	// Profiles, when set, is a folder for the plugin's pprof profiles:
	// the heap after convergence and at the end, the CPU during the edits.
	Profiles string
	// Hostile is how many nodes' discovery reports are replaced, last, by
	// 1 MiB of empty entries (measureHostile); 0 skips it.
	Hostile int
}

// Sample is one round of the interleaved convergence measure: the two
// floors, then the plugin, on the same API server, one after the other.
type Sample struct {
	// FloorSeconds: a plain client with FloorWorkers workers and the
	// plugin's client limits (QPS 1000, burst 2000) creates the
	// inventory's Disks and writes their status, the plugin stopped,
	// straight to the API server, the benchmark's watch of Disks open: the
	// bare API server, as the plugin talks to it while it converges.
	FloorSeconds float64 `json:"floorSeconds"`
	// LimitSeconds: the same straight to the API server, nothing watching,
	// with LimitWorkers workers: as many as it takes before its throughput
	// stops growing.
	LimitSeconds float64 `json:"limitSeconds"`
	// ConvergeSeconds: from the first discovery ConfigMap's create to the
	// watch seeing the last Disk with its status, the plugin (started
	// fresh, ready and leading, straight to the API server: no proxy)
	// waiting before the clock starts. Its writes are the API server's
	// own counts (apiServerCounter).
	ConvergeSeconds float64 `json:"convergeSeconds"`
	// FirstDiskSeconds is when the watch saw the first published Disk;
	// ConfigMapsSeconds is when the last ConfigMap was created.
	FirstDiskSeconds  float64        `json:"firstDiskSeconds"`
	ConfigMapsSeconds float64        `json:"configMapsSeconds"`
	ConvergeWrites    int            `json:"convergeWrites"`
	ConvergeWritesBy  map[string]int `json:"convergeWritesBy"`
	ReconcileErrors   float64        `json:"reconcileErrors"`
	ReconcileRetries  float64        `json:"reconcileRetries"`
	// Waits is where the inventory's convergence spent its time, from
	// the plugin's metrics: a ConfigMap's mean wait in the work queue and
	// mean reconcile, the API requests' mean time, and the seconds all
	// requests waited for the client's rate limiter together.
	Waits Waits `json:"waits"`
	// CPU seconds by process during the floor, the write limit and the
	// plugin's convergence.
	FloorCPU    CPU `json:"floorCPU"`
	LimitCPU    CPU `json:"limitCPU"`
	ConvergeCPU CPU `json:"convergeCPU"`
}

// Result is what one scenario measured.
type Result struct {
	Disks   int      `json:"disks"`
	Samples []Sample `json:"samples"`
	// Converge, Floor and Limit summarise the samples' seconds;
	// FloorRatio and LimitRatio each sample's convergence over the floor
	// measured just before it.
	Converge   Spread `json:"converge"`
	Floor      Spread `json:"floor"`
	Limit      Spread `json:"limit"`
	FloorRatio Spread `json:"floorRatio"`
	LimitRatio Spread `json:"limitRatio"`
	// CPURatio is each round's CPU seconds (the run's own processes) of
	// the convergence over the floor's: less sensitive to the machine's
	// other tenants than the times.
	CPURatio Spread `json:"cpuRatio"`
	// Disturbed counts the rounds in which other processes used more than
	// DisturbedShare of the machine during the floor or the convergence.
	Disturbed    int `json:"disturbed"`
	LimitWorkers int `json:"limitWorkers"`
	// WriteLimit is the sweep that chose LimitWorkers, when this scenario
	// ran it.
	WriteLimit *WriteLimit `json:"writeLimit,omitempty"`
	// ConvergeWrites is the most writes any sample needed (and by kind);
	// errors and retries are summed over the samples.
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
	// in the same run, interleaved with the edits (serverWrite).
	EditFloorP50Millis float64 `json:"editFloorP50Millis"`
	EditFloorP99Millis float64 `json:"editFloorP99Millis"`
	// The DiskPool write of each edit, until its answer: part of every
	// edit, and not of its floor.
	EditPoolWriteP50Millis float64 `json:"editPoolWriteP50Millis"`
	EditPoolWriteP99Millis float64 `json:"editPoolWriteP99Millis"`
	// Consumers is how many consumers the scenario has.
	Consumers        int            `json:"consumers"`
	FanoutReconciles map[string]int `json:"fanoutReconciles"`
	FanoutWrites     map[string]int `json:"fanoutWrites"`
	// Memory: the largest of every plugin process of the scenario.
	PeakRSSBytes  int64 `json:"peakRSSBytes"`
	PeakAnonBytes int64 `json:"peakAnonBytes"`
	PeakFileBytes int64 `json:"peakFileBytes"`
	// RestartPeakRSSBytes and RestartPeakAnonBytes are the restarted
	// plugin's peaks once it has settled: its initial lists.
	RestartPeakRSSBytes  int64 `json:"restartPeakRSSBytes"`
	RestartPeakAnonBytes int64 `json:"restartPeakAnonBytes"`
	// HelperPeakRSSBytes is the largest VmHWM of the plugin's child
	// processes (the Helm helper, during the install at each start).
	HelperPeakRSSBytes int64   `json:"helperPeakRSSBytes"`
	IdleSeconds        float64 `json:"idleSeconds"`
	// HostileConfigMaps hostile discovery reports were refused at the end
	// (Scenario.Hostile): the plugin's resident memory just before, and
	// its peak while it refused them. Kept apart from PeakRSSBytes.
	HostileConfigMaps   int   `json:"hostileConfigMaps"`
	HostileBeforeBytes  int64 `json:"hostileBeforeBytes"`
	HostilePeakRSSBytes int64 `json:"hostilePeakRSSBytes"`
}

// WritesPerDisk is the convergence's writes over the published disks (the
// sample that wrote most).
func (r Result) WritesPerDisk() float64 { return float64(r.ConvergeWrites) / float64(max(1, r.Disks)) }

// summarise fills the spreads and totals from the samples.
func (r *Result) summarise() {
	var converge, floor, limit, convergeCPU, floorCPU []float64
	r.ConvergeWrites, r.ConvergeWritesBy, r.ReconcileErrors, r.ReconcileRetries, r.Disturbed = 0, nil, 0, 0, 0
	for _, s := range r.Samples {
		converge, floor, limit = append(converge, s.ConvergeSeconds), append(floor, s.FloorSeconds), append(limit, s.LimitSeconds)
		convergeCPU, floorCPU = append(convergeCPU, s.ConvergeCPU.Ours()), append(floorCPU, s.FloorCPU.Ours())
		if s.Disturbed() {
			r.Disturbed++
		}
		if s.ConvergeWrites >= r.ConvergeWrites {
			r.ConvergeWrites, r.ConvergeWritesBy = s.ConvergeWrites, s.ConvergeWritesBy
		}
		r.ReconcileErrors += s.ReconcileErrors
		r.ReconcileRetries += s.ReconcileRetries
	}
	r.Converge, r.Floor, r.Limit = SpreadOf(converge), SpreadOf(floor), SpreadOf(limit)
	r.FloorRatio, r.LimitRatio = SpreadOf(ratios(converge, floor)), SpreadOf(ratios(converge, limit))
	r.CPURatio = SpreadOf(ratios(convergeCPU, floorCPU))
}

// DisturbedShare is the share of the machine's cores other processes may
// use during a round's floor or convergence before the round counts as
// disturbed.
const DisturbedShare = 0.10

// Disturbed says whether other processes used more than DisturbedShare
// of the machine while the floor or the plugin was timed.
func (s Sample) Disturbed() bool {
	return s.FloorCPU.OthersShare(s.FloorSeconds) > DisturbedShare || s.ConvergeCPU.OthersShare(s.ConvergeSeconds) > DisturbedShare
}

// run is one scenario's control plane, proxy and plugin process.
type run struct {
	sc     Scenario
	binary string
	admin  client.Client
	// bare is the floor's client: the plugin's client limits, nothing
	// between it and the API server.
	bare client.Client
	// apiCounts reads what the API server served, for a plugin with no
	// proxy in front of it.
	apiCounts  *apiServerCounter
	env        *testenv.Env
	proxy      *countingProxy
	kubeconfig string
	repo       *chartrepo.Server
	pluginLog  io.Writer
	plugin     *pluginProcess
	res        *Result
}

// startPlugin starts a plugin process behind the counting proxy and waits
// until it is ready and its inventory controller runs (it leads): what it
// does from then on is what is measured.
func (r *run) startPlugin(ctx context.Context) error {
	return r.startPluginOn(ctx, r.kubeconfig)
}

// startPluginBare is startPlugin with nothing between the plugin and the
// API server: how discovery convergence is timed.
func (r *run) startPluginBare(ctx context.Context) error {
	return r.startPluginOn(ctx, r.env.Kubeconfig)
}

func (r *run) startPluginOn(ctx context.Context, kubeconfig string) error {
	p, err := startPluginProcess(r.binary, kubeconfig, r.repo, r.sc.PluginEnv, r.sc.Profiles != "", r.pluginLog)
	if err != nil {
		return err
	}
	r.plugin = p
	if err := p.WaitReady(ctx, 3*time.Minute); err != nil {
		return err
	}
	return p.waitController(ctx, "diskinventory", time.Minute)
}

// stopPlugin stops the plugin process, keeping its peak memory.
func (r *run) stopPlugin() error {
	if r.plugin == nil {
		return nil
	}
	r.notePeaks()
	err := r.plugin.stop()
	r.plugin = nil
	return err
}

// notePeaks folds the running plugin's memory peaks into the result.
func (r *run) notePeaks() {
	if r.plugin == nil {
		return
	}
	if rss, err := r.plugin.peakRSS(); err == nil {
		r.res.PeakRSSBytes = max(r.res.PeakRSSBytes, rss)
	}
	anon, file := r.plugin.peakSplit()
	r.res.PeakAnonBytes, r.res.PeakFileBytes = max(r.res.PeakAnonBytes, anon), max(r.res.PeakFileBytes, file)
	r.res.HelperPeakRSSBytes = max(r.res.HelperPeakRSSBytes, r.plugin.childPeak())
}

// Run measures one scenario on a fresh control plane.
func Run(ctx context.Context, binary string, sc Scenario, log io.Writer) (res Result, err error) {
	start := time.Now()
	r := &run{sc: sc, binary: binary, res: &res}
	// Every step says when it ended and the plugin's peak memory so far,
	// which places the peak.
	logf := func(format string, a ...any) {
		note := fmt.Sprintf("  [%.0fs", time.Since(start).Seconds())
		if r.plugin != nil {
			anon, file := r.plugin.peakSplit()
			note += fmt.Sprintf("; peak heap etc. %.0f MiB, binary %.0f MiB", float64(anon)/(1<<20), float64(file)/(1<<20))
		}
		fmt.Fprintf(log, "  "+format+note+"]\n", a...)
	}
	res.Disks = sc.Nodes * sc.DevicesPerNode
	scheme := testenv.DefaultScheme()
	if err := cephv1alpha1.AddToScheme(scheme); err != nil {
		return res, err
	}
	// etcd without fsync: the machine's disk is nobody's cost here.
	env, err := testenv.Start(testenv.Options{Scheme: scheme, UnsafeNoFsync: true})
	if err != nil {
		return res, err
	}
	defer env.Stop()
	r.env = env
	fast := rest.CopyConfig(env.Config)
	fast.QPS, fast.Burst = 5000, 10000
	if r.admin, err = client.New(fast, client.Options{Scheme: scheme}); err != nil {
		return res, err
	}
	admin := r.admin
	// The floor client has the plugin's client limits (config.go).
	plain := rest.CopyConfig(env.Config)
	plain.QPS, plain.Burst = floorQPS, floorBurst
	if r.bare, err = client.New(plain, client.Options{Scheme: scheme}); err != nil {
		return res, err
	}
	if r.apiCounts, err = newAPIServerCounter(env.Config); err != nil {
		return res, err
	}
	if r.proxy, err = startProxy(env.Config); err != nil {
		return res, err
	}
	proxy := r.proxy
	defer proxy.Close()
	dir, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	if r.kubeconfig, err = proxy.kubeconfig(dir); err != nil {
		return res, err
	}
	if r.repo, err = chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive()); err != nil {
		return res, err
	}
	defer r.repo.Close()
	pluginLog, err := os.Create(filepath.Join(os.TempDir(), fmt.Sprintf("bench-plugin-%d.log", sc.Nodes*sc.DevicesPerNode)))
	if err != nil {
		return res, err
	}
	defer pluginLog.Close()
	r.pluginLog = pluginLog
	defer func() { _ = r.stopPlugin() }()

	// The first start installs Rook and the CRDs, which the floors write to.
	if err := r.startPlugin(ctx); err != nil {
		return res, err
	}
	logf("plugin installed and ready")
	if err := r.stopPlugin(); err != nil {
		return res, err
	}
	if sc.LimitWorkers == 0 {
		limit, err := sweepWriteLimit(ctx, admin, min(limitSweepDisks, res.Disks), sc.DevicesPerNode, sc.FloorWorkers)
		if err != nil {
			return res, fmt.Errorf("write limit: %w", err)
		}
		res.WriteLimit, sc.LimitWorkers = &limit, limit.Workers
		r.sc.LimitWorkers = limit.Workers
		logf("write limit: %s", limit)
	}
	res.LimitWorkers = sc.LimitWorkers

	// Discovery convergence, sampled: each round clears the inventory, runs
	// both floors with the plugin stopped, then starts the plugin and
	// publishes the inventory through it.
	var watcher *watcher
	defer func() {
		if watcher != nil {
			watcher.stop()
		}
	}()
	for i := range max(1, sc.Samples) {
		if watcher != nil {
			watcher.stop()
		}
		if err := r.stopPlugin(); err != nil {
			return res, err
		}
		if err := clearInventory(ctx, admin); err != nil {
			return res, err
		}
		var s Sample
		// The last round is profiled (-profiles): the API server during the
		// floor and the convergence, the plugin during the convergence, each
		// for as long as the earlier rounds took.
		last := i == max(1, sc.Samples)-1
		apiProfiler, floorLength, convergeLength := (*profiler)(nil), profileLength(res.Samples, res.Disks, false), profileLength(res.Samples, res.Disks, true)
		if last {
			if apiProfiler, err = apiServerProfiler(env.Config, sc.Profiles, res.Disks); err != nil {
				return res, err
			}
		}
		// The write limit is the API server's own: direct, nothing watching.
		if s.LimitSeconds, s.LimitCPU, err = timeFloor(ctx, admin, sc.LimitWorkers, sc.Nodes, sc.DevicesPerNode, r.cpuNow); err != nil {
			return res, fmt.Errorf("write-limit floor: %w", err)
		}
		// The floor takes the plugin's path: straight to the API server,
		// with the benchmark's watch of Disks open, which costs the floor
		// what it costs the plugin.
		if watcher, err = newWatcher(ctx, env.Config, scheme); err != nil {
			return res, err
		}
		err = apiProfiler.cpuFor(ctx, "floor", floorLength, func() (err error) {
			s.FloorSeconds, s.FloorCPU, err = timeFloor(ctx, r.bare, sc.FloorWorkers, sc.Nodes, sc.DevicesPerNode, r.cpuNow)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("floor: %w", err)
		}
		if err := r.startPluginBare(ctx); err != nil {
			return res, err
		}
		// Nothing the start-up wrote is still under way when the clock starts.
		if err := waitQuiet(ctx, r.apiCounts, time.Second, time.Minute); err != nil {
			return res, err
		}
		var pluginProfiler *profiler
		if last {
			pluginProfiler = r.plugin.profiler(sc.Profiles, res.Disks)
		}
		err = apiProfiler.cpuFor(ctx, "converge", convergeLength, func() error {
			return pluginProfiler.cpuFor(ctx, "converge", convergeLength, func() error { return r.converge(ctx, watcher, &s) })
		})
		if err != nil {
			return res, err
		}
		res.Samples = append(res.Samples, s)
		logf("sample %d: floor %.2fs, write limit %.2fs (%d workers), plugin %.2fs (%.2f×, %.2f× the limit; first Disk %.2fs, ConfigMaps %.2fs; %.2f writes/disk, %v errors, %v retries)",
			i+1, s.FloorSeconds, s.LimitSeconds, sc.LimitWorkers, s.ConvergeSeconds, s.ConvergeSeconds/s.FloorSeconds, s.ConvergeSeconds/s.LimitSeconds,
			s.FirstDiskSeconds, s.ConfigMapsSeconds, float64(s.ConvergeWrites)/float64(res.Disks), s.ReconcileErrors, s.ReconcileRetries)
		logf("  CPU seconds: floor {%s}, write limit {%s}, plugin {%s}", s.FloorCPU, s.LimitCPU, s.ConvergeCPU)
		logf("  waits: %s", s.Waits)
	}
	res.summarise()
	if err := r.plugin.profiler(sc.Profiles, res.Disks).heap(ctx, "converged"); err != nil {
		return res, err
	}
	// What follows counts the plugin's requests one by one: behind the
	// proxy from here on.
	if err := r.stopPlugin(); err != nil {
		return res, err
	}
	if err := r.startPlugin(ctx); err != nil {
		return res, err
	}
	plugin := r.plugin
	logf("discovery: %d disks in %s s, floor %s s, write limit %s s", res.Disks, res.Converge.Format("%.2f"), res.Floor.Format("%.2f"), res.Limit.Format("%.2f"))

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
	res.Consumers = sc.Block + sc.File + sc.Object
	logf("pools and consumers ready")

	// Quiet when converged: idle, then a restart.
	if err := waitQuiet(ctx, proxy, 3*time.Second, 2*time.Minute); err != nil {
		return res, err
	}
	before := proxy.snapshot()
	proxy.sampleWrites()
	time.Sleep(sc.Idle)
	res.IdleSeconds = sc.Idle.Seconds()
	res.IdleWrites, res.IdleWritesBy = writesSince(before, proxy.snapshot())
	logSamples(logf, "idle", proxy.samplesTaken())
	if err := r.stopPlugin(); err != nil {
		return res, err
	}
	before = proxy.snapshot()
	proxy.sampleWrites()
	if err := r.startPlugin(ctx); err != nil {
		return res, err
	}
	plugin = r.plugin
	if err := waitSettled(ctx, plugin, 3*time.Second, 2*time.Minute); err != nil {
		return res, err
	}
	res.RestartWrites, res.RestartWritesBy = writesSince(before, proxy.snapshot())
	_, reads := requestsSince(before, proxy.snapshot(), isInventoryRead)
	logf("a restart's reads of the inventory: %s", describe(reads))
	logSamples(logf, "after the restart", proxy.samplesTaken())
	// A restart's peak is its initial lists of every Disk and discovery
	// ConfigMap: taken before the edits add their own.
	if rss, err := plugin.peakRSS(); err == nil {
		res.RestartPeakRSSBytes = rss
	}
	res.RestartPeakAnonBytes, _ = plugin.peakSplit()
	if err := plugin.profiler(sc.Profiles, res.Disks).heap(ctx, "restarted"); err != nil {
		return res, err
	}
	logf("quiet: %d writes in %.0fs idle, %d after a restart", res.IdleWrites, res.IdleSeconds, res.RestartWrites)

	// DiskPool edit latency. The simulated operator stops first: it would
	// write the CephCluster's capacity after every edit, competing with the
	// plugin's patch for the API server.
	stopOperator()
	var edits []editTime
	var floorLatencies []time.Duration
	err = plugin.profiler(sc.Profiles, res.Disks).cpu(ctx, "edits", func() (err error) {
		edits, floorLatencies, err = measureEdits(ctx, admin, watcher, sc.Edits)
		return err
	})
	if err != nil {
		return res, err
	}
	var latencies, poolWrites []time.Duration
	for _, e := range edits {
		latencies, poolWrites = append(latencies, e.total), append(poolWrites, e.poolWrite)
	}
	res.EditP50Millis, res.EditP99Millis = percentile(latencies, 50), percentile(latencies, 99)
	res.EditPoolWriteP50Millis, res.EditPoolWriteP99Millis = percentile(poolWrites, 50), percentile(poolWrites, 99)
	res.EditFloorP50Millis, res.EditFloorP99Millis = percentile(floorLatencies, 50), percentile(floorLatencies, 99)
	logf("edits: p50 %.0fms p99 %.0fms over %d, of it the DiskPool write p50 %.0fms p99 %.0fms (API server alone: p50 %.0fms p99 %.0fms)", res.EditP50Millis, res.EditP99Millis, len(latencies), res.EditPoolWriteP50Millis, res.EditPoolWriteP99Millis, res.EditFloorP50Millis, res.EditFloorP99Millis)

	// Fan-out of one disk added to one pool.
	res.FanoutReconciles, res.FanoutWrites, err = measureFanout(ctx, admin, watcher, proxy, plugin)
	if err != nil {
		return res, err
	}
	logf("fan-out: reconciles %v, writes %v", res.FanoutReconciles, res.FanoutWrites)
	r.notePeaks()
	res.FailedRequests = proxy.failures()
	if err := plugin.profiler(sc.Profiles, res.Disks).heap(ctx, "end"); err != nil {
		return res, err
	}
	if sc.Hostile == 0 {
		return res, nil
	}
	res.HostileBeforeBytes, res.HostilePeakRSSBytes, err = r.measureHostile(ctx, min(sc.Hostile, sc.Nodes))
	if err != nil {
		return res, err
	}
	res.HostileConfigMaps = min(sc.Hostile, sc.Nodes)
	logf("hostile discovery: %d ConfigMaps of 1 MiB refused; RSS %.1f MiB before, peak %.1f MiB", res.HostileConfigMaps,
		float64(res.HostileBeforeBytes)/(1<<20), float64(res.HostilePeakRSSBytes)/(1<<20))
	// Stopped here, not by stopPlugin: this peak is not the scenario's.
	err = r.plugin.stop()
	r.plugin = nil
	return res, err
}

// logSamples logs a sample of each kind of write that should not have
// happened (when): what it changed.
func logSamples(logf func(string, ...any), when string, samples map[string]string) {
	for _, key := range slices.Sorted(maps.Keys(samples)) {
		logf("a write %s: %s %s", when, key, samples[key])
	}
}

// profileLength is how long to profile a round's floor (or convergence):
// as long as the shortest earlier round took, so the profile holds only the
// work; with no earlier round, a guess of 3 ms a disk.
func profileLength(earlier []Sample, disks int, converge bool) time.Duration {
	if len(earlier) == 0 {
		return time.Duration(disks) * 3 * time.Millisecond
	}
	shortest := 0.0
	for i, s := range earlier {
		v := s.FloorSeconds
		if converge {
			v = s.ConvergeSeconds
		}
		if i == 0 || v < shortest {
			shortest = v
		}
	}
	return time.Duration(shortest * float64(time.Second))
}

// converge publishes the inventory through the running plugin and times
// it until the watch has seen every Disk with its status.
func (r *run) converge(ctx context.Context, w *watcher, s *Sample) error {
	cms, err := discoveryConfigMaps(Namespace, r.sc.Nodes, r.sc.DevicesPerNode)
	if err != nil {
		return err
	}
	// The Nodes register first, as kubelets do before Rook's daemon runs
	// there: the plugin publishes only the reports of existing Nodes.
	nodes := make([]string, r.sc.Nodes)
	for i := range nodes {
		nodes[i] = nodeName(i)
	}
	if err := parallel(ctx, r.sc.FloorWorkers, nodes, func(ctx context.Context, node string) error { return simulate.EnsureNode(ctx, r.admin, node) }); err != nil {
		return fmt.Errorf("register Nodes: %w", err)
	}
	if err := waitQuiet(ctx, r.apiCounts, 2*time.Second, time.Minute); err != nil {
		return err
	}
	disks := r.sc.Nodes * r.sc.DevicesPerNode
	before, err := r.apiCounts.requests()
	if err != nil {
		return err
	}
	metricsBefore, cpu := mustMetrics(r.plugin), r.cpuNow()
	start := time.Now()
	if err := parallel(ctx, r.sc.FloorWorkers, cms, func(ctx context.Context, cm *corev1.ConfigMap) error { return r.admin.Create(ctx, cm) }); err != nil {
		return fmt.Errorf("create discovery ConfigMaps: %w", err)
	}
	s.ConfigMapsSeconds = time.Since(start).Seconds()
	if err := waitFor(ctx, 30*time.Minute, func() bool { return w.publishedDisks() >= disks }); err != nil {
		return fmt.Errorf("discovery did not converge (%d of %d Disks): %w", w.publishedDisks(), disks, err)
	}
	s.ConvergeCPU = CPUSince(cpu, r.cpuNow())
	first, last := w.publishedSpan()
	s.ConvergeSeconds, s.FirstDiskSeconds = last.Sub(start).Seconds(), first.Sub(start).Seconds()
	if err := waitQuiet(ctx, r.apiCounts, 2*time.Second, time.Minute); err != nil {
		return err
	}
	after, err := r.apiCounts.requests()
	if err != nil {
		return err
	}
	// The API server counts the benchmark's own ConfigMaps too.
	after["POST configmaps"] -= len(cms)
	s.ConvergeWrites, s.ConvergeWritesBy = writesSince(before, after)
	metricsAfter := mustMetrics(r.plugin)
	s.Waits = waitsBetween(metricsBefore, metricsAfter)
	s.ReconcileErrors = metricsAfter["errors"] - metricsBefore["errors"]
	s.ReconcileRetries = (metricsAfter["all error"] - metricsBefore["all error"]) + (metricsAfter["all requeue"] - metricsBefore["all requeue"])
	return nil
}

// Waits is where a convergence's time went (Sample.Waits).
type Waits struct {
	QueueMillis, ReconcileMillis, RequestMillis float64
	LimiterSeconds                              float64
}

func (w Waits) String() string {
	return fmt.Sprintf("a ConfigMap waited %.0f ms in the queue and took %.0f ms; a request %.1f ms; %.2f s waited for the rate limiter in all",
		w.QueueMillis, w.ReconcileMillis, w.RequestMillis, w.LimiterSeconds)
}

// waitsBetween is Waits from two readings of the plugin's metrics.
func waitsBetween(before, after map[string]float64) Waits {
	mean := func(sum, count string) float64 {
		n := after[count] - before[count]
		if n <= 0 {
			return 0
		}
		return 1000 * (after[sum] - before[sum]) / n
	}
	return Waits{
		QueueMillis:     mean("queue seconds", "queue count"),
		ReconcileMillis: mean("work seconds", "work count"),
		RequestMillis:   mean("request seconds", "request count"),
		LimiterSeconds:  after["limiter seconds"] - before["limiter seconds"],
	}
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
func waitQuiet(ctx context.Context, p requestCounter, quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		before, err := p.requests()
		if err != nil {
			return err
		}
		time.Sleep(quiet)
		after, err := p.requests()
		if err != nil {
			return err
		}
		n, by := writesSince(before, after)
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
	report := Report{Settings: fmt.Sprintf("%d devices/node; %d pools; %d BlockStorage, %d FileStorage, %d ObjectStorage; %d edits; %s idle; %d samples; floor %d workers; plugin env %v (defaults: FUNP_KUBE_API_QPS=1000, FUNP_KUBE_API_BURST=2000)",
		o.DevicesPerNode, o.Pools, o.Block, o.File, o.Object, o.Edits, o.Idle, max(1, o.Samples), o.FloorWorkers, o.PluginEnv)}
	limitWorkers := o.LimitWorkers
	for _, nodes := range o.Sizes {
		sc := o.Scenario
		sc.Nodes, sc.LimitWorkers = nodes, limitWorkers
		fmt.Fprintf(o.Out, "scenario: %d nodes × %d devices = %d disks\n", nodes, sc.DevicesPerNode, nodes*sc.DevicesPerNode)
		res, err := Run(ctx, binary, sc, o.Out)
		if err != nil {
			return report, fmt.Errorf("%d disks: %w", nodes*sc.DevicesPerNode, err)
		}
		// The first size's sweep chooses the workers of every later one.
		if res.WriteLimit != nil {
			report.WriteLimit = res.WriteLimit
		}
		limitWorkers = res.LimitWorkers
		report.Scales = append(report.Scales, res)
	}
	return report, nil
}
