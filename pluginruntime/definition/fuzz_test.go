package definition_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// FuzzParseDefinition feeds arbitrary bytes to ParseDefinition, with and
// without RequireImage. A definition is attacker-shaped input to the plugin
// controller, so parsing must never panic, and whatever it accepts must hold
// what the package promises: it validates again, its name is a DNS label, its
// image is digest-pinned (and present under RequireImage), and it reads back
// the same from its own JSON form. Seeds live in testdata/fuzz/FuzzParseDefinition.
func FuzzParseDefinition(f *testing.F) {
	full, err := os.ReadFile("testdata/full.yaml")
	require.NoError(f, err)
	f.Add(full, true)
	f.Add([]byte(minimal), false)
	f.Add([]byte(minimal+"spec:\n  image: registry.example.com/p@sha256:"+digest+"\n"), true)
	f.Add([]byte(minimal+"spec:\n  image: registry.example.com/p:latest\n"), false)
	f.Add([]byte(minimal+"metadata:\n  name: twice\n"), false)
	f.Add([]byte(minimal+"spec:\n  configSchema:\n  - name: TIER\n    type: enum\n    values: [a, b]\n    default: c\n"), false)
	f.Add([]byte("a: &a [*a, *a]\n"), false)
	f.Add([]byte("{\"apiVersion\":\"fundament.io/v1\",\"kind\":\"PluginDefinition\",\"metadata\":{\"name\":\"json\"}}"), false)
	f.Add([]byte{0xff, 0xfe, 0x00}, false)

	f.Fuzz(func(t *testing.T, data []byte, requireImage bool) {
		var opts []definition.ParseOption
		if requireImage {
			opts = append(opts, definition.RequireImage())
		}
		def, err := definition.ParseDefinition(data, opts...)
		if err != nil {
			require.Nil(t, def)
			require.NotEmpty(t, err.Error())
			return
		}
		require.NoError(t, def.Validate(opts...), "an accepted definition validates again")
		require.Empty(t, validation.IsDNS1123Label(def.Metadata.Name), "name %q", def.Metadata.Name)
		if requireImage {
			require.NotEmpty(t, def.Spec.Image)
			_, err := definition.ParseDefinition(data)
			require.NoError(t, err, "what is valid with RequireImage is valid without")
		}
		if def.Spec.Image != "" {
			require.Contains(t, def.Spec.Image, "@sha256:")
		}
		hash := definition.Hash(data)
		require.True(t, strings.HasPrefix(hash, "sha256:") && len(hash) == len("sha256:")+64, hash)
		require.Equal(t, hash, definition.Hash(append([]byte(nil), data...)))

		asJSON, err := json.Marshal(def)
		require.NoError(t, err)
		again, err := definition.ParseDefinition(asJSON, opts...)
		require.NoError(t, err, "the definition's own JSON form is accepted: %s", asJSON)
		againJSON, err := json.Marshal(again)
		require.NoError(t, err)
		require.JSONEq(t, string(asJSON), string(againJSON), "the JSON form reads back the same")
	})
}
