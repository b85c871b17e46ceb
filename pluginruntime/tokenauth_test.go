package pluginruntime_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
)

func publicKeyPEM(t *testing.T, keys ...*ecdsa.PrivateKey) string {
	t.Helper()
	var b strings.Builder
	for _, key := range keys {
		der, err := x509.MarshalPKIXPublicKey(key.Public())
		require.NoError(t, err)
		require.NoError(t, pem.Encode(&b, &pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	}
	return b.String()
}

func tokenEnviron(t *testing.T, keys ...*ecdsa.PrivateKey) []string {
	return []string{
		"FUNDAMENT_TOKEN_ISSUER=" + tokenIssuer,
		"FUNDAMENT_TOKEN_AUDIENCE=" + tokenAudience,
		"FUNDAMENT_TOKEN_PUBLIC_KEYS=" + publicKeyPEM(t, keys...),
	}
}

// With the FUNDAMENT_TOKEN_ variables set, and no code in the plugin, the
// metadata API answers only the platform: GetStatus and RequestUninstall
// without a valid token are Unauthenticated (HTTP 401) and uninstall
// nothing; with one, both work.
func TestTokenEnvironmentGuardsTheMetadataAPI(t *testing.T) {
	platform := ecKey(t)
	p := &installingPlugin{testPlugin: newTestPlugin()}
	var uninstalls atomic.Int32
	p.uninstall = func(context.Context) error {
		uninstalls.Add(1)
		return nil
	}
	rt := startRuntime(t, p, tokenEnviron(t, platform))
	p.host(t).ReportReady()
	ctx := context.Background()

	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"signed by another key", token(t, ecKey(t), nil)},
	} {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			_, err := rt.client.GetStatus(ctx, withBearer(&pluginmetadatav1.GetStatusRequest{}, tc.token))
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "GetStatus: %v", err)
			_, err = rt.client.RequestUninstall(ctx, withBearer(&pluginmetadatav1.RequestUninstallRequest{}, tc.token))
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "RequestUninstall: %v", err)
		})
	}
	t.Run("refused as HTTP 401 on the wire", func(t *testing.T) {
		res, err := http.Post(rt.baseURL+getStatusPath, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "%s", body)
		assert.Contains(t, string(body), "unauthenticated")
	})
	t.Run("refused before its body is read", func(t *testing.T) {
		// Read, a body over the cap would be resource_exhausted (429).
		req, err := http.NewRequest(http.MethodPost, rt.baseURL+getStatusPath, unsized{io.LimitReader(zeros{}, 1<<20)})
		require.NoError(t, err)
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/proto")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
	})
	assert.Zero(t, uninstalls.Load(), "no refused call uninstalled")
	assert.Equal(t, http.StatusOK, rt.get(t, "/livez"), "the probes need no token")
	assert.Equal(t, http.StatusOK, rt.get(t, "/readyz"), "the probes need no token")

	good := token(t, platform, nil)
	status, err := rt.client.GetStatus(ctx, withBearer(&pluginmetadatav1.GetStatusRequest{}, good))
	require.NoError(t, err)
	assert.Equal(t, string(pluginruntime.PhaseRunning), status.Msg.GetPhase())
	_, err = rt.client.RequestUninstall(ctx, withBearer(&pluginmetadatav1.RequestUninstallRequest{}, good))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return uninstalls.Load() == 1 }, 5*time.Second, 5*time.Millisecond, "a valid token uninstalls")
}

// Two keys in FUNDAMENT_TOKEN_PUBLIC_KEYS are a rotation: tokens of
// either verify.
func TestTokenEnvironmentAcceptsEveryListedKey(t *testing.T) {
	old, next := ecKey(t), ecKey(t)
	rt := startRuntime(t, newTestPlugin(), tokenEnviron(t, old, next))
	for name, key := range map[string]*ecdsa.PrivateKey{"old key": old, "new key": next} {
		_, err := rt.client.GetStatus(context.Background(), withBearer(&pluginmetadatav1.GetStatusRequest{}, token(t, key, nil)))
		assert.NoError(t, err, name)
	}
}

// Without the variables the metadata API answers as before, and the log
// says so.
func TestWithoutTokenEnvironmentTheMetadataAPIIsOpen(t *testing.T) {
	rt := startRuntime(t, newTestPlugin(), nil)
	_, err := rt.client.GetStatus(context.Background(), connect.NewRequest(&pluginmetadatav1.GetStatusRequest{}))
	require.NoError(t, err)
	assert.Len(t, rt.logs.records(t, "the metadata API answers without a token: set FUNDAMENT_TOKEN_ISSUER, FUNDAMENT_TOKEN_AUDIENCE, FUNDAMENT_TOKEN_PUBLIC_KEYS to require one"), 1)
}

// A token configuration that is partial or unreadable stops the plugin at
// start: an API meant to be guarded never runs open.
func TestInvalidTokenEnvironmentRefusesToStart(t *testing.T) {
	key := ecKey(t)
	der, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	privatePEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))

	tests := []struct {
		name    string
		environ []string
		wantErr []string
	}{
		{
			name:    "an issuer alone names the two missing variables",
			environ: []string{"FUNDAMENT_TOKEN_ISSUER=" + tokenIssuer},
			wantErr: []string{"FUNDAMENT_TOKEN_AUDIENCE and FUNDAMENT_TOKEN_PUBLIC_KEYS not set"},
		},
		{
			name:    "keys that are not PEM",
			environ: []string{"FUNDAMENT_TOKEN_ISSUER=" + tokenIssuer, "FUNDAMENT_TOKEN_AUDIENCE=" + tokenAudience, "FUNDAMENT_TOKEN_PUBLIC_KEYS=secret"},
			wantErr: []string{"FUNDAMENT_TOKEN_PUBLIC_KEYS: text that is not a PEM block"},
		},
		{
			name:    "a private key is refused, not used",
			environ: []string{"FUNDAMENT_TOKEN_ISSUER=" + tokenIssuer, "FUNDAMENT_TOKEN_AUDIENCE=" + tokenAudience, "FUNDAMENT_TOKEN_PUBLIC_KEYS=" + privatePEM},
			wantErr: []string{`key 1: a "EC PRIVATE KEY" block is not a public key`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The deadline only ends a runtime that wrongly started.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			err := pluginruntime.RunContext(ctx, newTestPlugin(),
				pluginruntime.WithEnviron(append(append([]string{}, baseEnviron...), tc.environ...)),
				pluginruntime.WithAddr("127.0.0.1:0"), pluginruntime.WithSignals(), pluginruntime.WithLogOutput(io.Discard))
			require.Error(t, err, "the runtime must not start")
			for _, want := range tc.wantErr {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}
