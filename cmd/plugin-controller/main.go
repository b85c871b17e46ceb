// Command plugin-controller runs Fundament plugins in a cluster: it turns
// every PluginInstallation (plugins.fundament.io/v1) into a plugin
// namespace, RBAC, Deployment and Service, and reports the plugin's phase
// on the installation. See package internal/plugincontroller.
//
// In a cluster it needs only the identity flags and a definition source:
//
//	plugin-controller --cluster-id=c-123 --organization-id=o-456 --registry-url=https://plugins.example.com/v1
//
// Outside one, point it at a kubeconfig and a local definitions directory,
// and name the namespace that keeps its token signing key; plugin Services
// do not resolve from outside, so also say where the plugins' metadata APIs
// are reachable (a port-forward, say):
//
//	plugin-controller --kubeconfig=$HOME/.kube/config --definitions-dir=./definitions \
//	    --cluster-id=dev --organization-id=dev --namespace=default --plugin-base-url=http://localhost:8080
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fundament-oss/ceph-rook/internal/plugincontroller"
	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	crhelper "github.com/fundament-oss/ceph-rook/pluginruntime/helpers/controllerruntime"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "plugin-controller:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		slog.Error("plugin controller failed", "error", err.Error())
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	kubeconfig       string
	registryURL      string
	definitionsDir   string
	pluginBaseURL    string
	namespace        string
	cluster          plugincontroller.ClusterIdentity
	pollInterval     time.Duration
	uninstallTimeout time.Duration
	metricsAddr      string
	probeAddr        string
	leaderElect      bool
	logLevel         slog.Level
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("plugin-controller", flag.ContinueOnError)
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig file; empty means in-cluster, or $KUBECONFIG")
	fs.StringVar(&c.registryURL, "registry-url", "", "plugin registry root: definitions are fetched from <url>/<organization>/<plugin>/<version>/definition.yaml")
	fs.StringVar(&c.definitionsDir, "definitions-dir", "", "local directory laid out as the registry, instead of --registry-url (development)")
	fs.StringVar(&c.pluginBaseURL, "plugin-base-url", "", "where plugins' metadata APIs are reached; {namespace} is replaced by the plugin's namespace. Empty means http://plugin.<namespace>.svc.cluster.local:8080")
	fs.StringVar(&c.namespace, "namespace", os.Getenv(podNamespaceEnv), "the controller's own namespace, where it keeps its token signing key; empty means $"+podNamespaceEnv+", or in a cluster the pod's own")
	fs.StringVar(&c.cluster.ClusterID, "cluster-id", "", "this cluster's id, given to plugins as FUNDAMENT_CLUSTER_ID (required)")
	fs.StringVar(&c.cluster.OrganizationID, "organization-id", "", "the owning organization's id, given to plugins as FUNDAMENT_ORGANIZATION_ID (required)")
	fs.DurationVar(&c.pollInterval, "poll-interval", plugincontroller.DefaultPollInterval, "how often each plugin's status is polled")
	fs.DurationVar(&c.uninstallTimeout, "uninstall-timeout", plugincontroller.DefaultUninstallTimeout, "how long a deleted plugin's uninstall request may take")
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", "0", "metrics listen address; 0 disables")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "listen address of /healthz and /readyz; 0 disables")
	fs.BoolVar(&c.leaderElect, "leader-elect", false, "elect a leader, for running more than one replica")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var problems []string
	if fs.NArg() > 0 {
		problems = append(problems, fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	if (c.registryURL == "") == (c.definitionsDir == "") {
		problems = append(problems, "exactly one of --registry-url and --definitions-dir is required")
	}
	// The plugin runtime refuses to start without these, so a controller
	// without them would deploy nothing but crash loops.
	if c.cluster.ClusterID == "" {
		problems = append(problems, "--cluster-id is required")
	}
	if c.cluster.OrganizationID == "" {
		problems = append(problems, "--organization-id is required")
	}
	if c.pollInterval <= 0 {
		problems = append(problems, "--poll-interval must be positive")
	}
	if c.uninstallTimeout <= 0 {
		problems = append(problems, "--uninstall-timeout must be positive")
	}
	if len(problems) > 0 {
		return c, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

// definitionSource is the source the flags chose, remembering definitions
// by hash.
func (c config) definitionSource() plugincontroller.DefinitionSource {
	if c.definitionsDir != "" {
		return &plugincontroller.CachedSource{Source: &plugincontroller.DirectorySource{Dir: c.definitionsDir}}
	}
	return &plugincontroller.CachedSource{Source: &plugincontroller.RegistrySource{BaseURL: c.registryURL}}
}

// pluginURL maps a plugin namespace to its metadata API, or nil for the
// in-cluster Service.
func (c config) pluginURL() func(namespace string) string {
	if c.pluginBaseURL == "" {
		return nil
	}
	return func(namespace string) string {
		return strings.ReplaceAll(c.pluginBaseURL, "{namespace}", namespace)
	}
}

// How the controller learns its own namespace, which holds the Secret of
// its token signing key: --namespace, which defaults to $POD_NAMESPACE (a
// Deployment sets it from the downward API, fieldRef metadata.namespace),
// and failing both the namespace Kubernetes mounts into every pod with a
// service account token, as controller-runtime's leader election reads
// it. Outside a cluster, only the flag or the variable can say.
const (
	podNamespaceEnv             = "POD_NAMESPACE"
	serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// ownNamespace is the controller's namespace, read from namespaceFile
// when neither the flag nor the variable gave it.
func (c config) ownNamespace(namespaceFile string) (string, error) {
	if c.namespace != "" {
		return c.namespace, nil
	}
	data, err := os.ReadFile(namespaceFile)
	if ns := strings.TrimSpace(string(data)); err == nil && ns != "" {
		return ns, nil
	}
	return "", fmt.Errorf("the controller's namespace is unknown (%s is not readable outside a pod): set --namespace or $%s", namespaceFile, podNamespaceEnv)
}

// tokenSigner loads, or creates, the key the controller signs plugin
// tokens with. Every replica does so before leader election, through a
// client without cache (the manager's is not running yet, and would watch
// all Secrets); racing replicas end up with the same key.
func tokenSigner(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme, namespace string) (*plugincontroller.TokenSigner, error) {
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create a client: %w", err)
	}
	return plugincontroller.LoadTokenSigner(ctx, direct, namespace)
}

func (c config) restConfig() (*rest.Config, error) {
	if c.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig %s: %w", c.kubeconfig, err)
		}
		return cfg, nil
	}
	return ctrl.GetConfig()
}

func run(ctx context.Context, c config) error {
	logger := logr.FromSlogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: c.logLevel}))
	ctrl.SetLogger(logger)
	namespace, err := c.ownNamespace(serviceAccountNamespaceFile)
	if err != nil {
		return err
	}
	restCfg, err := c.restConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := pluginsv1.AddToScheme(scheme); err != nil {
		return err
	}
	tokens, err := tokenSigner(ctx, restCfg, scheme, namespace)
	if err != nil {
		return fmt.Errorf("token signing key: %w", err)
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  plugincontroller.CacheOptions(),
		Metrics:                metricsserver.Options{BindAddress: c.metricsAddr},
		HealthProbeBindAddress: c.probeAddr,
		LeaderElection:         c.leaderElect,
		LeaderElectionID:       "plugin-controller.plugins.fundament.io",
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	r := &plugincontroller.Reconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Definitions:      c.definitionSource(),
		Plugins:          &plugincontroller.MetadataClient{BaseURL: c.pluginURL()},
		Cluster:          c.cluster,
		Tokens:           tokens,
		Recorder:         crhelper.BoundedRecorder(mgr.GetEventRecorder("plugin-controller")), // a plugin's uninstall error can pass 1 KiB
		PollInterval:     c.pollInterval,
		UninstallTimeout: c.uninstallTimeout,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	logger.Info("starting plugin controller", "clusterID", c.cluster.ClusterID, "pollInterval", c.pollInterval.String(),
		"namespace", namespace, "tokenSigner", tokens.String())
	return mgr.Start(ctx)
}
