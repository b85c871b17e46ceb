package plugincontroller

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

func TestNamespaceName(t *testing.T) {
	long := "acme--" + strings.Repeat("p", 63)
	longer := "acme--" + strings.Repeat("p", 62) + "q"
	tests := []struct {
		name         string
		installation string
		want         string
		wantPrefix   string
	}{
		{name: "short name is prefixed and kept whole", installation: "system--cert-manager", want: "plugin-system--cert-manager"},
		{name: "exactly 63 characters is kept whole", installation: strings.Repeat("a", 56), want: "plugin-" + strings.Repeat("a", 56)},
		{name: "long name keeps its beginning and ends in a hash", installation: long, wantPrefix: "plugin-acme--ppppp"},
		{name: "a hyphen before the hash is not doubled", installation: "abc--" + strings.Repeat("x", 45) + "-------" + strings.Repeat("y", 30), wantPrefix: "plugin-abc--x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := NamespaceName(tc.installation)
			assert.Empty(t, validation.IsDNS1123Label(got), "%q is a valid namespace name", got)
			if tc.want != "" {
				assert.Equal(t, tc.want, got)
			} else {
				assert.True(t, strings.HasPrefix(got, tc.wantPrefix), "%q starts with %q", got, tc.wantPrefix)
				assert.Len(t, got, maxNameLength)
				assert.NotContains(t, got[len(got)-12:], "--", "no doubled hyphen before the hash")
			}
		})
	}
	t.Run("two long names differing only at the end stay distinct", func(t *testing.T) {
		assert.NotEqual(t, NamespaceName(long), NamespaceName(longer))
	})
	t.Run("a long name ends in 20 base32 characters, 100 bits, of its hash", func(t *testing.T) {
		assert.Regexp(t, `^plugin-acme--p+-[a-z2-7]{20}$`, NamespaceName(long))
	})
	t.Run("names the 40-bit hash could not tell apart are distinct", func(t *testing.T) {
		// Found by a birthday search over 3 million names (seconds of
		// work): the same first 52 characters and the same 40 bits of
		// SHA-256, so the same namespace under the earlier scheme.
		a := "acme--" + strings.Repeat("p", 50) + "-3mk8"
		b := "acme--" + strings.Repeat("p", 50) + "-xfve"
		require.Equal(t, fortyBitName(a), fortyBitName(b), "the pair collides under the 40-bit scheme")
		assert.NotEqual(t, NamespaceName(a), NamespaceName(b))
		for _, name := range []string{NamespaceName(a), NamespaceName(b)} {
			assert.Empty(t, validation.IsDNS1123Label(name), name)
		}
	})
	t.Run("every organization and plugin name length fits a namespace", func(t *testing.T) {
		for org := 1; org <= 63; org++ {
			for plugin := 1; plugin <= 63; plugin++ {
				installation := strings.Repeat("o", org) + "--" + strings.Repeat("p", plugin)
				got := NamespaceName(installation)
				if !assert.Empty(t, validation.IsDNS1123Label(got), "%q", got) {
					return
				}
				assert.Equal(t, got, NamespaceName(installation), "deterministic")
			}
		}
	})
}

// fortyBitName is the namespace name of the earlier scheme for a name over
// 56 characters without a hyphen at its 45th, written out here apart from
// the code that keeps it: the first 52 characters and ten hex digits of
// the SHA-256.
func fortyBitName(installation string) string {
	name := "plugin-" + installation
	sum := sha256.Sum256([]byte(name))
	return name[:52] + "-" + hex.EncodeToString(sum[:])[:10]
}

func TestInstallationNamespace(t *testing.T) {
	long := "acme--" + strings.Repeat("p", 63)
	tests := []struct {
		name         string
		installation string
		recorded     string
		want         string
	}{
		{name: "a new installation gets NamespaceName", installation: long, want: NamespaceName(long)},
		{name: "an installation recorded in its 40-bit namespace stays there", installation: long, recorded: fortyBitName(long), want: fortyBitName(long)},
		{name: "an installation recorded in the current namespace stays there", installation: long, recorded: NamespaceName(long), want: NamespaceName(long)},
		{name: "a recorded namespace not derived from the name is ignored", installation: long, recorded: "kube-system", want: NamespaceName(long)},
		{name: "another installation's 40-bit namespace is ignored", installation: long, recorded: fortyBitName(long + "x"), want: NamespaceName(long)},
		{name: "a short name is the same under both schemes", installation: "system--cert-manager", recorded: "plugin-system--cert-manager", want: "plugin-system--cert-manager"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst := &pluginsv1.PluginInstallation{
				ObjectMeta: metav1.ObjectMeta{Name: tc.installation},
				Status:     pluginsv1.PluginInstallationStatus{Namespace: tc.recorded},
			}
			assert.Equal(t, tc.want, InstallationNamespace(inst))
			objs := RenderObjects(RenderInput{Installation: inst, Definition: &definition.PluginDefinition{}})
			assert.Equal(t, tc.want, objs.Namespace.Name, "the namespace is rendered there")
			assert.Equal(t, tc.want, objs.Deployment.Namespace, "and what runs in it")
			assert.Equal(t, tc.want, objs.ClusterRoleBinding.Subjects[0].Namespace, "and what its permissions are bound to")
		})
	}
}

func TestLabelValueFitsALabel(t *testing.T) {
	for _, name := range []string{"system--cert-manager", "acme--" + strings.Repeat("p", 63)} {
		assert.Empty(t, validation.IsValidLabelValue(LabelValue(name)), name)
	}
	assert.Equal(t, "system--cert-manager", LabelValue("system--cert-manager"))
}

func TestScopeClusterRoleName(t *testing.T) {
	assert.Equal(t, "plugin-system--cert-manager-scope", ScopeClusterRoleName("system--cert-manager"))
}
