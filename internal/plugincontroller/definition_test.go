package plugincontroller

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

func TestCheckDefinition(t *testing.T) {
	good := publishedDefinition("widgets", "1.2.3")
	unversioned := []byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata: {name: widgets}
spec: {image: "` + testImage + `"}
`)
	unpinned := []byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata: {name: widgets, version: v1.2.3}
`)
	untagged := []byte(`apiVersion: fundament.io/v1
kind: PluginDefinition
metadata: {name: widgets, version: 1.2.3}
spec: {image: "` + testImage + `"}
`)
	tests := []struct {
		name        string
		raw         []byte
		hashOf      []byte // what the installation pinned
		plugin      string
		version     string
		wantReason  string
		wantMessage string
	}{
		{name: "matching hash, name and version runs", raw: good, hashOf: good, plugin: "widgets", version: "1.2.3"},
		{name: "a definition without a version runs at any version", raw: unversioned, hashOf: unversioned, plugin: "widgets", version: "9.9.9"},
		{name: "bytes that hash differently are refused before parsing", raw: append([]byte("# edited\n"), good...), hashOf: good, plugin: "widgets", version: "1.2.3",
			wantReason: ReasonDefinitionHashMismatch, wantMessage: "not the approved " + definition.Hash(good)},
		{name: "a definition without an image is invalid", raw: unpinned, hashOf: unpinned, plugin: "widgets", version: "1.2.3",
			wantReason: ReasonDefinitionInvalid, wantMessage: "spec.image"},
		{name: "another plugin's definition is refused", raw: good, hashOf: good, plugin: "gadgets", version: "1.2.3",
			wantReason: ReasonDefinitionMismatch, wantMessage: `for plugin "widgets", not "gadgets"`},
		{name: "another version's definition is refused", raw: good, hashOf: good, plugin: "widgets", version: "1.2.4",
			wantReason: ReasonDefinitionMismatch, wantMessage: `version "v1.2.3" (published as "1.2.3"), not "1.2.4"`},
		{name: "a definition version without its v is invalid", raw: untagged, hashOf: untagged, plugin: "widgets", version: "1.2.3",
			wantReason: ReasonDefinitionInvalid, wantMessage: `metadata.version: Invalid value: "1.2.3": must be a release tag`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref := refTo("acme", tc.plugin, tc.version, tc.hashOf)
			got := CheckDefinition(ref, tc.raw)
			assert.Equal(t, tc.wantReason, got.Reason)
			if tc.wantReason == "" {
				require.NotNil(t, got.Definition)
				assert.Empty(t, got.Message)
				return
			}
			assert.Nil(t, got.Definition)
			assert.Contains(t, got.Message, tc.wantMessage)
		})
	}
}
