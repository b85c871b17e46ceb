package gencheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Paths are relative to the test's working directory (its package).
type Paths struct {
	// APIPackages is controller-gen's paths= (e.g. "./api/...").
	APIPackages string
	// Deepcopy is the committed zz_generated.deepcopy.go.
	Deepcopy string
	// CRDs is the folder of the committed CRD files.
	CRDs string
	// Regenerate is the command that fixes drift, for the failure message.
	Regenerate string
}

// AssertCurrent runs controller-gen (the version go.mod pins as a tool) and
// compares its output with the committed files.
func AssertCurrent(t *testing.T, p Paths) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command("go", "tool", "controller-gen",
		"object", "paths="+p.APIPackages, "output:object:dir="+filepath.Join(out, "object"),
		"crd", "paths="+p.APIPackages, "output:crd:dir="+filepath.Join(out, "crds"))
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "controller-gen: %s", output)

	t.Run("deepcopy", func(t *testing.T) {
		assertSameFile(t, filepath.Join(out, "object", "zz_generated.deepcopy.go"), p.Deepcopy, p.Regenerate)
	})
	t.Run("crds", func(t *testing.T) {
		fresh, err := filepath.Glob(filepath.Join(out, "crds", "*.yaml"))
		require.NoError(t, err)
		require.NotEmpty(t, fresh)
		committed, err := filepath.Glob(filepath.Join(p.CRDs, "*.yaml"))
		require.NoError(t, err)
		assert.Equal(t, baseNames(fresh), baseNames(committed), "the same CRD files")
		for _, f := range fresh {
			assertSameFile(t, f, filepath.Join(p.CRDs, filepath.Base(f)), p.Regenerate)
		}
	})
}

func assertSameFile(t *testing.T, fresh, committed, regenerate string) {
	t.Helper()
	want, err := os.ReadFile(fresh)
	require.NoError(t, err)
	got, err := os.ReadFile(committed)
	require.NoError(t, err, "%s is not committed: run %s", committed, regenerate)
	if string(want) != string(got) {
		t.Errorf("%s is stale, first difference %s: run %s", committed, FirstDifference(string(want), string(got)), regenerate)
	}
}

// FirstDifference names the first line where fresh and committed differ,
// so a stale file reports one line instead of two whole files.
func FirstDifference(fresh, committed string) string {
	a, b := strings.Split(fresh, "\n"), strings.Split(committed, "\n")
	for i := 0; i < max(len(a), len(b)); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("at line %d: generated %q, committed %q", i+1, x, y)
		}
	}
	return "none"
}

func baseNames(paths []string) []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names
}
