package helm_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/repo"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm"
	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// controlPlane is the package's API server, started by the first test that needs it.
var controlPlane = testenv.NewShared(testenv.Options{})

func TestMain(m *testing.M) { controlPlane.Main(m) }

// serveChartRepo publishes the demo chart, in versions 0.1.0 and 0.2.0, from
// a local chart repository and returns its URL.
func serveChartRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, version := range []string{"0.1.0", "0.2.0"} {
		ch := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "demo", Version: version, AppVersion: version},
			// Save packages values.yaml from Raw, not from Values.
			Raw: []*chart.File{{Name: chartutil.ValuesfileName, Data: []byte("greeting: hello\nreplicas: 1\n")}},
			Templates: []*chart.File{{
				Name: "templates/configmap.yaml",
				Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-settings
data:
  greeting: {{ .Values.greeting | quote }}
  replicas: {{ .Values.replicas | quote }}
  chartVersion: {{ .Chart.Version | quote }}
`),
			}},
		}
		_, err := chartutil.Save(ch, dir)
		require.NoError(t, err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	index, err := repo.IndexDirectory(dir, srv.URL)
	require.NoError(t, err)
	require.NoError(t, index.WriteFile(dir+"/index.yaml", 0o644))
	return srv.URL
}

func newClient(t *testing.T, opts ...helm.Option) *helm.Client {
	t.Helper()
	c, err := helm.New(controlPlane.Env(t).Config, append([]helm.Option{helm.WithCacheDir(t.TempDir())}, opts...)...)
	require.NoError(t, err)
	return c
}

func configMap(t *testing.T, namespace, name string) *corev1.ConfigMap {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, controlPlane.Env(t).Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &cm))
	return &cm
}

func TestInstallUpgradeUninstall(t *testing.T) {
	ctx := context.Background()
	repoURL := serveChartRepo(t)
	c := newClient(t)
	ns := "helm-" + rand.String(5)
	rel := helm.Release{
		Name:      "demo",
		Namespace: ns,
		Chart:     helm.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0"},
		Values:    map[string]any{"greeting": "hoi", "replicas": 3},
	}

	var settingsVersion string
	t.Run("installs into a namespace it creates", func(t *testing.T) {
		res, err := c.InstallOrUpgrade(ctx, rel)
		require.NoError(t, err)
		assert.Equal(t, helm.Installed, res.Action)
		assert.Equal(t, 1, res.Release.Version)
		assert.Equal(t, release.StatusDeployed, res.Release.Info.Status)

		cm := configMap(t, ns, "demo-settings")
		assert.Equal(t, map[string]string{"greeting": "hoi", "replicas": "3", "chartVersion": "0.1.0"}, cm.Data)
		settingsVersion = cm.ResourceVersion
	})

	t.Run("re-installing the same release changes nothing", func(t *testing.T) {
		res, err := c.InstallOrUpgrade(ctx, rel)
		require.NoError(t, err)
		assert.Equal(t, helm.Unchanged, res.Action)
		assert.Equal(t, 1, res.Release.Version, "no new revision")
		assert.Equal(t, settingsVersion, configMap(t, ns, "demo-settings").ResourceVersion, "no object was written")
	})

	t.Run("new values upgrade", func(t *testing.T) {
		changed := rel
		changed.Values = map[string]any{"greeting": "moin", "replicas": 3}
		res, err := c.InstallOrUpgrade(ctx, changed)
		require.NoError(t, err)
		assert.Equal(t, helm.Upgraded, res.Action)
		assert.Equal(t, 2, res.Release.Version)
		assert.Equal(t, "moin", configMap(t, ns, "demo-settings").Data["greeting"])
	})

	t.Run("a new chart version upgrades", func(t *testing.T) {
		changed := rel
		changed.Values = map[string]any{"greeting": "moin", "replicas": 3}
		changed.Chart.Version = "0.2.0"
		res, err := c.InstallOrUpgrade(ctx, changed)
		require.NoError(t, err)
		assert.Equal(t, helm.Upgraded, res.Action)
		assert.Equal(t, 3, res.Release.Version)
		assert.Equal(t, "0.2.0", configMap(t, ns, "demo-settings").Data["chartVersion"])
	})

	t.Run("status reports the deployed revision", func(t *testing.T) {
		r, err := c.Status(ctx, "demo", ns)
		require.NoError(t, err)
		assert.Equal(t, 3, r.Version)
		assert.Equal(t, release.StatusDeployed, r.Info.Status)
		assert.Equal(t, "0.2.0", r.Chart.Metadata.Version)
	})

	t.Run("uninstall removes the release and its objects", func(t *testing.T) {
		require.NoError(t, c.Uninstall(ctx, "demo", ns))
		err := controlPlane.Env(t).Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "demo-settings"}, &corev1.ConfigMap{})
		assert.True(t, apierrors.IsNotFound(err), "ConfigMap deleted, got %v", err)
		_, err = c.Status(ctx, "demo", ns)
		assert.ErrorIs(t, err, helm.ErrReleaseNotFound)
	})

	t.Run("uninstalling a missing release succeeds", func(t *testing.T) {
		assert.NoError(t, c.Uninstall(ctx, "demo", ns))
	})
}

func TestInstallOrUpgradeErrors(t *testing.T) {
	ctx := context.Background()
	repoURL := serveChartRepo(t)
	c := newClient(t)
	tests := []struct {
		name    string
		rel     helm.Release
		wantErr string
	}{
		{
			name:    "a version the repository does not have",
			rel:     helm.Release{Name: "demo", Namespace: "default", Chart: helm.Chart{RepoURL: repoURL, Name: "demo", Version: "9.9.9"}},
			wantErr: `locate chart demo 9.9.9 in ` + repoURL,
		},
		{
			name:    "a chart the repository does not have",
			rel:     helm.Release{Name: "demo", Namespace: "default", Chart: helm.Chart{RepoURL: repoURL, Name: "other", Version: "0.1.0"}},
			wantErr: "locate chart other 0.1.0",
		},
		{
			name:    "a release without a namespace",
			rel:     helm.Release{Name: "demo", Chart: helm.Chart{RepoURL: repoURL, Name: "demo"}},
			wantErr: "Name, Namespace and Chart.Name are required",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.InstallOrUpgrade(ctx, tc.rel)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

// TestInstallVerifiesTheChartDigest pins the archive: the pinned one
// installs; any other (a repository that swapped it, a malformed pin) is a
// permanent error before anything is written.
func TestInstallVerifiesTheChartDigest(t *testing.T) {
	ctx := context.Background()
	repoURL := serveChartRepo(t)
	c := newClient(t)
	pinned := servedDigest(t, repoURL+"/demo-0.1.0.tgz")
	other := servedDigest(t, repoURL+"/demo-0.2.0.tgz")
	release := func(ns, digest string) helm.Release {
		return helm.Release{Name: "demo", Namespace: ns, Chart: helm.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0", Digest: digest}}
	}

	t.Run("the pinned archive installs", func(t *testing.T) {
		ns := "digest-" + rand.String(5)
		res, err := c.InstallOrUpgrade(ctx, release(ns, pinned))
		require.NoError(t, err)
		assert.Equal(t, helm.Installed, res.Action)
		assert.Equal(t, "hello", configMap(t, ns, "demo-settings").Data["greeting"])
	})
	refusals := []struct {
		name, digest, want string
	}{
		{"an archive that is not the pinned one", other, "the archive's digest is " + pinned + ", not the pinned " + other},
		{"a malformed pin", "sha256:" + strings.ToUpper(pinned[len("sha256:"):]), "is not sha256:<64 lower-case hex digits>"},
	}
	for _, tc := range refusals {
		t.Run(tc.name+" is refused, permanently, before anything is written", func(t *testing.T) {
			ns := "digest-" + rand.String(5)
			_, err := c.InstallOrUpgrade(ctx, release(ns, tc.digest))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "chart demo 0.1.0 from "+repoURL)
			assert.True(t, pluginerrors.IsPermanent(err), "a retry would download the same archive")
			_, err = c.Status(ctx, "demo", ns)
			assert.ErrorIs(t, err, helm.ErrReleaseNotFound, "no release was recorded")
			var namespace corev1.Namespace
			assert.True(t, apierrors.IsNotFound(controlPlane.Env(t).Client.Get(ctx, client.ObjectKey{Name: ns}, &namespace)), "not even the namespace was created")
		})
	}
}

// servedDigest is the digest of the archive the repository serves at url.
func servedDigest(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	path := filepath.Join(t.TempDir(), "archive.tgz")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = io.Copy(f, resp.Body)
	require.NoError(t, f.Close())
	require.NoError(t, err)
	digest, err := helmexec.ArchiveDigest(path)
	require.NoError(t, err)
	return digest
}

// TestInstallWaitsForRBAC starts an install as a user without permissions
// and grants them a moment later, as the platform does for a new plugin.
func TestInstallWaitsForRBAC(t *testing.T) {
	env := controlPlane.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	repoURL := serveChartRepo(t)
	user := "plugin-" + rand.String(5)
	u, err := env.Environment.AddUser(envtest.User{Name: user}, nil)
	require.NoError(t, err)
	logs := &lockedWriter{}
	c, err := helm.New(u.Config(),
		helm.WithCacheDir(t.TempDir()),
		helm.WithRBACWait(30*time.Second),
		helm.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	require.NoError(t, err)
	ns := "rbac-" + rand.String(5)

	done := make(chan error, 1)
	go func() {
		_, err := c.InstallOrUpgrade(ctx, helm.Release{Name: "demo", Namespace: ns, Chart: helm.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0"}})
		done <- err
	}()
	require.Eventually(t, func() bool { return logs.contains("forbidden; waiting for RBAC") }, 20*time.Second, 50*time.Millisecond,
		"the install is refused first")

	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	require.NoError(t, env.Client.Create(ctx, binding))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), binding) })

	select {
	case err := <-done:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("install did not finish after RBAC was granted")
	}
	assert.Equal(t, "hello", configMap(t, ns, "demo-settings").Data["greeting"], "the chart's default values")
}

func TestInstallGivesUpOnForbiddenAfterTheRBACWait(t *testing.T) {
	repoURL := serveChartRepo(t)
	u, err := controlPlane.Env(t).Environment.AddUser(envtest.User{Name: "nobody-" + rand.String(5)}, nil)
	require.NoError(t, err)
	c, err := helm.New(u.Config(), helm.WithCacheDir(t.TempDir()), helm.WithRBACWait(time.Second))
	require.NoError(t, err)
	began := time.Now()
	_, err = c.InstallOrUpgrade(context.Background(), helm.Release{Name: "demo", Namespace: "default", Chart: helm.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0"}})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "the API error survives wrapping: %v", err)
	assert.Less(t, time.Since(began), 10*time.Second)
}

// lockedWriter collects log output written from the client's goroutine.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) contains(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Contains(w.buf.String(), s)
}

// TestInstallOrUpgradeRecoversAnInterruptedUpgrade leaves a revision
// pending-upgrade, as a plugin killed mid-upgrade would, and expects the
// next call to get past it once the revision is older than the timeout.
func TestInstallOrUpgradeRecoversAnInterruptedUpgrade(t *testing.T) {
	ctx := context.Background()
	repoURL := serveChartRepo(t)
	c := newClient(t)
	ns := "pending-" + rand.String(5)
	rel := helm.Release{Name: "demo", Namespace: ns, Chart: helm.Chart{RepoURL: repoURL, Name: "demo", Version: "0.1.0"}, Timeout: time.Minute}
	_, err := c.InstallOrUpgrade(ctx, rel)
	require.NoError(t, err)

	interrupt := func(age time.Duration) {
		t.Helper()
		cfg := new(action.Configuration)
		flags := genericclioptions.NewConfigFlags(false)
		flags.KubeConfig, flags.Namespace = &controlPlane.Env(t).Kubeconfig, &ns
		require.NoError(t, cfg.Init(flags, ns, "secret", func(string, ...any) {}))
		last, err := cfg.Releases.Last("demo")
		require.NoError(t, err)
		last.Info.Status = release.StatusPendingUpgrade
		last.Info.LastDeployed = helmtime.Time{Time: time.Now().Add(-age)}
		require.NoError(t, cfg.Releases.Update(last))
	}

	rel.Values = map[string]any{"greeting": "after the crash"}
	t.Run("a pending revision younger than the timeout is a transient error", func(t *testing.T) {
		interrupt(time.Second)
		_, err := c.InstallOrUpgrade(ctx, rel)
		require.Error(t, err)
		assert.True(t, pluginerrors.IsTransient(err))
		assert.Contains(t, err.Error(), "revision 1 is pending-upgrade")
	})
	t.Run("an exclusive caller recovers a young one at once", func(t *testing.T) {
		interrupt(time.Second)
		exclusive := rel
		exclusive.Exclusive = true
		exclusive.Values = map[string]any{"greeting": "exclusive"}
		res, err := c.InstallOrUpgrade(ctx, exclusive)
		require.NoError(t, err)
		assert.Equal(t, helm.Upgraded, res.Action)
		assert.Equal(t, release.StatusDeployed, res.Release.Info.Status)
		assert.Equal(t, "exclusive", configMap(t, ns, "demo-settings").Data["greeting"])
	})
	t.Run("an older one is marked failed and upgraded from", func(t *testing.T) {
		interrupt(time.Hour)
		res, err := c.InstallOrUpgrade(ctx, rel)
		require.NoError(t, err)
		assert.Equal(t, helm.Upgraded, res.Action)
		assert.Equal(t, release.StatusDeployed, res.Release.Info.Status)
		assert.Equal(t, "after the crash", configMap(t, ns, "demo-settings").Data["greeting"])
	})
}
