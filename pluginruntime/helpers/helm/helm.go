// Package helm installs, upgrades, inspects and uninstalls Helm charts
// with the Helm SDK, not the helm binary: a plugin image needs no CLI, and
// errors arrive as Go errors instead of parsed output.
//
//	c, err := helm.New(restConfig, helm.WithLogger(host.Logger()))
//	if err != nil { ... }
//	res, err := c.InstallOrUpgrade(ctx, helm.Release{
//		Name:      "rook-ceph",
//		Namespace: "rook-ceph",
//		Chart:     helm.Chart{RepoURL: "https://charts.rook.io/release", Name: "rook-ceph", Version: "v1.18.11"},
//		Values:    map[string]any{"csi": map[string]any{"enableRbdDriver": true}},
//	})
//
// InstallOrUpgrade has `helm upgrade --install` semantics and is safe to call
// on every start: an unchanged release is left alone, so restarts and
// reconciles cost no new revisions.
package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// ErrReleaseNotFound is returned by Status for a release that does not
// exist.
var ErrReleaseNotFound = driver.ErrReleaseNotFound

// Chart names a chart in a chart repository.
type Chart struct {
	// RepoURL is the repository's URL, as in `helm install --repo`.
	RepoURL string
	// Name is the chart's name in the repository.
	Name string
	// Version pins the chart version; empty means the latest, which makes
	// installs unrepeatable, so pin it.
	Version string
	// Digest pins the chart archive itself ("sha256:<64 hex>", as in a
	// repository's index.yaml): the downloaded archive is checked before
	// it is loaded, and a mismatch is a permanent error. A version names
	// what the repository calls that version; only the digest says the
	// bytes are the ones reviewed. Empty means not checked.
	Digest string
}

// Release is the desired state of one release.
type Release struct {
	Name      string
	Namespace string
	Chart     Chart
	// Values are the complete user values; values set by an earlier
	// revision and absent here are dropped, as declarative state should be.
	Values map[string]any
	// Wait makes the call wait until the release's resources are ready.
	Wait bool
	// Timeout bounds hooks and Wait (default 5m).
	Timeout time.Duration
	// Exclusive is the caller's promise that no other operation on this
	// release runs meanwhile: it holds a lock every writer of the release
	// takes, or it is the only writer there is. A pending revision is then
	// always one whose operation died, and is recovered at once instead of
	// after Timeout.
	Exclusive bool
}

// Action is what InstallOrUpgrade did.
type Action string

// The actions of InstallOrUpgrade.
const (
	Installed Action = "installed"
	Upgraded  Action = "upgraded"
	Unchanged Action = "unchanged"
)

// Result is the outcome of InstallOrUpgrade.
type Result struct {
	Action  Action
	Release *release.Release
}

// Client runs Helm actions against one cluster. It is safe for concurrent
// use on different releases; Helm itself refuses concurrent operations on
// one release.
type Client struct {
	config     *rest.Config
	kube       kubernetes.Interface
	settings   *cli.EnvSettings
	logger     *slog.Logger
	driver     string
	rbacWait   time.Duration
	maxHistory int
}

// Option configures a Client.
type Option func(*Client)

// WithLogger sends Helm's debug output to logger at debug level, and the
// client's own messages (retries) at info.
func WithLogger(logger *slog.Logger) Option {
	return func(c *Client) { c.logger = logger }
}

// WithCacheDir keeps downloaded charts and repository indexes in dir
// (default a folder under os.TempDir, since a plugin's home is often
// read-only).
func WithCacheDir(dir string) Option {
	return func(c *Client) {
		c.settings.RepositoryCache = filepath.Join(dir, "repository")
		c.settings.RepositoryConfig = filepath.Join(dir, "repositories.yaml")
	}
}

// WithRBACWait sets how long a Forbidden answer is retried (default 2m).
// The platform grants a plugin's permissions while the plugin is already
// starting, so the first calls may be refused for a few seconds.
func WithRBACWait(d time.Duration) Option {
	return func(c *Client) { c.rbacWait = d }
}

// WithMaxHistory caps the revisions kept per release (default 10).
func WithMaxHistory(n int) Option {
	return func(c *Client) { c.maxHistory = n }
}

// WithConfigMapStorage stores releases as ConfigMaps in their namespaces
// instead of Secrets (Helm's default), so that an installer needs no access
// to Secrets: a ClusterRole cannot grant them in a few namespaces only, and
// read access to every Secret of the cluster is most of cluster-admin. For
// releases whose values hold nothing secret.
func WithConfigMapStorage() Option {
	return func(c *Client) { c.driver = "configmap" }
}

// New returns a Client that talks to the cluster of config, storing
// releases as Secrets in their namespaces (Helm's default) unless
// WithConfigMapStorage.
func New(config *rest.Config, opts ...Option) (*Client, error) {
	kube, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("helm client: %w", err)
	}
	settings := cli.New()
	c := &Client{
		config:     rest.CopyConfig(config),
		kube:       kube,
		settings:   settings,
		logger:     slog.New(slog.DiscardHandler),
		driver:     "secret",
		rbacWait:   2 * time.Minute,
		maxHistory: 10,
	}
	WithCacheDir(filepath.Join(os.TempDir(), "pluginruntime-helm"))(c)
	for _, opt := range opts {
		opt(c)
	}
	return c, nil
}

// NewFromKubeconfig is New for a kubeconfig file's current context.
func NewFromKubeconfig(path string, opts ...Option) (*Client, error) {
	config, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	return New(config, opts...)
}

// actionConfig is Helm's per-namespace configuration.
func (c *Client) actionConfig(namespace string) (*action.Configuration, error) {
	getter, err := newRESTGetter(c.config, namespace)
	if err != nil {
		return nil, err
	}
	cfg := new(action.Configuration)
	debug := func(format string, v ...any) { c.logger.Debug(fmt.Sprintf(format, v...), "component", "helm") }
	if err := cfg.Init(getter, namespace, c.driver, debug); err != nil {
		return nil, fmt.Errorf("helm configuration for namespace %s: %w", namespace, err)
	}
	return cfg, nil
}

// InstallOrUpgrade makes the release match rel: it installs the chart if
// the release does not exist, upgrades it if the chart version or values
// differ, and otherwise leaves it alone. The namespace is created when
// missing. Forbidden answers are retried for the RBAC wait.
func (c *Client) InstallOrUpgrade(ctx context.Context, rel Release) (*Result, error) {
	if rel.Name == "" || rel.Namespace == "" || rel.Chart.Name == "" {
		return nil, errors.New("helm release: Name, Namespace and Chart.Name are required")
	}
	ch, err := c.loadChart(rel.Chart)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = c.retryForbidden(ctx, "install "+rel.Name, func() error {
		if err := c.ensureNamespace(ctx, rel.Namespace); err != nil {
			return err
		}
		res, err = c.installOrUpgrade(ctx, rel, ch)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("helm release %s/%s: %w", rel.Namespace, rel.Name, err)
	}
	c.logger.Info("helm release reconciled", "release", rel.Name, "namespace", rel.Namespace,
		"action", res.Action, "revision", res.Release.Version, "chart", ch.Metadata.Name+"-"+ch.Metadata.Version)
	return res, nil
}

func (c *Client) installOrUpgrade(ctx context.Context, rel Release, ch *chart.Chart) (*Result, error) {
	cfg, err := c.actionConfig(rel.Namespace)
	if err != nil {
		return nil, err
	}
	values := rel.Values
	if values == nil {
		values = map[string]any{}
	}
	timeout := rel.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}

	history, err := cfg.Releases.History(rel.Name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(history) == 0) {
		install := action.NewInstall(cfg)
		install.ReleaseName = rel.Name
		install.Namespace = rel.Namespace
		install.Wait = rel.Wait
		install.Timeout = timeout
		r, err := install.RunWithContext(ctx, ch, values)
		if err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		return &Result{Action: Installed, Release: r}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("release history: %w", err)
	}

	last, err := cfg.Releases.Last(rel.Name)
	if err != nil {
		return nil, fmt.Errorf("last release: %w", err)
	}
	if err := c.recoverInterrupted(cfg, last, timeout, rel.Exclusive); err != nil {
		return nil, err
	}
	if same, err := unchanged(last, ch, values); err != nil {
		return nil, err
	} else if same {
		return &Result{Action: Unchanged, Release: last}, nil
	}

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = rel.Namespace
	upgrade.Wait = rel.Wait
	upgrade.Timeout = timeout
	upgrade.MaxHistory = c.maxHistory
	r, err := upgrade.RunWithContext(ctx, rel.Name, ch, values)
	if err != nil {
		return nil, fmt.Errorf("upgrade: %w", err)
	}
	return &Result{Action: Upgraded, Release: r}, nil
}

// recoverInterrupted unblocks a release left pending by an operation that
// died with its process — a plugin killed during an upgrade — which Helm
// would otherwise refuse to touch forever ("another operation is in
// progress"). A pending revision older than the operation timeout cannot
// belong to a live operation, so it is marked failed, which Helm upgrades
// from. A younger one may be live: that is a transient error, unless the
// caller is exclusive (Release.Exclusive), when no live operation can exist.
func (c *Client) recoverInterrupted(cfg *action.Configuration, last *release.Release, timeout time.Duration, exclusive bool) error {
	if last.Info == nil || !last.Info.Status.IsPending() {
		return nil
	}
	age := time.Since(last.Info.LastDeployed.Time)
	if age < timeout && !exclusive {
		return pluginerrors.NewTransient(fmt.Errorf("revision %d is %s since %s ago; waiting for that operation", last.Version, last.Info.Status, age.Round(time.Second)))
	}
	c.logger.Warn("marking an interrupted helm operation failed", "release", last.Name, "namespace", last.Namespace,
		"revision", last.Version, "status", last.Info.Status.String(), "age", age.Round(time.Second).String())
	last.SetStatus(release.StatusFailed, fmt.Sprintf("interrupted while %s; marked failed by the plugin runtime", last.Info.Status))
	if err := cfg.Releases.Update(last); err != nil {
		return fmt.Errorf("mark interrupted revision %d failed: %w", last.Version, err)
	}
	return nil
}

// unchanged reports whether the last revision is deployed from the same
// chart version with the same values, so that upgrading would only add a
// revision. Values are compared as JSON because the stored ones come back
// from JSON (numbers as float64).
func unchanged(last *release.Release, ch *chart.Chart, values map[string]any) (bool, error) {
	if last.Info == nil || last.Info.Status != release.StatusDeployed || last.Chart == nil || last.Chart.Metadata == nil {
		return false, nil
	}
	if last.Chart.Metadata.Name != ch.Metadata.Name || last.Chart.Metadata.Version != ch.Metadata.Version {
		return false, nil
	}
	want, err := json.Marshal(values)
	if err != nil {
		return false, fmt.Errorf("encode values: %w", err)
	}
	lastValues := last.Config
	if lastValues == nil {
		lastValues = map[string]any{}
	}
	have, err := json.Marshal(lastValues)
	if err != nil {
		return false, fmt.Errorf("encode deployed values: %w", err)
	}
	return bytes.Equal(want, have), nil
}

// loadChart downloads the chart (or reuses the cached download) and checks
// that its dependencies are bundled, as the helm CLI does: the SDK's install
// would otherwise silently render without them.
func (c *Client) loadChart(ref Chart) (*chart.Chart, error) {
	opts := action.ChartPathOptions{RepoURL: ref.RepoURL, Version: ref.Version}
	path, err := opts.LocateChart(ref.Name, c.settings)
	if err != nil {
		return nil, fmt.Errorf("locate chart %s %s in %s: %w", ref.Name, ref.Version, ref.RepoURL, err)
	}
	if ref.Digest != "" {
		if err := helmexec.VerifyDigest(path, ref.Digest); err != nil {
			return nil, pluginerrors.NewPermanent(fmt.Errorf("chart %s %s from %s: %w", ref.Name, ref.Version, ref.RepoURL, err))
		}
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", path, err)
	}
	if deps := ch.Metadata.Dependencies; len(deps) > 0 {
		if err := action.CheckDependencies(ch, deps); err != nil {
			return nil, fmt.Errorf("chart %s: %w", ch.Metadata.Name, err)
		}
	}
	return ch, nil
}

func (c *Client) ensureNamespace(ctx context.Context, name string) error {
	_, err := c.kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsNotFound(err) {
		return fmt.Errorf("get namespace %s: %w", name, err)
	}
	_, err = c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// Status returns the release's last revision, or ErrReleaseNotFound.
func (c *Client) Status(ctx context.Context, name, namespace string) (*release.Release, error) {
	var r *release.Release
	err := c.retryForbidden(ctx, "status "+name, func() error {
		cfg, err := c.actionConfig(namespace)
		if err != nil {
			return err
		}
		r, err = action.NewStatus(cfg).Run(name)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("helm status %s/%s: %w", namespace, name, err)
	}
	return r, nil
}

// Uninstall removes the release and its resources, waiting for them to be
// deleted. A release that does not exist is already uninstalled.
func (c *Client) Uninstall(ctx context.Context, name, namespace string) error {
	err := c.retryForbidden(ctx, "uninstall "+name, func() error {
		cfg, err := c.actionConfig(namespace)
		if err != nil {
			return err
		}
		u := action.NewUninstall(cfg)
		u.IgnoreNotFound = true
		u.Wait = true
		u.Timeout = 5 * time.Minute
		_, err = u.Run(name)
		return err
	})
	if err != nil {
		return fmt.Errorf("helm uninstall %s/%s: %w", namespace, name, err)
	}
	c.logger.Info("helm release uninstalled", "release", name, "namespace", namespace)
	return nil
}

// retryForbidden retries fn while the API server answers Forbidden, for up
// to the RBAC wait, with a doubling delay.
func (c *Client) retryForbidden(ctx context.Context, what string, fn func() error) error {
	deadline := time.Now().Add(c.rbacWait)
	delay := 250 * time.Millisecond
	for {
		err := fn()
		if err == nil || !isForbidden(err) || time.Now().Add(delay).After(deadline) {
			return err
		}
		c.logger.Info("forbidden; waiting for RBAC", "operation", what, "error", err.Error(), "retryIn", delay.String())
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// isForbidden recognises a Forbidden answer also where Helm has flattened
// the API error into text.
func isForbidden(err error) bool {
	return apierrors.IsForbidden(err) || strings.Contains(err.Error(), " is forbidden: ")
}
