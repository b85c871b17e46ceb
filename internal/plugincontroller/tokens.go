package plugincontroller

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	corev1 "k8s.io/api/core/v1"

	"github.com/fundament-oss/ceph-rook/pluginruntime"
)

// The claims of the tokens the controller sends to plugins' metadata APIs.
// A plugin's runtime checks them against the FUNDAMENT_TOKEN_ variables
// the controller renders into its Deployment (TokenEnv).
const (
	// TokenIssuer is the iss of every token, and also its sub: the
	// controller is both who signs and who calls.
	TokenIssuer = "plugin-controller.plugins.fundament.io"
	// TokenLifetime is how long a token is valid after it is minted. A
	// token is minted for each call, so it only needs to outlive the
	// call; a captured one is useless a minute later.
	TokenLifetime = time.Minute
	// tokenClockSkew backdates iat and nbf: the runtime allows no leeway,
	// and a plugin on a node whose clock runs behind the controller's
	// would otherwise refuse a token "used before issued".
	tokenClockSkew = 30 * time.Second
)

// TokenAudience is the aud of the tokens for an installation's plugin: the
// installation's name, which is unique in the cluster, so a token minted
// for one plugin is refused by every other.
func TokenAudience(installation string) string {
	return installation
}

// TokenTrust is what a plugin needs to verify the controller's tokens.
type TokenTrust struct {
	Issuer string
	// PublicKeysPEM holds PEM "PUBLIC KEY" blocks, as the runtime reads
	// FUNDAMENT_TOKEN_PUBLIC_KEYS.
	PublicKeysPEM string
}

// TokenEnv makes the plugin's runtime require a token of trust's issuer,
// for audience, on its metadata API. All three variables are rendered even
// when trust is empty: the runtime refuses to start with some of them set
// and others empty, so a missing key fails closed instead of leaving the
// API open.
func TokenEnv(trust TokenTrust, audience string) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: pluginruntime.EnvTokenIssuer, Value: trust.Issuer},
		{Name: pluginruntime.EnvTokenAudience, Value: audience},
		{Name: pluginruntime.EnvTokenPublicKeys, Value: trust.PublicKeysPEM},
	}
}

// TokenSigner mints the controller's tokens. The private key never leaves
// it: the fields are unexported, String redacts it, and errors never
// include it.
type TokenSigner struct {
	key       ed25519.PrivateKey
	publicPEM string
	// now is the clock; tests move it.
	now func() time.Time
}

// NewTokenSigner signs with key.
func NewTokenSigner(key ed25519.PrivateKey) (*TokenSigner, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("an Ed25519 private key has %d bytes, not %d", ed25519.PrivateKeySize, len(key))
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, fmt.Errorf("encode the public key: %w", err)
	}
	publicPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	return &TokenSigner{key: key, publicPEM: publicPEM, now: time.Now}, nil
}

// Trust is what plugins need to verify this signer's tokens.
func (s *TokenSigner) Trust() TokenTrust {
	return TokenTrust{Issuer: TokenIssuer, PublicKeysPEM: s.publicPEM}
}

// Mint returns a token for the plugin of installation, valid for
// TokenLifetime.
func (s *TokenSigner) Mint(installation string) (string, error) {
	now := s.now()
	claims := jwt.RegisteredClaims{
		Issuer:    TokenIssuer,
		Subject:   TokenIssuer,
		Audience:  jwt.ClaimStrings{TokenAudience(installation)},
		IssuedAt:  jwt.NewNumericDate(now.Add(-tokenClockSkew)),
		NotBefore: jwt.NewNumericDate(now.Add(-tokenClockSkew)),
		ExpiresAt: jwt.NewNumericDate(now.Add(TokenLifetime)),
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("sign a token for %s: %w", installation, err)
	}
	return token, nil
}

// String names the key by its public fingerprint, so that logging a
// signer by mistake prints nothing secret.
func (s *TokenSigner) String() string {
	sum := sha256.Sum256([]byte(s.publicPEM))
	return "token signer " + hex.EncodeToString(sum[:8])
}

// GoString is String, for %#v.
func (s *TokenSigner) GoString() string { return s.String() }
