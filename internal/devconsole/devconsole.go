package devconsole

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// Options configure a development console.
type Options struct {
	// Definition is the plugin's definition.yaml.
	Definition []byte
	// Console holds the plugin's console files (what it serves at /console/).
	Console http.FileSystem
	// RESTConfig reaches the API server the kube-api-proxy forwards to.
	RESTConfig *rest.Config
	// ConsoleAddr and PluginAddr are the two listen addresses; empty means
	// 127.0.0.1 on a free port. Anything but loopback lets every machine
	// that reaches it take a token and act with RESTConfig's credentials,
	// and is logged as a warning. Each listener answers only to loopback
	// names and to the host it was bound to (see hostcheck.go).
	ConsoleAddr string
	PluginAddr  string
	// ClusterID is the cluster id in proxy paths; empty means "dev".
	ClusterID string
	// Namespaces are the InitContext namespaces; nil means every namespace
	// of the API server, read on each page load.
	Namespaces []string
	// TokenTTL is how long a page token is valid; zero means one hour.
	TokenTTL time.Duration
	// Logger receives refusals and serving errors; nil means slog.Default().
	Logger *slog.Logger
	// OnProxyRequest, when set, is told of every API request the
	// kube-api-proxy checks, allowed or refused: what a page really sent.
	OnProxyRequest func(ProxiedRequest)
	// TestFiles, when set, are served on the plugin origin under
	// TestFilesPath, under the same CSP as the pages: scripts a browser test
	// injects into a page as a same-origin file (axe-core). The platform
	// serves nothing there; cmd/devconsole never sets it.
	TestFiles http.FileSystem
}

// TestFilesPath is where Options.TestFiles are served on the plugin origin.
const TestFilesPath = "/__test/"

// Server is a running development console.
type Server struct {
	def        *definition.PluginDefinition
	consoleURL string
	pluginURL  string
	tokens     *tokens
	proxy      *kubeProxy
	config     hostConfig
	fixedNS    []string
	kube       kubernetes.Interface
	servers    []*http.Server
	log        *slog.Logger
}

// Start parses the definition, resolves the menu's CRDs against the API
// server, and serves both origins until Close.
func Start(ctx context.Context, opts Options) (*Server, error) {
	def, err := definition.ParseDefinition(opts.Definition)
	if err != nil {
		return nil, err
	}
	if opts.Console == nil || opts.RESTConfig == nil {
		return nil, errors.New("devconsole: Options.Console and Options.RESTConfig are required")
	}
	s := &Server{def: def, fixedNS: opts.Namespaces, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	ttl := opts.TokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	s.tokens = newTokens(ttl)
	if s.kube, err = kubernetes.NewForConfig(opts.RESTConfig); err != nil {
		return nil, fmt.Errorf("devconsole: kubernetes client: %w", err)
	}
	kinds, err := resolveKinds(ctx, opts.RESTConfig, def, s.log)
	if err != nil {
		return nil, err
	}
	consoleLn, err := listen(opts.ConsoleAddr)
	if err != nil {
		return nil, err
	}
	pluginLn, err := listen(opts.PluginAddr)
	if err != nil {
		_ = consoleLn.Close()
		return nil, err
	}
	s.consoleURL = originOf(opts.ConsoleAddr, consoleLn.Addr())
	s.pluginURL = originOf(opts.PluginAddr, pluginLn.Addr())
	clusterID := opts.ClusterID
	if clusterID == "" {
		clusterID = "dev"
	}
	if err := s.buildProxy(opts.RESTConfig, clusterID, opts.OnProxyRequest); err != nil {
		_ = consoleLn.Close()
		_ = pluginLn.Close()
		return nil, err
	}
	consolePrefix := fmt.Sprintf("/clusters/%s/plugins/%s/%s/console/", clusterID, installationName(def), pluginVersion(def))
	s.config = s.hostConfig(clusterID, consolePrefix, kinds)
	pages := &pluginSite{consolePrefix: consolePrefix, console: opts.Console, testFiles: opts.TestFiles, csp: pluginCSP(s.consoleURL, s.consoleURL, s.pluginURL)}
	s.serve(consoleLn, opts.ConsoleAddr, s.hostSite())
	s.serve(pluginLn, opts.PluginAddr, pages)
	return s, nil
}

// URL is the console origin, where a browser should go.
func (s *Server) URL() string { return s.consoleURL }

// PluginURL is the origin the plugin's pages are served from.
func (s *Server) PluginURL() string { return s.pluginURL }

// KubeAPIProxyURL is the kube-api-proxy base pages call.
func (s *Server) KubeAPIProxyURL() string { return s.consoleURL + "/kube-api-proxy" }

// ClusterID is the cluster id in the kube-api-proxy's paths.
func (s *Server) ClusterID() string { return s.config.ClusterID }

// IssueToken returns a token the kube-api-proxy accepts, as a page gets.
func (s *Server) IssueToken() string {
	token, _ := s.tokens.issue()
	return token
}

// Close stops both listeners.
func (s *Server) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	return errors.Join(errs...)
}

func listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("devconsole: listen on %s: %w", addr, err)
	}
	return ln, nil
}

// originOf is the origin a browser on this machine uses for a listener. A
// wildcard bind is reached through loopback: "http://0.0.0.0:…" is not a
// name the console answers to, and the pages' frame-ancestors and the
// proxy's CORS origin must name the origin the browser really uses. Go
// binds "tcp" wildcards dual-stack, so 127.0.0.1 reaches them unless the
// operator asked for IPv6 by name ([::]).
func originOf(configuredAddr string, bound net.Addr) string {
	tcp, ok := bound.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + bound.String()
	}
	loopback := "127.0.0.1"
	if host, _, err := net.SplitHostPort(configuredAddr); err == nil && strings.Contains(host, ":") {
		loopback = "::1"
	}
	return "http://" + net.JoinHostPort(loopback, strconv.Itoa(tcp.Port))
}

// serve answers on ln, only to the host names hostcheck.go allows, and
// warns when ln is reachable from other machines: that is everyone who can
// reach it holding the developer's kubeconfig.
func (s *Server) serve(ln net.Listener, configuredAddr string, handler http.Handler) {
	if !isLoopbackAddr(ln.Addr()) {
		s.log.Warn("devconsole: LISTENING BEYOND LOOPBACK: anyone who can reach this address can take a page token and act with your kubeconfig within the plugin's allowedResources; bind to 127.0.0.1 unless that is what you want",
			"addr", ln.Addr().String())
	}
	guarded := guardHost(newAllowedHosts(configuredAddr, ln.Addr()), s.log, handler)
	srv := &http.Server{Handler: guarded, ReadHeaderTimeout: 10 * time.Second}
	s.servers = append(s.servers, srv)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("devconsole: serve", "addr", ln.Addr().String(), "err", err)
		}
	}()
}

func (s *Server) buildProxy(cfg *rest.Config, clusterID string, observe func(ProxiedRequest)) error {
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return fmt.Errorf("devconsole: transport to the API server: %w", err)
	}
	host, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return fmt.Errorf("devconsole: API server URL: %w", err)
	}
	upstream, err := url.Parse(host.String())
	if err != nil {
		return err
	}
	s.proxy = &kubeProxy{
		clusterID:    clusterID,
		pluginOrigin: s.pluginURL,
		tokens:       s.tokens,
		policy:       newPolicy(s.def.Spec.AllowedResources),
		upstream:     upstream,
		transport:    transport,
		log:          s.log,
		observe:      observe,
	}
	return nil
}

// installationName is the PluginInstallation name the platform would use
// for a plugin of the "system" organization.
func installationName(def *definition.PluginDefinition) string {
	return "system--" + def.Metadata.Name
}

func pluginVersion(def *definition.PluginDefinition) string {
	if def.Metadata.Version == "" {
		return "dev"
	}
	return def.Metadata.Version
}

// resolveKinds maps every CRD the definition names (crds and menu) to its
// kind, as the console learns it from the API server. One of the plugin's
// own CRDs that is not installed is an error naming it; a menu entry over
// another's (the overview over Rook's CephCluster, before Rook is
// installed) is left out of the menu, and logged.
func resolveKinds(ctx context.Context, cfg *rest.Config, def *definition.PluginDefinition, log *slog.Logger) (map[string]string, error) {
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("devconsole: apiextensions client: %w", err)
	}
	names := slices.Clone(def.Spec.CRDs)
	for _, entry := range slices.Concat(def.Spec.Menu.Organization, def.Spec.Menu.Project) {
		names = append(names, entry.CRD)
	}
	slices.Sort(names)
	kinds := map[string]string{}
	for _, name := range slices.Compact(names) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && !slices.Contains(def.Spec.CRDs, name) {
			log.Warn("devconsole: a menu entry's CRD is not installed; the entry is left out", "crd", name)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("devconsole: CRD %s named by definition.yaml: %w", name, err)
		}
		kinds[name] = crd.Spec.Names.Kind
	}
	return kinds, nil
}

func (s *Server) hostConfig(clusterID, consolePrefix string, kinds map[string]string) hostConfig {
	cfg := hostConfig{
		PluginName:      s.def.Metadata.Name,
		PluginOrigin:    s.pluginURL,
		PageBase:        s.pluginURL + consolePrefix,
		KubeAPIProxyURL: s.consoleURL + "/kube-api-proxy",
		ClusterID:       clusterID,
		Menu:            map[string][]menuItem{},
		Components:      map[string]map[string]string{},
		KindsByCRD:      kinds,
		CRDsByKind:      map[string]string{},
	}
	for crd, kind := range kinds {
		cfg.CRDsByKind[kind] = crd
	}
	for section, entries := range map[string][]definition.MenuEntry{"organization": s.def.Spec.Menu.Organization, "project": s.def.Spec.Menu.Project} {
		for _, e := range entries {
			if kinds[e.CRD] == "" {
				continue // not installed (resolveKinds)
			}
			cfg.Menu[section] = append(cfg.Menu[section], menuItem{CRD: e.CRD, Kind: kinds[e.CRD], Label: e.Label})
		}
	}
	for kind, c := range s.def.Spec.CustomComponents {
		views := map[string]string{}
		for view, file := range map[string]string{"list": c.List, "detail": c.Detail, "create": c.Create, "edit": c.Edit} {
			if file != "" {
				views[view] = file
			}
		}
		cfg.Components[kind] = views
	}
	return cfg
}

// namespaces are the InitContext namespaces: the fixed list, or every
// namespace the API server has.
func (s *Server) namespaces(ctx context.Context) ([]string, error) {
	if s.fixedNS != nil {
		return s.fixedNS, nil
	}
	list, err := s.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	slices.Sort(names)
	return names, nil
}
