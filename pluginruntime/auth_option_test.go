package pluginruntime_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
)

const (
	tokenIssuer   = "https://fundament.example.com"
	tokenAudience = "plugin-test-plugin"
)

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

// token signs claims that are valid now, after mutate.
func token(t *testing.T, key *ecdsa.PrivateKey, mutate func(jwt.MapClaims)) string {
	t.Helper()
	claims := jwt.MapClaims{
		"iss": tokenIssuer,
		"aud": tokenAudience,
		"sub": "plugin-controller",
		"iat": time.Now().Add(-time.Minute).Unix(),
		"exp": time.Now().Add(time.Hour).Unix(),
	}
	if mutate != nil {
		mutate(claims)
	}
	raw, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
	require.NoError(t, err)
	return raw
}

func withBearer[T any](msg *T, raw string) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if raw != "" {
		req.Header().Set("Authorization", "Bearer "+raw)
	}
	return req
}

// With WithAuth, RequestUninstall without a token the validator accepts is
// refused and uninstalls nothing; with one, it uninstalls.
func TestWithAuthGuardsRequestUninstall(t *testing.T) {
	platform := ecKey(t)
	validator, err := auth.NewValidator(auth.Config{Issuer: tokenIssuer, Audience: tokenAudience, Keys: auth.StaticKeys(platform.Public())})
	require.NoError(t, err)

	p := &installingPlugin{testPlugin: newTestPlugin()}
	var uninstalls atomic.Int32
	p.uninstall = func(context.Context) error {
		uninstalls.Add(1)
		return nil
	}
	rt := startRuntime(t, p, nil, pluginruntime.WithAuth(validator))
	p.host(t).ReportReady()
	ctx := context.Background()
	good := token(t, platform, nil)

	refused := []struct {
		name  string
		token string
	}{
		{"no token", ""},
		{"not a JWT", "not-a-token"},
		{"signed by another key", token(t, ecKey(t), nil)},
		{"expired", token(t, platform, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Minute).Unix() })},
		{"for another plugin", token(t, platform, func(c jwt.MapClaims) { c["aud"] = "plugin-other" })},
		{"from another issuer", token(t, platform, func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })},
		{"unsigned (alg none)", func() string {
			raw, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": tokenIssuer, "aud": tokenAudience, "exp": time.Now().Add(time.Hour).Unix()}).
				SignedString(jwt.UnsafeAllowNoneSignatureType)
			require.NoError(t, err)
			return raw
		}()},
	}
	for _, tc := range refused {
		t.Run("refused: "+tc.name, func(t *testing.T) {
			_, err := rt.client.RequestUninstall(ctx, withBearer(&pluginmetadatav1.RequestUninstallRequest{}, tc.token))
			require.Error(t, err)
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
			_, err = rt.client.GetStatus(ctx, withBearer(&pluginmetadatav1.GetStatusRequest{}, tc.token))
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "GetStatus is guarded too")
		})
	}
	status, err := rt.client.GetStatus(ctx, withBearer(&pluginmetadatav1.GetStatusRequest{}, good))
	require.NoError(t, err)
	assert.Equal(t, string(pluginruntime.PhaseRunning), status.Msg.GetPhase(), "nothing was uninstalled")
	assert.Zero(t, uninstalls.Load(), "Uninstall never ran")
	assert.Len(t, p.startCalls, 1, "Start was not stopped")
	assert.Equal(t, http.StatusOK, rt.get(t, "/readyz"), "the probes need no token")

	_, err = rt.client.RequestUninstall(ctx, withBearer(&pluginmetadatav1.RequestUninstallRequest{}, good))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return uninstalls.Load() == 1 }, 5*time.Second, 5*time.Millisecond, "a valid token uninstalls")
}

func TestWithAuthNilIsAnError(t *testing.T) {
	err := pluginruntime.RunContext(context.Background(), newTestPlugin(),
		pluginruntime.WithEnviron(baseEnviron), pluginruntime.WithAuth(nil), pluginruntime.WithAddr("127.0.0.1:0"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithAuth")
}
