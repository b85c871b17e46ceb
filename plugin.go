package main

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v8/apis/volumesnapshot/v1"
	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/retirement"
	"github.com/fundament-oss/ceph-rook/internal/rook"
	"github.com/fundament-oss/ceph-rook/internal/upgrade"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
	crhelper "github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

//go:embed definition.yaml
var definitionYAML []byte

// Plugin is ceph-rook as a Fundament plugin: Start installs Rook-Ceph and
// runs the reconcilers on one controller-runtime manager.
type Plugin struct {
	definition *definition.PluginDefinition
	// getenv reads the FUNP_ configuration (os.Getenv in production).
	getenv func(string) string
	// restConfig finds the API server: in-cluster, or $KUBECONFIG.
	restConfig func() (*rest.Config, error)
	// installer installs or upgrades the Rook chart (nil: the helm helper
	// binary beside the plugin, see execInstaller).
	installer chartInstaller
	// metricsAddr serves the manager's Prometheus metrics ("0": off).
	metricsAddr string
	// pprofAddr serves Go's pprof profiles (empty: off).
	pprofAddr string
	// apiProbeInterval is how often the watchdog probes the API server
	// (zero: defaultAPIProbeInterval).
	apiProbeInterval time.Duration
	// cacheSyncTimeout bounds the wait for the caches before Start reports
	// ready (zero: defaultCacheSyncTimeout).
	cacheSyncTimeout time.Duration
}

// NewPlugin is the production plugin.
func NewPlugin() *Plugin {
	return &Plugin{
		definition:  definition.MustParseDefinition(definitionYAML),
		getenv:      os.Getenv,
		restConfig:  ctrl.GetConfig,
		metricsAddr: crhelper.DefaultMetricsAddr,
	}
}

// WithMetricsAddr sets where the manager serves its metrics ("0": off).
func (p *Plugin) WithMetricsAddr(addr string) *Plugin {
	p.metricsAddr = addr
	return p
}

var _ pluginruntime.ConsoleProvider = (*Plugin)(nil)

// WithPprofAddr serves Go's pprof profiles at addr (empty: off); the
// benchmark profiles the plugin through it.
func (p *Plugin) WithPprofAddr(addr string) *Plugin {
	p.pprofAddr = addr
	return p
}

// Definition is the embedded definition.yaml.
func (p *Plugin) Definition() pluginruntime.PluginDefinition { return *p.definition }

// ConsoleAssets serves console/ at /console/.
func (p *Plugin) ConsoleAssets() http.FileSystem { return consoleAssets() }

// Shutdown has nothing to release: the manager stops with Start's context.
func (p *Plugin) Shutdown(context.Context) error { return nil }

// Start installs (idempotently: it runs on every container start), then
// runs the reconcilers until ctx ends.
func (p *Plugin) Start(ctx context.Context, host pluginruntime.Host) error {
	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseInstalling, Message: "installing Rook-Ceph"})
	cfg, err := LoadConfig(p.getenv)
	if err != nil {
		return pluginerrors.NewPermanent(err)
	}
	restCfg, err := p.restConfig()
	if err != nil {
		return pluginerrors.NewTransient(fmt.Errorf("find the API server: %w", err))
	}
	restCfg = rest.CopyConfig(restCfg)
	restCfg.QPS, restCfg.Burst = float32(cfg.KubeAPIQPS), cfg.KubeAPIBurst
	scheme, err := newScheme()
	if err != nil {
		return pluginerrors.NewPermanent(err)
	}
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return pluginerrors.NewTransient(fmt.Errorf("client: %w", err))
	}
	installer := p.installer
	if installer == nil {
		if installer, err = newExecInstaller(restCfg, host.Logger()); err != nil {
			return pluginerrors.NewPermanent(err)
		}
	}
	// One instance installs at a time, so an install a crash interrupted
	// is recovered at once by the next (withInstallLock).
	kubeVersion, err := serverVersion(restCfg)
	if err != nil {
		return pluginerrors.NewTransient(err)
	}
	if err := upgrade.KubernetesFloor(kubeVersion); err != nil {
		return pluginerrors.NewPermanent(err)
	}
	var plan upgrade.Plan
	err = withInstallLock(ctx, c, restCfg, cfg, func(ctx context.Context) error {
		var installErr error
		plan, installErr = install(ctx, c, installer, cfg, kubeVersion, host.Logger())
		return installErr
	})
	if err != nil {
		return pluginerrors.NewTransient(err)
	}
	mgr, err := newManager(restCfg, scheme, cfg, host, p.metricsAddr, p.pprofAddr)
	if err != nil {
		return pluginerrors.NewTransient(err)
	}
	// The storage cluster's health and the API server's reachability both
	// decide the phase; the board reports the worse of the two.
	health := newHealthBoard(host)
	health.report(healthSourceUpgrade, plan.Status())
	if err := setupReconcilers(mgr, cfg, sourceHost{Host: host, board: health, source: healthSourceCluster}); err != nil {
		return pluginerrors.NewPermanent(err)
	}
	upgrades := &upgrade.Reconciler{
		Client:   mgr.GetClient(),
		Live:     mgr.GetAPIReader(),
		Targets:  upgradeTargets(cfg, kubeVersion),
		Recorder: crhelper.BoundedRecorder(mgr.GetEventRecorder("ceph-rook")),
		Host:     sourceHost{Host: host, board: health, source: healthSourceUpgrade},
		TakeRookStep: func(ctx context.Context) error {
			return withInstallLock(ctx, c, restCfg, cfg, func(ctx context.Context) error {
				return ensureRookRelease(ctx, installer, cfg, host.Logger())
			})
		},
	}
	if err := upgrades.SetupWithManager(mgr); err != nil {
		return pluginerrors.NewPermanent(fmt.Errorf("upgrade controller: %w", err))
	}
	probe, err := readyzProbe(restCfg)
	if err != nil {
		return pluginerrors.NewTransient(err)
	}
	// The manager's caches are up once it starts the runnables that need no
	// leader election: it starts those only after its caches synced.
	cachesUp := make(chan struct{})
	if err := mgr.Add(cachesUpSignal(cachesUp)); err != nil {
		return pluginerrors.NewPermanent(err)
	}
	// The manager has a context of its own, so that Start can stop it when
	// the caches do not sync; mgrErr is set before stopped is closed.
	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	stopped := make(chan struct{})
	var mgrErr error
	go func() {
		defer close(stopped)
		mgrErr = mgr.Start(mgrCtx)
	}()
	timeout := cmp.Or(p.cacheSyncTimeout, defaultCacheSyncTimeout)
	host.ReportStatus(pluginruntime.PluginStatus{Phase: pluginruntime.PhaseInstalling,
		Message: fmt.Sprintf("waiting for the caches of the watched kinds to sync (at most %s)", timeout)})
	if err := waitForCaches(ctx, mgr.GetCache(), watchedKinds(cfg), timeout, cachesUp, stopped); err != nil {
		stopManager()
		if waitStopped(stopped, host) && mgrErr != nil {
			err = fmt.Errorf("manager: %w", mgrErr)
		}
		if ctx.Err() != nil {
			return ctx.Err() // stopping: nothing to report
		}
		return pluginerrors.NewTransient(err)
	}
	host.ReportReady()
	health.activate()
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	watchdog := &apiWatchdog{
		Probe:     probe,
		Interval:  cmp.Or(p.apiProbeInterval, defaultAPIProbeInterval),
		Threshold: apiFailureThreshold,
		Report:    func(s pluginruntime.PluginStatus) { health.report(healthSourceAPI, s) },
		Logger:    host.Logger(),
	}
	go watchdog.Run(watchCtx)
	<-stopped
	if mgrErr != nil {
		return pluginerrors.NewTransient(fmt.Errorf("manager: %w", mgrErr))
	}
	return nil
}

// managerStopGrace is how long Start waits for a manager it stopped, past
// the manager's own 30 s for its runnables to end.
const managerStopGrace = 45 * time.Second

// waitStopped waits for the manager to return after its context ended, and
// reports whether it did. It does not wait forever: a manager whose own
// caches never synced does not return (controller-runtime v0.25 loops in
// runnableGroup.Start), and Start must still say why it failed.
func waitStopped(stopped <-chan struct{}, host pluginruntime.Host) bool {
	select {
	case <-stopped:
		return true
	case <-time.After(managerStopGrace):
		host.Logger().Warn("the manager did not stop; Start returns without it", "waited", managerStopGrace.String())
		return false
	}
}

// cachesUpSignal closes its channel when the manager starts it. It needs
// no leader election, so the manager starts it, with the other such
// runnables, right after its caches synced.
type cachesUpSignal chan struct{}

func (s cachesUpSignal) Start(context.Context) error { close(s); return nil }
func (cachesUpSignal) NeedLeaderElection() bool      { return false }

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, cephv1.AddToScheme, cephv1alpha1.AddToScheme,
		snapshotv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// newManager scopes the cache to what is read: of all ConfigMaps only the
// discovery ones (operator namespace, app=rook-discover), of the Rook kinds
// only the cluster namespace.
// The manager logs through the runtime's logger (crhelper.NewManager);
// the runtime's HTTP server already serves the probes.
func newManager(restCfg *rest.Config, scheme *runtime.Scheme, cfg Config, host pluginruntime.Host, metricsAddr, pprofAddr string) (manager.Manager, error) {
	discovery := labels.SelectorFromSet(labels.Set{DiscoveryAppLabel: DiscoveryAppValue})
	inCluster := map[string]cache.Config{cfg.ClusterNamespace: {}}
	scopes := map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{cfg.OperatorNamespace: {}}, Label: discovery},
		&appsv1.DaemonSet{}: {Namespaces: map[string]cache.Config{cfg.OperatorNamespace: {}}},
		// Of all Leases (every node renews one every ten seconds) only the
		// snapshot controller's, in whatever namespace it runs.
		&coordinationv1.Lease{}: {Field: fields.OneTermEqualSelector("metadata.name", SnapshotControllerLease)},
	}
	for _, kind := range consumerKinds {
		scopes[kind.NewRookObject()] = cache.ByObject{Namespaces: inCluster}
	}
	// The two kinds whose size grows with the disks keep one copy of what
	// repeats in them (cachetransform.go).
	scopes[&cephv1alpha1.Disk{}] = cache.ByObject{Transform: storedDisk(newInterner())}
	scopes[newCephClusterObject()] = cache.ByObject{Transform: storedCephCluster}
	// Of all Deployments only Rook's OSDs, and of each only what names its
	// disk and class (the inventory's Disk OSD, osdclass.go).
	osds := labels.SelectorFromSet(labels.Set{rook.AppLabel: rook.OSDApp})
	scopes[&appsv1.Deployment{}] = cache.ByObject{Namespaces: inCluster, Label: osds, Transform: storedOSDDeployment}
	if metricsAddr == "" {
		metricsAddr = "0"
	}
	return crhelper.NewManager(restCfg, host, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: "0",
		PprofBindAddress:       pprofAddr,
		// Start runs again in the same process after a transient error;
		// its controllers keep their names.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptrTo(true)},
		// One writer at a time: a rolling update briefly runs two plugins.
		LeaderElection:          cfg.LeaderElection,
		LeaderElectionID:        "ceph-rook-plugin",
		LeaderElectionNamespace: cfg.OperatorNamespace,
		// Stepping down ends the process (the runtime restarts Start), so
		// the next leader never races a stale writer.
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{
			DefaultTransform: stripManagedFields,
			ByObject:         scopes,
		},
	})
}

// setupReconcilers registers the inventory, the pools and one consumer
// reconciler per consumer kind on the manager.
func setupReconcilers(mgr manager.Manager, cfg Config, host pluginruntime.Host) error {
	c := mgr.GetClient()
	cluster := types.NamespacedName{Namespace: cfg.ClusterNamespace, Name: CephClusterName}
	view := &ClusterView{Client: c, Cache: mgr.GetCache(), Cluster: cluster}
	recorder := crhelper.BoundedRecorder(mgr.GetEventRecorder("ceph-rook")) // retirement notes can pass 1 KiB
	inventory := &DiskInventoryReconciler{
		Client:    c,
		Namespace: cfg.OperatorNamespace,
		Discovery: DiscoveryOptions{AllowLoopDevices: cfg.DevLoopDevices},
		Recorder:  recorder,
	}
	if err := inventory.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("disk inventory controller: %w", err)
	}
	// The pools' two jobs: the CephCluster's device list, then each
	// pool's status, handed on from the first to the second.
	poolStatus := make(chan event.GenericEvent)
	devices := &DeviceListReconciler{Client: c, View: view, PoolStatus: poolStatus, MaxBytes: cfg.CephClusterMaxBytes}
	if err := devices.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("CephCluster device list controller: %w", err)
	}
	statuses := &DiskPoolStatusReconciler{Client: c, View: view, Pools: poolStatus}
	if err := statuses.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("disk pool status controller: %w", err)
	}
	deps := consumerDeps{Client: c, Config: cfg, View: view, Recorder: recorder, Live: mgr.GetAPIReader()}
	for _, kind := range consumerKinds {
		if err := kind.setupReconciler(mgr, deps); err != nil {
			return fmt.Errorf("%s controller: %w", kind.Kind(), err)
		}
	}
	retirements := &retirement.Reconciler{
		Client: c, Live: mgr.GetAPIReader(), Cluster: retirementView{view: view, client: c, live: mgr.GetAPIReader()},
		ClusterNamespace: cfg.ClusterNamespace, OperatorNamespace: cfg.OperatorNamespace,
		Recorder: recorder, Timing: cfg.RetirementTiming,
	}
	if err := retirements.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("disk retirement controller: %w", err)
	}
	if err := mgr.Add(&retirement.Sweeper{Reconciler: retirements, Log: host.Logger()}); err != nil {
		return err
	}
	if cfg.DevLoopDevices {
		loops := &LoopDiscoveryReconciler{Client: c, Namespace: cfg.OperatorNamespace}
		if err := loops.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("loop-device discovery controller: %w", err)
		}
	}
	health := &clusterHealthReconciler{Client: c, Cluster: cluster, Host: host, Presence: view.Subscribe()}
	return health.SetupWithManager(mgr)
}

// serverVersion is the API server's Kubernetes version ("v1.34.2"), which a
// Rook step is checked against.
func serverVersion(restCfg *rest.Config) (string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return "", fmt.Errorf("the API server's version: %w", err)
	}
	info, err := dc.ServerVersion()
	if err != nil {
		return "", fmt.Errorf("the API server's version: %w", err)
	}
	return info.GitVersion, nil
}
