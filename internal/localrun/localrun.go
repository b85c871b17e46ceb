package localrun

import (
	"context"
	"errors"
	"fmt"
	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/devconsole"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
	"github.com/fundament-oss/ceph-rook/internal/simulate"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// Namespace is where the local plugin installs Rook and the CephCluster
// (the plugin's defaults).
const Namespace = "rook-ceph"

// Options configure a local run.
type Options struct {
	// RepoRoot is the repository (the plugin is built from it; the console
	// pages and definition.yaml are read from it).
	RepoRoot string
	// DataDir keeps the cluster's state between runs.
	DataDir string
	// Fresh starts from an empty cluster.
	Fresh bool
	// Listen addresses: the plugin's HTTP server, the console's two
	// origins, and the simulation's control API.
	PluginAddr, ConsoleAddr, PluginOriginAddr, SimulatorAddr string
	// Out receives the banner and progress lines.
	Out io.Writer
	// Started, when set, receives the endpoints once everything runs.
	Started chan<- Endpoints
}

// Endpoints are what a user (or a test) talks to.
type Endpoints struct {
	Kubeconfig   string
	KubectlDir   string
	PluginURL    string
	ConsoleURL   string
	SimulatorURL string
	PluginLog    string
}

// DefaultOptions are `just run`'s defaults.
func DefaultOptions(repoRoot string) Options {
	return Options{
		RepoRoot:         repoRoot,
		DataDir:          filepath.Join(repoRoot, ".data"),
		PluginAddr:       "127.0.0.1:8080",
		ConsoleAddr:      "127.0.0.1:8090",
		PluginOriginAddr: "127.0.0.1:8091",
		SimulatorAddr:    "127.0.0.1:8092",
		Out:              os.Stdout,
	}
}

// Run runs everything until ctx ends, then stops it all.
func Run(ctx context.Context, o Options) (err error) {
	if err := portsFree(o.PluginAddr, o.ConsoleAddr, o.PluginOriginAddr, o.SimulatorAddr); err != nil {
		return err
	}
	if o.Fresh {
		if err := os.RemoveAll(o.DataDir); err != nil {
			return fmt.Errorf("remove %s: %w", o.DataDir, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(o.DataDir, "bin"), 0o755); err != nil {
		return err
	}
	if _, err := os.Stat(cachedir.RookChartArchive()); err != nil {
		return fmt.Errorf("Rook's chart is not cached at %s: run `just rook-artifacts`", cachedir.RookChartArchive())
	}
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()

	fmt.Fprintln(o.Out, "• building the plugin")
	binary := filepath.Join(o.DataDir, "bin", "ceph-rook")
	if err := pluginproc.Build(ctx, o.RepoRoot, binary); err != nil {
		return err
	}

	// The snapshot API's CRDs, as a distribution that ships snapshots has
	// them: BlockStorage and FileStorage get their VolumeSnapshotClass.
	fmt.Fprintln(o.Out, "• starting the local control plane (etcd, kube-apiserver, garbage collector, the snapshot CRDs)")
	// The simulation reads the plugin's own kinds (Disks) typed.
	scheme := testenv.DefaultScheme()
	if err := cephv1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	env, err := testenv.Start(testenv.Options{GarbageCollector: true, SnapshotCRDs: true, DataDir: o.DataDir, Scheme: scheme})
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { _ = env.Stop() })
	kubeconfig := filepath.Join(o.DataDir, "kubeconfig")
	if err := copyFile(env.Kubeconfig, kubeconfig); err != nil {
		return err
	}

	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { _ = repo.Close() })

	pluginLog := filepath.Join(o.DataDir, "plugin.log")
	fmt.Fprintf(o.Out, "• starting the plugin (chart repository %s; log %s)\n", repo.URL, pluginLog)
	logFile, err := os.OpenFile(pluginLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { logFile.Close() })
	plugin, err := pluginproc.Start(pluginproc.Options{
		Binary:     binary,
		Addr:       o.PluginAddr,
		Kubeconfig: kubeconfig,
		ID:         "local",
		Env:        []string{"FUNP_CHART_REPOSITORY=" + repo.URL, "FUNP_DEV_INSECURE_CHART_REPOSITORY=true", "FUNP_CHART_DIGEST=" + repo.Digest, "FUNP_ALLOW_MULTIPLE_PER_NODE=true"},
		Output:     logFile,
	})
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { _ = plugin.Stop(35 * time.Second) })
	fmt.Fprintln(o.Out, "• waiting for the plugin to install Rook and become ready")
	if err := plugin.WaitReady(ctx, 5*time.Minute); err != nil {
		return fmt.Errorf("%w (see %s)", err, pluginLog)
	}

	console, err := startConsole(ctx, o, env)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { console.Close() })

	discovery := &simulate.Discovery{Client: env.Client, Namespace: Namespace}
	simServer, err := serve(o.SimulatorAddr, simulatorAPI(discovery))
	if err != nil {
		return err
	}
	cleanups = append(cleanups, func() { _ = simServer.Close() })
	simErr := make(chan error, 1)
	go func() { simErr <- simulateRook(ctx, env.Client, discovery, o.Out) }()

	endpoints := Endpoints{
		Kubeconfig:   kubeconfig,
		KubectlDir:   testenv.AssetsDir(),
		PluginURL:    "http://" + o.PluginAddr,
		ConsoleURL:   console.URL(),
		SimulatorURL: "http://" + o.SimulatorAddr,
		PluginLog:    pluginLog,
	}
	printBanner(o.Out, endpoints, o.RepoRoot)
	if o.Started != nil {
		o.Started <- endpoints
	}

	select {
	case <-ctx.Done():
		fmt.Fprintln(o.Out, "• stopping")
		return nil
	case <-plugin.Done():
		return fmt.Errorf("the plugin exited (see %s): %v", pluginLog, plugin.Err())
	case err := <-simErr:
		return fmt.Errorf("the simulation stopped: %w", err)
	}
}

// simulateRook waits for the operator namespace the plugin's Helm install
// creates, publishes the simulated nodes and then plays the operator.
func simulateRook(ctx context.Context, c client.Client, discovery *simulate.Discovery, out io.Writer) error {
	for {
		err := c.Get(ctx, client.ObjectKey{Name: Namespace}, &corev1.Namespace{})
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(500 * time.Millisecond):
		}
	}
	for node, devices := range InitialNodes() {
		if err := discovery.SetNode(ctx, node, devices); err != nil {
			return fmt.Errorf("publish simulated node %s: %w", node, err)
		}
	}
	fmt.Fprintln(out, "• simulation: discovery published for", len(InitialNodes()), "nodes")
	operator := &simulate.Operator{
		Client:    c,
		Namespace: Namespace,
		Delay:     3 * time.Second,
		DeviceSize: func(node, device string) uint64 {
			return simulate.DeviceSizes(discovery.Nodes())(node, device)
		},
		// OSD Deployments and Ceph (PGs, the Ceph Jobs), so that a
		// DiskRetirement can be tried here.
		OSDs: &simulate.OSDs{Client: c, Namespace: Namespace},
	}
	for {
		err := operator.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return nil
		}
		fmt.Fprintln(out, "• simulation:", err)
		// Until the chart's CRDs are in, listing Rook kinds fails: retry.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// InitialNodes are the simulated nodes of a new local cluster: HDDs, SSDs,
// NVMe drives and one disk in use (an ext4 filesystem).
func InitialNodes() map[string][]simulate.Device {
	return map[string][]simulate.Device{
		"node-1": {
			simulate.NewDevice("node-1", 0, simulate.HDD), simulate.NewDevice("node-1", 1, simulate.SSD),
			simulate.NewDevice("node-1", 2, simulate.NVMe), simulate.NewDevice("node-1", 3, simulate.InUse),
		},
		"node-2": {
			simulate.NewDevice("node-2", 0, simulate.HDD), simulate.NewDevice("node-2", 1, simulate.HDD),
			simulate.NewDevice("node-2", 2, simulate.SSD),
		},
		"node-3": {
			simulate.NewDevice("node-3", 0, simulate.HDD), simulate.NewDevice("node-3", 1, simulate.NVMe),
		},
	}
}

func startConsole(ctx context.Context, o Options, env *testenv.Env) (*devconsole.Server, error) {
	definition, err := os.ReadFile(filepath.Join(o.RepoRoot, "definition.yaml"))
	if err != nil {
		return nil, err
	}
	return devconsole.Start(ctx, devconsole.Options{
		Definition:  definition,
		Console:     http.Dir(filepath.Join(o.RepoRoot, "console")),
		RESTConfig:  env.Config,
		ConsoleAddr: o.ConsoleAddr,
		PluginAddr:  o.PluginOriginAddr,
	})
}

func serve(addr string, h http.Handler) (*http.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, nil
}

// portsFree turns "address already in use" into one clear message before
// anything starts.
func portsFree(addrs ...string) error {
	var errs []error
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s is already in use: stop what listens there or choose another address", addr))
			continue
		}
		l.Close()
	}
	return errors.Join(errs...)
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

func printBanner(out io.Writer, e Endpoints, repoRoot string) {
	fmt.Fprintf(out, `
ceph-rook is running on a local control plane (Rook's operator and discovery are SIMULATED).

  console      %s
  kubeconfig   export KUBECONFIG=%s
  kubectl      export PATH=%s:$PATH
  plugin       %s/readyz   (log: %s)
  simulation   %s/nodes

Try:
  kubectl get ceph-storage
  kubectl get disks
  kubectl apply -f %s
  curl -X POST %s/nodes/node-4                  # a node joins
  curl -X POST '%s/nodes/node-1/disks?type=ssd' # a disk is plugged in
  curl -X DELETE %s/nodes/node-3                # a node leaves

Ctrl-C stops everything.
`, e.ConsoleURL, e.Kubeconfig, e.KubectlDir, e.PluginURL, e.PluginLog, e.SimulatorURL,
		filepath.Join(repoRoot, "test-resources.yaml"), e.SimulatorURL, e.SimulatorURL, e.SimulatorURL)
}
