package helmexec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

func TestKubeconfigRoundTripsThroughClientcmd(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("file-token"), 0o600))
	caFile := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(caFile, []byte("ca from file"), 0o600))
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	require.NoError(t, os.WriteFile(certFile, []byte("cert from file"), 0o600))
	require.NoError(t, os.WriteFile(keyFile, []byte("key from file"), 0o600))

	tests := []struct {
		name string
		in   *rest.Config
		// want is what the kubeconfig loads back as (in, when nil).
		want *rest.Config
		// secret must not be copied into the kubeconfig.
		secret string
	}{
		{
			name: "in-cluster: the token file and CA file are referenced, the token is not copied",
			in: &rest.Config{
				Host: "https://10.96.0.1:443", BearerToken: "in-memory-token", BearerTokenFile: tokenFile,
				TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
			},
			want: &rest.Config{
				Host: "https://10.96.0.1:443", BearerToken: "file-token", BearerTokenFile: tokenFile,
				TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
			},
			secret: "in-memory-token",
		},
		{
			name: "client certificate and CA as data",
			in: &rest.Config{
				Host: "https://127.0.0.1:6443",
				TLSClientConfig: rest.TLSClientConfig{
					CAData: []byte("ca data"), CertData: []byte("cert data"), KeyData: []byte("key data"), ServerName: "kubernetes",
				},
			},
		},
		{
			name: "client certificate as files",
			in: &rest.Config{
				Host:            "https://127.0.0.1:6443",
				TLSClientConfig: rest.TLSClientConfig{CertFile: certFile, KeyFile: keyFile, CAData: []byte("ca")},
			},
			secret: "key from file",
		},
		{
			name: "bearer token, insecure: the CA is dropped as the client would refuse both",
			in: &rest.Config{
				Host: "https://api.example:6443", BearerToken: "t0ken",
				TLSClientConfig: rest.TLSClientConfig{Insecure: true, CAData: []byte("ignored")},
			},
			want: &rest.Config{
				Host: "https://api.example:6443", BearerToken: "t0ken",
				TLSClientConfig: rest.TLSClientConfig{Insecure: true},
			},
		},
		{
			name: "basic auth and impersonation",
			in: &rest.Config{
				Host: "https://api.example:6443", Username: "admin", Password: "secret",
				TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")},
				Impersonate: rest.ImpersonationConfig{
					UserName: "system:serviceaccount:rook-ceph:plugin", Groups: []string{"system:serviceaccounts"},
					Extra: map[string][]string{"scopes": {"install"}},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := helmexec.Kubeconfig(tc.in)
			require.NoError(t, err)
			if tc.secret != "" {
				assert.NotContains(t, string(data), tc.secret)
			}

			loaded, err := clientcmd.Load(data)
			require.NoError(t, err)
			got, err := clientcmd.NewDefaultClientConfig(*loaded, nil).ClientConfig()
			require.NoError(t, err)

			want := tc.want
			if want == nil {
				want = tc.in
			}
			assert.Equal(t, want.Host, got.Host)
			assert.Equal(t, want.TLSClientConfig, got.TLSClientConfig)
			assert.Equal(t, want.BearerToken, got.BearerToken)
			assert.Equal(t, want.BearerTokenFile, got.BearerTokenFile)
			assert.Equal(t, want.Username, got.Username)
			assert.Equal(t, want.Password, got.Password)
			assert.Equal(t, want.Impersonate, got.Impersonate)
		})
	}
}

func TestKubeconfigNeedsAHost(t *testing.T) {
	_, err := helmexec.Kubeconfig(&rest.Config{BearerToken: "t"})
	assert.ErrorContains(t, err, "no host")
}
