package plugincontroller

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
)

// renderedEnv is the environment of the plugin of an installation named
// name, rendered with tokens.
func renderedEnv(name string, tokens *TokenSigner) []corev1.EnvVar {
	inst, def := testInstallation(nil)
	inst.Name = name
	objs := RenderObjects(RenderInput{Installation: inst, Definition: def, Cluster: testCluster, Tokens: tokens.Trust()})
	return objs.Deployment.Spec.Template.Spec.Containers[0].Env
}

// envValue is the value of the variable name in env.
func envValue(t *testing.T, env []corev1.EnvVar, name string) string {
	t.Helper()
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	t.Fatalf("%s is not in the environment %v", name, env)
	return ""
}

func TestRenderedDeploymentRequiresTokens(t *testing.T) {
	env := renderedEnv("acme--widgets", testTokens)
	tests := []struct {
		variable string
		want     string
	}{
		{pluginruntime.EnvTokenIssuer, "plugin-controller.plugins.fundament.io"},
		{pluginruntime.EnvTokenAudience, "acme--widgets"},
		{pluginruntime.EnvTokenPublicKeys, testTokens.Trust().PublicKeysPEM},
	}
	for _, tc := range tests {
		t.Run(tc.variable, func(t *testing.T) {
			assert.Equal(t, tc.want, envValue(t, env, tc.variable))
		})
	}
	t.Run("the public key is one PEM PUBLIC KEY block and nothing else", func(t *testing.T) {
		block, rest := pem.Decode([]byte(envValue(t, env, pluginruntime.EnvTokenPublicKeys)))
		require.NotNil(t, block)
		assert.Equal(t, "PUBLIC KEY", block.Type)
		assert.Empty(t, rest)
	})
	t.Run("another installation's plugin has another audience", func(t *testing.T) {
		other := renderedEnv("acme--gadgets", testTokens)
		assert.Equal(t, "acme--gadgets", envValue(t, other, pluginruntime.EnvTokenAudience))
	})
}

// TestANewSigningKeyUpdatesTheDeployment: the public key is part of what
// the controller compares, so a Deployment of the old key is repaired to
// the new one (and, its pod template changed, rolls).
func TestANewSigningKeyUpdatesTheDeployment(t *testing.T) {
	inst, def := testInstallation(nil)
	render := func(tokens *TokenSigner) *RenderInput {
		return &RenderInput{Installation: inst, Definition: def, Cluster: testCluster, Tokens: tokens.Trust()}
	}
	newKey := newTestSigner(t)
	live := defaulted(RenderObjects(*render(testTokens)).Deployment)
	desired := RenderObjects(*render(newKey)).Deployment

	assert.Equal(t, patchLive, syncDeployment(desired, live))
	assert.Equal(t, newKey.Trust().PublicKeysPEM, envValue(t, live.Spec.Template.Spec.Containers[0].Env, pluginruntime.EnvTokenPublicKeys))
	assert.Equal(t, inSync, syncDeployment(desired, live), "repaired, it is in sync")
}

// TestMintedTokensOpenOnlyTheirPlugin runs the plugin runtime with exactly
// the environment the controller renders, and calls it as the controller
// does: only a fresh token of the controller's key for this installation
// is let through.
func TestMintedTokensOpenOnlyTheirPlugin(t *testing.T) {
	tokens := newTestSigner(t)
	url, _ := startTestPlugin(t, renderedEnv("acme--widgets", tokens))
	client := &MetadataClient{BaseURL: func(string) string { return url }}

	expired := *tokens
	expired.now = func() time.Time { return time.Now().Add(-2 * TokenLifetime) }
	mint := func(s *TokenSigner, installation string) string {
		token, err := s.Mint(installation)
		require.NoError(t, err)
		return token
	}
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"a token for the installation is accepted", mint(tokens, "acme--widgets"), true},
		{"a token for another installation is refused", mint(tokens, "acme--gadgets"), false},
		{"an expired token is refused", mint(&expired, "acme--widgets"), false},
		{"a token of another key is refused", mint(newTestSigner(t), "acme--widgets"), false},
		{"no token is refused", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.GetStatus(context.Background(), PluginCall{Namespace: "ns", Token: tc.token})
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
		})
	}
}

// validatorFromEnv is the runtime's check as the rendered variables
// configure it (the runtime's own reading of them is unexported), on a
// clock of its own.
func validatorFromEnv(t *testing.T, env []corev1.EnvVar, now time.Time) *auth.Validator {
	t.Helper()
	block, _ := pem.Decode([]byte(envValue(t, env, pluginruntime.EnvTokenPublicKeys)))
	require.NotNil(t, block)
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	require.NoError(t, err)
	v, err := auth.NewValidator(auth.Config{
		Issuer:   envValue(t, env, pluginruntime.EnvTokenIssuer),
		Audience: envValue(t, env, pluginruntime.EnvTokenAudience),
		Keys:     auth.StaticKeySet(key),
		Now:      func() time.Time { return now },
	})
	require.NoError(t, err)
	return v
}

func TestMintedTokenClaims(t *testing.T) {
	tokens := newTestSigner(t)
	minted := time.Now()
	tokens.now = func() time.Time { return minted }
	token, err := tokens.Mint("acme--widgets")
	require.NoError(t, err)
	env := renderedEnv("acme--widgets", tokens)

	t.Run("claims name the controller, the installation and a lifetime of a minute", func(t *testing.T) {
		claims, err := validatorFromEnv(t, env, minted).Validate(context.Background(), token)
		require.NoError(t, err)
		assert.Equal(t, TokenIssuer, claims.Issuer)
		assert.Equal(t, TokenIssuer, claims.Subject)
		assert.Equal(t, []string{"acme--widgets"}, []string(claims.Audience))
		assert.WithinDuration(t, minted.Add(TokenLifetime), claims.ExpiresAt.Time, time.Second)
		assert.Equal(t, claims.IssuedAt, claims.NotBefore)
	})
	clocks := []struct {
		name     string
		plugin   time.Time
		accepted bool
	}{
		{"a plugin whose clock is 20 s behind accepts it", minted.Add(-20 * time.Second), true},
		{"accepted until shortly before its lifetime ends", minted.Add(TokenLifetime - 2*time.Second), true},
		{"refused after its lifetime", minted.Add(TokenLifetime + time.Second), false},
	}
	for _, tc := range clocks {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validatorFromEnv(t, env, tc.plugin).Validate(context.Background(), token)
			assert.Equal(t, tc.accepted, err == nil, "%v", err)
		})
	}
	t.Run("refused by another installation's plugin", func(t *testing.T) {
		_, err := validatorFromEnv(t, renderedEnv("acme--gadgets", tokens), minted).Validate(context.Background(), token)
		assert.ErrorContains(t, err, "aud")
	})
}

func TestTokenSignerPrintsNoKey(t *testing.T) {
	tokens := newTestSigner(t)
	seed := tokens.key.Seed()
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		printed := fmt.Sprintf(format, tokens)
		assert.Contains(t, printed, "token signer", format)
		assert.NotContains(t, printed, strings.Trim(fmt.Sprint(seed), "[]"), format)
		assert.NotContains(t, printed, hex.EncodeToString(seed), format)
	}
}
