package plugincontroller

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// testImage is a digest-pinned image, as a published definition has.
const testImage = "registry.example.com/acme/widgets@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// publishedDefinition is a published definition of plugin name at version
// (the published form, without "v"; the definition says v<version>), with
// cluster-wide permissions including a rule limited by resourceNames.
func publishedDefinition(name, version string) []byte {
	return fmt.Appendf(nil, `apiVersion: fundament.io/v1
kind: PluginDefinition
metadata:
  name: %s
  version: v%s
spec:
  permissions:
    rbac:
      - apiGroups: [apiextensions.k8s.io]
        resources: [customresourcedefinitions]
        verbs: [get, list, watch]
      - apiGroups: [""]
        resources: [configmaps]
        resourceNames: [settings, other-settings]
        verbs: [get, update]
  configSchema:
    - {name: REPLICAS, type: int, default: "3"}
  image: %s
  imagePullPolicy: IfNotPresent
`, name, version, testImage)
}

// refTo pins raw as organization/plugin at version.
func refTo(org, plugin, version string, raw []byte) pluginsv1.DefinitionRef {
	return pluginsv1.DefinitionRef{
		OrganizationName: org,
		PluginName:       plugin,
		PluginVersion:    version,
		DefinitionHash:   definition.Hash(raw),
	}
}

// testTokens signs with a fixed key, for renderings that need one.
var testTokens = mustSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))

func mustSigner(key ed25519.PrivateKey) *TokenSigner {
	s, err := NewTokenSigner(key)
	if err != nil {
		panic(err)
	}
	return s
}

// newTestSigner signs with a new random key.
func newTestSigner(t testing.TB) *TokenSigner {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	s, err := NewTokenSigner(key)
	require.NoError(t, err)
	return s
}
