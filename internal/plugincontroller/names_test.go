package plugincontroller

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation"
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
