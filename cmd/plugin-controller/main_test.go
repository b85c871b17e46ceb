package main

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/internal/plugincontroller"
	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/internal/testenv"
	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// controlPlane is the API server with the PluginInstallation CRD, started
// by the first test that needs it.
var controlPlane = testenv.NewShared(testenv.Options{
	Scheme:        pluginScheme(),
	ExtraCRDPaths: []string{filepath.Join(testenv.RepoRoot(), "internal", "plugincontroller", "crds")},
})

func pluginScheme() *runtime.Scheme {
	scheme := testenv.DefaultScheme()
	if err := pluginsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return scheme
}

func TestMain(m *testing.M) { controlPlane.Main(m) }

func TestParseFlags(t *testing.T) {
	required := []string{"--cluster-id=c1", "--organization-id=o1"}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, c config)
	}{
		{
			name: "a registry and the identity are enough, with defaults for the rest",
			args: append([]string{"--registry-url=https://plugins.example.com/v1"}, required...),
			check: func(t *testing.T, c config) {
				assert.Equal(t, 30*time.Second, c.pollInterval)
				assert.Equal(t, 30*time.Second, c.uninstallTimeout)
				assert.Nil(t, c.pluginURL(), "plugins are reached through their Service")
			},
		},
		{
			name: "the plugin base URL may name the namespace",
			args: append([]string{"--definitions-dir=/defs", "--plugin-base-url=http://gw.local/{namespace}/"}, required...),
			check: func(t *testing.T, c config) {
				assert.Equal(t, "http://gw.local/plugin-a--b/", c.pluginURL()("plugin-a--b"))
			},
		},
		{name: "no definition source is an error", args: required, wantErr: "exactly one of --registry-url and --definitions-dir"},
		{name: "two definition sources are an error", args: append([]string{"--registry-url=x", "--definitions-dir=y"}, required...), wantErr: "exactly one of"},
		{name: "the cluster id is required, plugins refuse to start without it", args: []string{"--definitions-dir=y", "--organization-id=o"}, wantErr: "--cluster-id is required"},
		{name: "the organization id is required", args: []string{"--definitions-dir=y", "--cluster-id=c"}, wantErr: "--organization-id is required"},
		{
			name: "the namespace is a flag",
			args: append([]string{"--definitions-dir=y", "--namespace=platform"}, required...),
			check: func(t *testing.T, c config) {
				assert.Equal(t, "platform", c.namespace)
			},
		},
		{name: "a zero poll interval is an error", args: append([]string{"--definitions-dir=y", "--poll-interval=0s"}, required...), wantErr: "--poll-interval must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseFlags(tc.args)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, c)
		})
	}
}

func TestNamespaceDefaultsToPodNamespace(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "from-downward-api")
	c, err := parseFlags([]string{"--definitions-dir=y", "--cluster-id=c", "--organization-id=o"})
	require.NoError(t, err)
	assert.Equal(t, "from-downward-api", c.namespace)
}

func TestOwnNamespace(t *testing.T) {
	mounted := filepath.Join(t.TempDir(), "namespace")
	require.NoError(t, os.WriteFile(mounted, []byte("fundament-system\n"), 0o644))
	missing := filepath.Join(t.TempDir(), "absent")
	tests := []struct {
		name    string
		flag    string
		file    string
		want    string
		wantErr string
	}{
		{name: "the flag (or POD_NAMESPACE) wins", flag: "platform", file: mounted, want: "platform"},
		{name: "in a pod, the mounted service account namespace", file: mounted, want: "fundament-system"},
		{name: "outside a cluster without the flag it is an error", file: missing, wantErr: "set --namespace or $POD_NAMESPACE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config{namespace: tc.flag}.ownNamespace(tc.file)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRunDeploysAnInstallation runs the command's wiring against a real API
// server through a kubeconfig, as `just plugin-controller` does.
func TestRunDeploysAnInstallation(t *testing.T) {
	env := controlPlane.Env(t)
	raw := []byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata: {name: smoke, version: v1.0.0}
spec:
  image: registry.example.com/smoke@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
`)
	dir := t.TempDir()
	path := filepath.Join(dir, "acme", "smoke", "1.0.0", "definition.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, raw, 0o644))

	c, err := parseFlags([]string{
		"--kubeconfig=" + env.Kubeconfig, "--definitions-dir=" + dir,
		"--cluster-id=cluster-1", "--organization-id=org-1", "--namespace=default",
		"--poll-interval=200ms", "--health-probe-bind-address=0",
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, c) }()
	defer func() {
		cancel()
		assert.NoError(t, <-done, "the controller stops cleanly")
	}()

	inst := &pluginsv1.PluginInstallation{
		ObjectMeta: metav1.ObjectMeta{Name: "acme--smoke"},
		Spec: pluginsv1.PluginInstallationSpec{DefinitionRef: pluginsv1.DefinitionRef{
			OrganizationName: "acme", PluginName: "smoke", PluginVersion: "1.0.0", DefinitionHash: definition.Hash(raw),
		}},
	}
	require.NoError(t, env.Client.Create(context.Background(), inst))
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "plugin-acme--smoke", Name: "plugin"}}
	require.NoError(t, testenv.Eventually(context.Background(), 30*time.Second, func(ctx context.Context) error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)
	}))
	assert.Equal(t, "cluster-1", deploy.Spec.Template.Spec.Containers[0].Env[0].Value)

	// The plugin trusts the key the command keeps in its namespace.
	secret := &corev1.Secret{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: plugincontroller.SigningKeySecretName}, secret))
	block, _ := pem.Decode(secret.Data[plugincontroller.SigningKeyField])
	require.NotNil(t, block)
	private, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	require.NoError(t, err)
	signer, err := plugincontroller.NewTokenSigner(private.(ed25519.PrivateKey))
	require.NoError(t, err)
	var published string
	for _, e := range deploy.Spec.Template.Spec.Containers[0].Env {
		if e.Name == pluginruntime.EnvTokenPublicKeys {
			published = e.Value
		}
	}
	assert.Equal(t, signer.Trust().PublicKeysPEM, published)
}
