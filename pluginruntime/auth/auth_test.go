package auth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
	pluginmetadatav1 "github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/gen/pluginmetadata/v1/pluginmetadatav1connect"
)

const (
	issuer   = "https://fundament.example.com"
	audience = "plugin-storage"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

func validClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss":   issuer,
		"aud":   []string{audience, "console"},
		"sub":   "user-42",
		"iat":   now.Add(-time.Minute).Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"orgID": "org-1",
	}
}

func sign(t *testing.T, key crypto.Signer, claims jwt.MapClaims, mutate ...func(jwt.MapClaims)) string {
	t.Helper()
	for _, m := range mutate {
		m(claims)
	}
	method := jwt.SigningMethod(jwt.SigningMethodES256)
	if _, ok := key.(*rsa.PrivateKey); ok {
		method = jwt.SigningMethodRS256
	}
	raw, err := jwt.NewWithClaims(method, claims).SignedString(key)
	require.NoError(t, err)
	return raw
}

// whoAmI is a Connect service behind the interceptor that answers with the
// subject the interceptor verified.
type whoAmI struct {
	pluginmetadatav1connect.UnimplementedPluginMetadataServiceHandler
}

func (whoAmI) GetStatus(ctx context.Context, _ *connect.Request[pluginmetadatav1.GetStatusRequest]) (*connect.Response[pluginmetadatav1.GetStatusResponse], error) {
	claims, ok := auth.ClaimsFrom(ctx)
	if !ok {
		return nil, connect.NewError(connect.CodeInternal, nil)
	}
	org, _ := claims.Extra["orgID"].(string)
	msg := claims.Subject + "@" + org
	return connect.NewResponse(&pluginmetadatav1.GetStatusResponse{Message: &msg}), nil
}

func TestInterceptor(t *testing.T) {
	key, otherKey := newKey(t), newKey(t)
	validator, err := auth.NewValidator(auth.Config{
		Issuer:   issuer,
		Audience: audience,
		Keys:     auth.StaticKeys(&key.PublicKey),
		Now:      func() time.Time { return now },
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(pluginmetadatav1connect.NewPluginMetadataServiceHandler(whoAmI{}, connect.WithInterceptors(validator.Interceptor())))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client := pluginmetadatav1connect.NewPluginMetadataServiceClient(srv.Client(), srv.URL)

	noneToken, err := jwt.NewWithClaims(jwt.SigningMethodNone, validClaims()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	hmacToken, err := jwt.NewWithClaims(jwt.SigningMethodHS256, validClaims()).SignedString([]byte("shared"))
	require.NoError(t, err)

	tests := []struct {
		name          string
		authorization string
		wantErr       string // empty: accepted
	}{
		{name: "a valid token is accepted", authorization: "Bearer " + sign(t, key, validClaims())},
		{name: "an expired token", authorization: "Bearer " + sign(t, key, validClaims(), func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Second).Unix() }), wantErr: "token is expired"},
		{name: "a token without expiry", authorization: "Bearer " + sign(t, key, validClaims(), func(c jwt.MapClaims) { delete(c, "exp") }), wantErr: "exp claim is required"},
		{name: "a token not valid yet", authorization: "Bearer " + sign(t, key, validClaims(), func(c jwt.MapClaims) { c["nbf"] = now.Add(time.Minute).Unix() }), wantErr: "token is not valid yet"},
		{name: "a wrong audience", authorization: "Bearer " + sign(t, key, validClaims(), func(c jwt.MapClaims) { c["aud"] = "plugin-other" }), wantErr: "token has invalid audience"},
		{name: "a wrong issuer", authorization: "Bearer " + sign(t, key, validClaims(), func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" }), wantErr: "token has invalid issuer"},
		{name: "a bad signature (another key)", authorization: "Bearer " + sign(t, otherKey, validClaims()), wantErr: "signature is invalid"},
		{name: "an unsigned token (alg none)", authorization: "Bearer " + noneToken, wantErr: "signing method none is invalid"},
		{name: "an HMAC token (algorithm confusion)", authorization: "Bearer " + hmacToken, wantErr: "signing method HS256 is invalid"},
		{name: "no Authorization header", authorization: "", wantErr: "missing bearer token"},
		{name: "a Basic Authorization header", authorization: "Basic dXNlcjpwYXNz", wantErr: "missing bearer token"},
		{name: "an empty bearer token", authorization: "Bearer ", wantErr: "missing bearer token"},
		{name: "garbage", authorization: "Bearer not-a-jwt", wantErr: "token is malformed"},
		{name: "three empty segments", authorization: "Bearer ..", wantErr: "token is malformed"},
		{name: "a truncated signature", authorization: "Bearer " + sign(t, key, validClaims())[:60], wantErr: "invalid token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := connect.NewRequest(&pluginmetadatav1.GetStatusRequest{})
			if tc.authorization != "" {
				req.Header().Set("Authorization", tc.authorization)
			}
			res, err := client.GetStatus(context.Background(), req)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, "user-42@org-1", res.Msg.GetMessage(), "the handler sees the verified claims")
				return
			}
			require.Error(t, err)
			assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestValidatorKeysByID(t *testing.T) {
	oldKey, newKey := newKey(t), newKey(t)
	v, err := auth.NewValidator(auth.Config{
		Issuer:   issuer,
		Audience: audience,
		Keys:     auth.StaticKeysByID(map[string]crypto.PublicKey{"2026-01": &oldKey.PublicKey, "2026-05": &newKey.PublicKey}),
		Now:      func() time.Time { return now },
	})
	require.NoError(t, err)
	signKid := func(key *ecdsa.PrivateKey, kid string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodES256, validClaims())
		tok.Header["kid"] = kid
		raw, err := tok.SignedString(key)
		require.NoError(t, err)
		return raw
	}

	for _, tc := range []struct {
		name    string
		raw     string
		wantErr string
	}{
		{name: "the old key during rotation", raw: signKid(oldKey, "2026-01")},
		{name: "the new key", raw: signKid(newKey, "2026-05")},
		{name: "a kid naming the other key", raw: signKid(oldKey, "2026-05"), wantErr: "signature is invalid"},
		{name: "an unknown kid", raw: signKid(newKey, "2027-01"), wantErr: `unknown signing key "2027-01"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := v.Validate(context.Background(), tc.raw)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "user-42", claims.Subject)
			assert.Equal(t, jwt.ClaimStrings{audience, "console"}, claims.Audience)
		})
	}
}

func TestValidatorNeverPanics(t *testing.T) {
	v, err := auth.NewValidator(auth.Config{
		Issuer:   issuer,
		Audience: audience,
		Keys: func(context.Context, map[string]any) (crypto.PublicKey, error) {
			var m map[string]crypto.PublicKey
			m["boom"] = nil // a buggy key function panics
			return nil, nil
		},
	})
	require.NoError(t, err)
	_, err = v.Validate(context.Background(), sign(t, newKey(t), validClaims()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid token")
}

func TestNewValidatorRequiresIssuerAudienceAndKeys(t *testing.T) {
	_, err := auth.NewValidator(auth.Config{})
	require.Error(t, err)
	assert.Equal(t, "auth config: Issuer, Audience, Keys required", err.Error())
}

func TestRSAKeysAreAccepted(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	v, err := auth.NewValidator(auth.Config{Issuer: issuer, Audience: audience, Keys: auth.StaticKeys(&key.PublicKey), Now: func() time.Time { return now }})
	require.NoError(t, err)
	_, err = v.Validate(context.Background(), sign(t, key, validClaims()))
	assert.NoError(t, err)
}
