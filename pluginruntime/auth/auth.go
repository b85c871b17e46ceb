// Package auth checks the JWTs the Fundament platform attaches to calls
// into a plugin's Connect APIs. A plugin's API sits behind the platform's
// console; the token proves who the caller is and that the platform issued
// the call for this plugin.
//
//	v, err := auth.NewValidator(auth.Config{
//		Issuer:   "https://fundament.example.com",
//		Audience: "plugin-ceph-rook",
//		Keys:     auth.StaticKeys(platformKey),
//	})
//	if err != nil { ... }
//	path, handler := storagev1connect.NewStorageServiceHandler(svc, connect.WithInterceptors(v.Interceptor()))
//
// Inside a handler, ClaimsFrom(ctx) returns the verified claims.
package auth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/golang-jwt/jwt/v5"
)

// Config says which tokens are valid.
type Config struct {
	// Issuer must equal the token's iss claim.
	Issuer string
	// Audience must be among the token's aud claim.
	Audience string
	// Keys returns the key that verifies a token, chosen by its header
	// (usually the kid). StaticKeys covers fixed keys.
	Keys KeyFunc
	// Algorithms are the accepted signing algorithms. The default accepts
	// the asymmetric ones only (RS*, PS*, ES*, EdDSA): a plugin holds
	// public keys, and an HMAC secret shared with every plugin would let
	// any of them mint tokens for all others.
	Algorithms []string
	// Leeway tolerates clock skew on exp, nbf and iat (default none).
	Leeway time.Duration
	// Now replaces the clock, for tests.
	Now func() time.Time
}

// KeyFunc returns the verification key for a token with the given header.
type KeyFunc func(ctx context.Context, header map[string]any) (crypto.PublicKey, error)

// StaticKeys verifies every token with one fixed key, whatever its kid.
// Use StaticKeysByID when the issuer rotates keys.
func StaticKeys(key crypto.PublicKey) KeyFunc {
	return func(context.Context, map[string]any) (crypto.PublicKey, error) { return key, nil }
}

// StaticKeysByID verifies a token with the key named by its kid header,
// which lets the issuer rotate keys: publish the new one, then sign with it.
func StaticKeysByID(keys map[string]crypto.PublicKey) KeyFunc {
	return func(_ context.Context, header map[string]any) (crypto.PublicKey, error) {
		kid, _ := header["kid"].(string)
		key, ok := keys[kid]
		if !ok {
			return nil, fmt.Errorf("unknown signing key %q", kid)
		}
		return key, nil
	}
}

// StaticKeySet verifies a token with whichever of keys its signature
// matches, for an issuer that rotates keys without naming them by kid: the
// old and the new key are both accepted while tokens of both are in use.
func StaticKeySet(keys ...crypto.PublicKey) KeyFunc {
	set := jwt.VerificationKeySet{Keys: make([]jwt.VerificationKey, len(keys))}
	for i, key := range keys {
		set.Keys[i] = key
	}
	// The JWT parser tries every key of a VerificationKeySet.
	return func(context.Context, map[string]any) (crypto.PublicKey, error) { return set, nil }
}

// Claims are the verified claims of a token.
type Claims struct {
	jwt.RegisteredClaims
	// Extra holds the claims beyond the registered ones (for example the
	// platform's organization and user ids), as decoded from JSON.
	Extra map[string]any `json:"-"`
}

// Validator verifies tokens against a Config. It is safe for concurrent
// use.
type Validator struct {
	cfg    Config
	parser *jwt.Parser
}

var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// NewValidator checks cfg and returns a Validator for it.
func NewValidator(cfg Config) (*Validator, error) {
	var missing []string
	if cfg.Issuer == "" {
		missing = append(missing, "Issuer")
	}
	if cfg.Audience == "" {
		missing = append(missing, "Audience")
	}
	if cfg.Keys == nil {
		missing = append(missing, "Keys")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("auth config: %s required", strings.Join(missing, ", "))
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = defaultAlgorithms
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algs),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(cfg.Leeway),
	}
	if cfg.Now != nil {
		opts = append(opts, jwt.WithTimeFunc(cfg.Now))
	}
	return &Validator{cfg: cfg, parser: jwt.NewParser(opts...)}, nil
}

// Validate verifies a raw token — signature, algorithm, issuer, audience,
// expiry (required), not-before and issued-at — and returns its claims.
func (v *Validator) Validate(ctx context.Context, raw string) (claims *Claims, err error) {
	// A token is attacker-controlled input; whatever a key function or the
	// JWT library does with it, the answer is "unauthenticated", not a
	// crashed plugin.
	defer func() {
		if p := recover(); p != nil {
			claims, err = nil, fmt.Errorf("invalid token: %v", p)
		}
	}()
	var mc jwt.MapClaims
	token, err := v.parser.ParseWithClaims(raw, &mc, func(t *jwt.Token) (any, error) {
		return v.cfg.Keys(ctx, t.Header)
	})
	if err != nil {
		return nil, fmt.Errorf("invalid token: %w", err)
	}
	if !token.Valid {
		return nil, errors.New("invalid token")
	}
	return claimsFromMap(mc)
}

func claimsFromMap(mc jwt.MapClaims) (*Claims, error) {
	c := &Claims{Extra: map[string]any{}}
	var err error
	if c.Issuer, err = mc.GetIssuer(); err != nil {
		return nil, err
	}
	if c.Subject, err = mc.GetSubject(); err != nil {
		return nil, err
	}
	if c.Audience, err = mc.GetAudience(); err != nil {
		return nil, err
	}
	if c.ExpiresAt, err = mc.GetExpirationTime(); err != nil {
		return nil, err
	}
	if c.NotBefore, err = mc.GetNotBefore(); err != nil {
		return nil, err
	}
	if c.IssuedAt, err = mc.GetIssuedAt(); err != nil {
		return nil, err
	}
	c.ID, _ = mc["jti"].(string)
	for k, val := range mc {
		switch k {
		case "iss", "sub", "aud", "exp", "nbf", "iat", "jti":
		default:
			c.Extra[k] = val
		}
	}
	return c, nil
}

type claimsKey struct{}

// ClaimsFrom returns the claims the interceptor verified for this call.
func ClaimsFrom(ctx context.Context) (*Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(*Claims)
	return c, ok
}

// WithClaims returns ctx carrying c, for testing handlers without tokens.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, c)
}

// Interceptor rejects calls without a valid "Authorization: Bearer" token
// with connect.CodeUnauthenticated, and puts the claims of valid ones in
// the handler's context. The error names what is wrong (expired, wrong
// audience) but never echoes the token.
func (v *Validator) Interceptor() connect.Interceptor {
	return &interceptor{v: v}
}

type interceptor struct{ v *Validator }

func (i *interceptor) authenticate(ctx context.Context, header interface{ Get(string) string }) (context.Context, error) {
	raw, ok := strings.CutPrefix(header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(raw) == "" {
		return nil, connect.NewError(connect.CodeUnauthenticated, errors.New("missing bearer token"))
	}
	claims, err := i.v.Validate(ctx, strings.TrimSpace(raw))
	if err != nil {
		return nil, connect.NewError(connect.CodeUnauthenticated, err)
	}
	return WithClaims(ctx, claims), nil
}

func (i *interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		ctx, err := i.authenticate(ctx, req.Header())
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (i *interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (i *interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := i.authenticate(ctx, conn.RequestHeader())
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}
