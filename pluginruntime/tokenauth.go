package pluginruntime

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/fundament-oss/ceph-rook/pluginruntime/auth"
)

// The variables that make the runtime require a platform token on the
// PluginMetadataService. The platform's spec names none, so these extend
// its FUNDAMENT_ namespace: the platform, which issues the tokens, is the
// one that knows what to put in them.
const (
	// EnvTokenIssuer is the iss every token must carry.
	EnvTokenIssuer = "FUNDAMENT_TOKEN_ISSUER"
	// EnvTokenAudience is the aud every token must include: this
	// installation, so that a token for another plugin is refused.
	EnvTokenAudience = "FUNDAMENT_TOKEN_AUDIENCE"
	// EnvTokenPublicKeys holds the issuer's verification keys as PEM
	// "PUBLIC KEY" blocks (RSA, ECDSA or Ed25519); several blocks allow a
	// rotation, a token verifying against any one of them.
	EnvTokenPublicKeys = "FUNDAMENT_TOKEN_PUBLIC_KEYS"
)

var tokenVariables = []string{EnvTokenIssuer, EnvTokenAudience, EnvTokenPublicKeys}

// tokenValidatorFromEnviron returns the validator the platform's environment
// configures, or nil when it sets none of the FUNDAMENT_TOKEN_ variables.
// Setting some but not all is an error rather than an open API: whoever set
// one meant the API to be guarded.
func tokenValidatorFromEnviron(vars map[string]string) (*auth.Validator, error) {
	var set, missing []string
	for _, name := range tokenVariables {
		if strings.TrimSpace(vars[name]) == "" {
			missing = append(missing, name)
		} else {
			set = append(set, name)
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s set, so the metadata API requires a token, but %s not set",
			strings.Join(set, " and "), strings.Join(missing, " and ")))
	}
	var keys []crypto.PublicKey
	if v := vars[EnvTokenPublicKeys]; strings.TrimSpace(v) != "" {
		var err error
		if keys, err = parsePublicKeys([]byte(v)); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", EnvTokenPublicKeys, err))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("invalid token configuration: %s", strings.Join(problems, "; "))
	}
	v, err := auth.NewValidator(auth.Config{
		Issuer:   strings.TrimSpace(vars[EnvTokenIssuer]),
		Audience: strings.TrimSpace(vars[EnvTokenAudience]),
		Keys:     auth.StaticKeySet(keys...),
	})
	if err != nil {
		return nil, fmt.Errorf("invalid token configuration: %w", err)
	}
	return v, nil
}

// parsePublicKeys reads PEM public keys and nothing else: a private key or
// stray text in the variable is a mistake to report, not to skip.
func parsePublicKeys(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var key crypto.PublicKey
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		default:
			err = fmt.Errorf("a %q block is not a public key", block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", len(keys)+1, err)
		}
		keys = append(keys, key)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return nil, errors.New("text that is not a PEM block")
	}
	if len(keys) == 0 {
		return nil, errors.New("no PEM public key")
	}
	return keys, nil
}
