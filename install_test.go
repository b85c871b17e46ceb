package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// bareControlPlane is an API server without Rook's CRDs: the chart installs
// them, as on a fresh cluster (Helm refuses to adopt CRDs it did not make).
func bareControlPlane(t *testing.T) *testenv.Env {
	t.Helper()
	scheme, err := newScheme()
	require.NoError(t, err)
	// The snapshot API's CRDs, as on the package's control plane: a
	// distribution ships them, the plugin does not install them.
	cp, err := testenv.Start(testenv.Options{Scheme: scheme, SnapshotCRDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cp.Stop() })
	return cp
}

var (
	helmHelperOnce sync.Once
	helmHelperDir  string
	helmHelperErr  error
)

// useHelmHelper builds the real ceph-rook-helm once per test process (with
// the production flags, so the Go build cache the other binary builds warm
// serves it) and puts it on $PATH, where Start's installer finds it: the
// test binary has no helper beside it.
func useHelmHelper(t *testing.T) {
	t.Helper()
	helmHelperOnce.Do(func() {
		if helmHelperDir, helmHelperErr = os.MkdirTemp("", "ceph-rook-helm-"); helmHelperErr != nil {
			return
		}
		helmHelperErr = pluginproc.BuildHelm(context.Background(), testenv.RepoRoot(), filepath.Join(helmHelperDir, helmBinary))
	})
	require.NoError(t, helmHelperErr)
	t.Setenv("PATH", helmHelperDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// startedPlugin is one run of Plugin.Start, as the runtime makes it.
type startedPlugin struct {
	host   *recordingHost
	writes *writeCounter
	cancel context.CancelFunc
	done   chan error
}

func startPlugin(t *testing.T, cp *testenv.Env, repo *chartrepo.Server) *startedPlugin {
	t.Helper()
	writes := &writeCounter{}
	p := &Plugin{
		definition: definition.MustParseDefinition(definitionYAML),
		getenv: func(key string) string {
			switch key {
			case EnvChartRepository:
				return repo.URL
			case EnvDevInsecureCharts:
				return "true" // the test's repository is served over http
			case EnvChartDigest:
				return repo.Digest
			}
			return ""
		},
		restConfig: func() (*rest.Config, error) {
			cfg := configAsPlugin(t, cp)
			cfg.Wrap(writes.wrap)
			return cfg, nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp := &startedPlugin{host: &recordingHost{}, writes: writes, cancel: cancel, done: make(chan error, 1)}
	go func() { sp.done <- p.Start(ctx, sp.host) }()
	err := testenv.Eventually(ctx, 3*time.Minute, func(context.Context) error {
		select {
		case err := <-sp.done:
			return fmt.Errorf("Start returned: %w", err)
		default:
		}
		if got := sp.host.last(); got.Phase != pluginruntime.PhaseRunning {
			return fmt.Errorf("plugin status %+v", got)
		}
		return nil
	})
	require.NoError(t, err)
	return sp
}

func (sp *startedPlugin) stop(t *testing.T) {
	sp.cancel()
	select {
	case err := <-sp.done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
}

func TestInstallFromTheRookChartIsIdempotent(t *testing.T) {
	cp := bareControlPlane(t)
	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	ctx := context.Background()
	// Start installs the chart through the helper process, as in production.
	useHelmHelper(t)
	// As in the plugin's pod: no home to write to (uid 65532 has none, and
	// the root filesystem is read-only). Helm must keep to its temp folder,
	// so a home that is a file, under which nothing can be made, changes
	// nothing.
	notADir := filepath.Join(t.TempDir(), "home-is-a-file")
	require.NoError(t, os.WriteFile(notADir, nil, 0o600))
	t.Setenv("HOME", notADir)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_DATA_HOME", "")

	first := startPlugin(t, cp, repo)
	assert.True(t, first.host.ready, "ReportReady once the manager runs")
	statuses := first.host.statuses
	require.NotEmpty(t, statuses)
	assert.Equal(t, pluginruntime.PhaseInstalling, statuses[0].Phase, "Start reports installing first")

	var operator appsv1.Deployment
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: "rook-ceph", Name: "rook-ceph-operator"}, &operator),
		"the chart's operator Deployment exists")
	for _, name := range append([]string{"disks.ceph.fundament.io", "diskpools.ceph.fundament.io", "objectbucketclaims.objectbucket.io"}, rookCRDs...) {
		var crd apiextensionsv1.CustomResourceDefinition
		assert.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Name: name}, &crd), "CRD %s", name)
	}
	var cluster cephv1.CephCluster
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: "rook-ceph", Name: CephClusterName}, &cluster))
	assert.False(t, cluster.Spec.Storage.UseAllNodes)
	// The CephCluster's daemons run as service accounts the operator chart
	// creates in its own namespace only (why LoadConfig keeps the cluster
	// there): each exists beside the CephCluster.
	for _, name := range []string{"rook-ceph-osd", "rook-ceph-mgr", "rook-ceph-cmd-reporter", "rook-ceph-purge-osd", "rook-ceph-rgw", "rook-ceph-default"} {
		var sa corev1.ServiceAccount
		assert.NoError(t, cp.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, &sa),
			"ServiceAccount %s in the CephCluster's namespace", name)
	}
	assert.Equal(t, 1, helmRevisions(t, cp), "one release revision")
	first.stop(t)

	// Someone configures storage on the CephCluster by hand meanwhile.
	cluster.Spec.Storage.Nodes = []cephv1.Node{{Name: "by-hand", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-0xhand"}}}}}
	require.NoError(t, cp.Client.Update(ctx, &cluster))

	second := startPlugin(t, cp, repo)
	time.Sleep(2 * time.Second) // every controller has reconciled what it found
	// The helm helper talks to the API server from its own process, so its
	// requests bypass this transport wrapper, which counts the plugin's own
	// writes (CRDs, the CephCluster, the reconcilers'). That Helm wrote
	// nothing shows in the release: an upgrade, even of identical values,
	// would add a revision.
	assert.Empty(t, second.writes.snapshot(), "a second Start applies and creates nothing")
	assert.Equal(t, 1, helmRevisions(t, cp), "no upgrade of an identical release")
	var clusters cephv1.CephClusterList
	require.NoError(t, cp.Client.List(ctx, &clusters))
	assert.Len(t, clusters.Items, 1, "no second CephCluster")
	require.NoError(t, cp.Client.Get(ctx, client.ObjectKeyFromObject(&cluster), &cluster))
	require.Len(t, cluster.Spec.Storage.Nodes, 1)
	assert.Equal(t, "/dev/disk/by-id/wwn-0xhand", cluster.Spec.Storage.Nodes[0].Devices[0].Name,
		"a pre-existing CephCluster's spec.storage survives")
	second.stop(t)
}

// TestInstallRefusesAChartThatIsNotThePinnedOne: the configured digest
// reaches the helper, which refuses a swapped archive permanently (a retry
// would download the same bytes) before Helm writes anything.
func TestInstallRefusesAChartThatIsNotThePinnedOne(t *testing.T) {
	env := controlPlane.Env(t)
	repo, err := chartrepo.Serve("127.0.0.1:0", cachedir.RookChartArchive())
	require.NoError(t, err)
	t.Cleanup(func() { _ = repo.Close() })
	useHelmHelper(t)
	charts, err := newExecInstaller(configAsPlugin(t, env), discardLog)
	require.NoError(t, err)
	cfg := testConfigFor(t, "digest-rook")
	cfg.ChartRepository = repo.URL
	cfg.ChartDigest = "sha256:" + strings.Repeat("0", 64)

	_, err = install(context.Background(), env.Client, charts, cfg, testKubernetesVersion, discardLog)

	require.Error(t, err)
	assert.True(t, pluginerrors.IsPermanent(err), "permanent: %v", err)
	assert.Contains(t, err.Error(), "the archive's digest is "+repo.Digest+", not the pinned "+cfg.ChartDigest)
	var records corev1.ConfigMapList
	require.NoError(t, env.Client.List(context.Background(), &records, client.InNamespace(cfg.OperatorNamespace), client.MatchingLabels{"owner": "helm"}))
	assert.Empty(t, records.Items, "no release was recorded")
}

// helmRevisions counts the release's revisions: Helm keeps one record
// each, a ConfigMap (the plugin holds no Secrets), never a Secret.
func helmRevisions(t *testing.T, cp *testenv.Env) int {
	release := client.MatchingLabels{"owner": "helm", "name": RookReleaseName}
	var secrets corev1.SecretList
	require.NoError(t, cp.Client.List(context.Background(), &secrets, client.InNamespace("rook-ceph"), release))
	require.Empty(t, secrets.Items, "a release recorded in a Secret")
	var records corev1.ConfigMapList
	require.NoError(t, cp.Client.List(context.Background(), &records, client.InNamespace("rook-ceph"), release))
	return len(records.Items)
}

func TestAMissingHelmHelperNamesWhereItLookedAndHowToBuildIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())

	_, err := newExecInstaller(rest.CopyConfig(controlPlane.Env(t).Config), nil)

	require.Error(t, err)
	assert.Contains(t, err.Error(), "ceph-rook-helm is neither beside this executable")
	assert.Contains(t, err.Error(), "nor on $PATH")
	assert.Contains(t, err.Error(), "go build ./cmd/ceph-rook-helm")
}

// discardLog is a logger for code under test whose log lines no test reads.
var discardLog = slog.New(slog.DiscardHandler)

// TestEnsureCephClusterAppliesChangedSettings: a changed CEPH_IMAGE or
// daemon count reaches the CephCluster the plugin created, with nothing
// else of it touched; one someone else created is left alone.
func TestEnsureCephClusterAppliesChangedSettings(t *testing.T) {
	env := controlPlane.Env(t)
	ctx := context.Background()
	cfg := testConfigFor(t, "settings-rook")
	_, err := ensureCephCluster(ctx, env.Client, cfg, discardLog)
	require.NoError(t, err)
	key := client.ObjectKey{Namespace: cfg.ClusterNamespace, Name: CephClusterName}
	var cluster cephv1.CephCluster
	require.NoError(t, env.Client.Get(ctx, key, &cluster))
	t.Cleanup(func() { _ = env.Client.Delete(ctx, &cluster) })
	// Another writer's fields, which the settings patch must keep.
	cluster.Spec.Storage.Nodes = []cephv1.Node{{Name: "n1", Selection: cephv1.Selection{Devices: []cephv1.Device{{Name: "/dev/disk/by-id/wwn-0x1"}}}}}
	cluster.Spec.Network.Provider = cephv1.NetworkProviderHost
	require.NoError(t, env.Client.Update(ctx, &cluster))

	changed := cfg
	require.False(t, cluster.Spec.Monitoring.MetricsDisabled, "metrics run by default")
	changed.CephImage, changed.MonCount, changed.MgrCount, changed.AllowMultiplePerNode = "quay.io/ceph/ceph:v19.2.4", 1, 1, true
	changed.Metrics = false
	_, err = ensureCephCluster(ctx, env.Client, changed, discardLog)
	require.NoError(t, err)
	require.NoError(t, env.Client.Get(ctx, key, &cluster))
	assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", cluster.Spec.CephVersion.Image)
	assert.Equal(t, 1, cluster.Spec.Mon.Count)
	assert.Equal(t, 1, cluster.Spec.Mgr.Count)
	assert.True(t, cluster.Spec.Mon.AllowMultiplePerNode)
	assert.True(t, cluster.Spec.Mgr.AllowMultiplePerNode)
	assert.True(t, cluster.Spec.Monitoring.MetricsDisabled, "METRICS=false reaches Rook")
	assert.Len(t, cluster.Spec.Storage.Nodes, 1, "the device list is the DiskPool reconciler's")
	assert.Equal(t, cephv1.NetworkProviderHost, cluster.Spec.Network.Provider, "another writer's field")

	t.Run("an unchanged configuration writes nothing", func(t *testing.T) {
		rv := cluster.ResourceVersion
		_, err := ensureCephCluster(ctx, env.Client, changed, discardLog)
		require.NoError(t, err)
		require.NoError(t, env.Client.Get(ctx, key, &cluster))
		assert.Equal(t, rv, cluster.ResourceVersion)
	})
	t.Run("metrics on again clears metricsDisabled", func(t *testing.T) {
		on := changed
		on.Metrics = true
		_, err := ensureCephCluster(ctx, env.Client, on, discardLog)
		require.NoError(t, err)
		require.NoError(t, env.Client.Get(ctx, key, &cluster))
		assert.False(t, cluster.Spec.Monitoring.MetricsDisabled)
	})
	t.Run("a CephCluster the plugin did not create is left alone", func(t *testing.T) {
		delete(cluster.Labels, cephv1alpha1.ManagedByLabel)
		require.NoError(t, env.Client.Update(ctx, &cluster))
		rv := cluster.ResourceVersion
		_, err := ensureCephCluster(ctx, env.Client, cfg, discardLog)
		require.NoError(t, err)
		require.NoError(t, env.Client.Get(ctx, key, &cluster))
		assert.Equal(t, rv, cluster.ResourceVersion)
		assert.Equal(t, "quay.io/ceph/ceph:v19.2.4", cluster.Spec.CephVersion.Image)
	})
}
