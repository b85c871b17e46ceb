package definition_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

const digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// minimal is the smallest valid authored definition; cases append to it.
const minimal = `apiVersion: fundament.io/v1
kind: PluginDefinition
metadata:
  name: example
`

func TestParseDefinitionReadsEveryField(t *testing.T) {
	raw, err := os.ReadFile("testdata/full.yaml")
	require.NoError(t, err)

	def, err := definition.ParseDefinition(raw, definition.RequireImage())
	require.NoError(t, err)

	assert.Equal(t, "example-storage", def.Metadata.Name)
	assert.Equal(t, "https://example.com/docs", def.Metadata.URLs.Documentation)
	assert.Equal(t, []string{"storage", "ceph"}, def.Metadata.Tags)
	assert.Equal(t, []string{"internet_access"}, def.Spec.Permissions.Capabilities)
	assert.Equal(t, rbacv1.PolicyRule{
		APIGroups:     []string{""},
		Resources:     []string{"configmaps"},
		ResourceNames: []string{"settings"},
		Verbs:         []string{"get"},
	}, def.Spec.Permissions.RBAC[1])
	assert.Equal(t, definition.MenuEntry{CRD: "diskpools.storage.example.com", List: true, Detail: true, Icon: "hard-drive", Label: "Disk pools"}, def.Spec.Menu.Organization[0])
	assert.Equal(t, "diskpool-edit.html", def.Spec.CustomComponents["DiskPool"].Edit)
	hint := def.Spec.UIHints["diskpools.storage.example.com"]
	require.NotNil(t, hint.StatusMapping)
	assert.Equal(t, definition.BadgeSuccess, hint.StatusMapping.Values["Ready"].Badge)
	assert.Equal(t, &definition.StatusBadge{Badge: definition.BadgeNeutral, Label: "Unknown"}, hint.StatusMapping.Default)
	assert.Equal(t, []string{"spec.nodeSelector", "spec.deviceFilter"}, hint.FormGroups[0].Fields)
	assert.Equal(t, definition.AllowedResource{Group: "storage.example.com", Version: "v1alpha1", Resource: "diskpools", Verbs: []string{"get", "list", "create"}}, def.Spec.AllowedResources[0])
	assert.Equal(t, definition.ConfigField{Name: "TIER", Type: definition.ConfigEnum, Values: []string{"fast", "cheap"}, Default: "fast"}, def.Spec.ConfigSchema[2])
	assert.Equal(t, "registry.example.com/storage/plugin@sha256:"+digest, def.Spec.Image)
	assert.Equal(t, "IfNotPresent", def.Spec.ImagePullPolicy)
}

func TestParseDefinitionRejects(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		opts    []definition.ParseOption
		wantErr string
	}{
		{
			name:    "an unknown top-level field",
			yaml:    minimal + "status: {}\n",
			wantErr: `unknown field "status"`,
		},
		{
			name:    "an unknown nested field (a typo)",
			yaml:    minimal + "spec:\n  permisions: {}\n",
			wantErr: `unknown field "permisions"`,
		},
		{
			name:    "a duplicated field",
			yaml:    minimal + "spec:\n  crds: [a.b]\n  crds: [c.d]\n",
			wantErr: `"crds" already set`,
		},
		{
			name:    "a wrong apiVersion",
			yaml:    strings.Replace(minimal, "fundament.io/v1", "fundament.io/v2", 1),
			wantErr: `apiVersion: Unsupported value: "fundament.io/v2"`,
		},
		{
			name:    "a wrong kind",
			yaml:    strings.Replace(minimal, "kind: PluginDefinition", "kind: Plugin", 1),
			wantErr: `kind: Unsupported value: "Plugin"`,
		},
		{
			name:    "a missing metadata.name",
			yaml:    "apiVersion: fundament.io/v1\nkind: PluginDefinition\nmetadata:\n  version: 1.0.0\n",
			wantErr: "metadata.name: Required value",
		},
		{
			name:    "a version that is not a release tag",
			yaml:    strings.Replace(minimal, "name: example", "name: example\n  version: 1.0.0", 1),
			wantErr: `metadata.version: Invalid value: "1.0.0": must be a release tag`,
		},
		{
			name:    "a name that cannot be part of a Kubernetes name",
			yaml:    strings.Replace(minimal, "name: example", "name: Example_Plugin", 1),
			wantErr: `metadata.name: Invalid value: "Example_Plugin"`,
		},
		{
			name:    "an image referenced by a mutable tag",
			yaml:    minimal + "spec:\n  image: registry.example.com/plugin:v1.2.3\n",
			wantErr: `spec.image: Invalid value: "registry.example.com/plugin:v1.2.3": must be pinned by digest`,
		},
		{
			name:    "an image with a truncated digest",
			yaml:    minimal + "spec:\n  image: registry.example.com/plugin@sha256:0123abcd\n",
			wantErr: "must be pinned by digest",
		},
		{
			name:    "an image with both a tag and a non-sha256 digest",
			yaml:    minimal + "spec:\n  image: registry.example.com/plugin:v1@sha512:" + digest + "\n",
			wantErr: "must be pinned by digest",
		},
		{
			name:    "a published definition without an image",
			yaml:    minimal,
			opts:    []definition.ParseOption{definition.RequireImage()},
			wantErr: "spec.image: Required value",
		},
		{
			name:    "an unknown pull policy",
			yaml:    minimal + "spec:\n  imagePullPolicy: Sometimes\n",
			wantErr: `spec.imagePullPolicy: Unsupported value: "Sometimes"`,
		},
		{
			name:    "a badge the console does not know",
			yaml:    minimal + "spec:\n  uiHints:\n    pools.example.com:\n      statusMapping:\n        jsonPath: .status.phase\n        values:\n          Ready: {badge: green}\n",
			wantErr: `spec.uiHints[pools.example.com].statusMapping.values[Ready].badge: Unsupported value: "green"`,
		},
		{
			name:    "a CRD without its group",
			yaml:    minimal + "spec:\n  crds: [pools]\n",
			wantErr: `spec.crds[0]: Invalid value: "pools": must be <plural>.<group>`,
		},
		{
			name:    "a config name that is not an environment variable suffix",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: log-level, type: string}\n",
			wantErr: `spec.configSchema[0].name: Invalid value: "log-level"`,
		},
		{
			name:    "a config name declared twice",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: string}\n    - {name: A, type: int}\n",
			wantErr: `spec.configSchema[1].name: Duplicate value: "A"`,
		},
		{
			name:    "an unknown config type",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: float}\n",
			wantErr: `spec.configSchema[0].type: Unsupported value: "float"`,
		},
		{
			name:    "an enum without values",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: enum}\n",
			wantErr: "spec.configSchema[0].values: Required value",
		},
		{
			name:    "a default that is not one of the enum's values",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: enum, values: [fast, slow], default: medium}\n",
			wantErr: `spec.configSchema[0].default: Invalid value: "medium": not one of fast, slow`,
		},
		{
			name:    "an int default that is not an integer",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: int, default: three}\n",
			wantErr: "not an integer",
		},
		{
			name:    "values on a non-enum",
			yaml:    minimal + "spec:\n  configSchema:\n    - {name: A, type: string, values: [x]}\n",
			wantErr: "spec.configSchema[0].values: Forbidden",
		},
		{
			name:    "an allowed resource without verbs",
			yaml:    minimal + "spec:\n  allowedResources:\n    - {group: example.com, version: v1, resource: pools}\n",
			wantErr: "spec.allowedResources[0].verbs: Required value",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			def, err := definition.ParseDefinition([]byte(tc.yaml), tc.opts...)
			require.Error(t, err)
			assert.Nil(t, def)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
}

func TestParseDefinitionAccepts(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		opts []definition.ParseOption
	}{
		{name: "an authored definition without an image", yaml: minimal},
		{name: "a digest-pinned image", yaml: minimal + "spec:\n  image: repo@sha256:" + digest + "\n", opts: []definition.ParseOption{definition.RequireImage()}},
		{name: "a digest-pinned image with a registry port", yaml: minimal + "spec:\n  image: localhost:5000/a/b@sha256:" + digest + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := definition.ParseDefinition([]byte(tc.yaml), tc.opts...)
			assert.NoError(t, err)
		})
	}
}

func TestParseDefinitionReportsEveryViolation(t *testing.T) {
	_, err := definition.ParseDefinition([]byte("apiVersion: v1\nkind: Pod\nmetadata: {}\nspec:\n  image: nginx:latest\n"))
	require.Error(t, err)
	for _, want := range []string{"apiVersion", "kind", "metadata.name", "spec.image"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestMustParseDefinitionPanicsOnInvalidInput(t *testing.T) {
	assert.Panics(t, func() { definition.MustParseDefinition([]byte("kind: Plugin")) })
	assert.NotPanics(t, func() { definition.MustParseDefinition([]byte(minimal)) })
}

func TestHash(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string
	}{
		// Known SHA-256 test vectors: the hash is over the raw bytes.
		{name: "empty input", raw: "", want: "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "abc", raw: "abc", want: "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, definition.Hash([]byte(tc.raw)))
		})
	}
	t.Run("reformatting changes the hash", func(t *testing.T) {
		assert.NotEqual(t, definition.Hash([]byte(minimal)), definition.Hash([]byte(minimal+"\n")))
	})
}
