package plugincontroller

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

// generateCommand is how the committed CRD and deepcopy are produced, from
// the repository root.
const generateCommand = "go tool controller-gen object paths=./internal/plugincontroller/api/... crd paths=./internal/plugincontroller/api/... output:crd:artifacts:config=internal/plugincontroller/crds"

// TestGeneratedCodeIsCurrent runs controller-gen into a temporary folder
// and fails when the committed CRD in crds/ or api/v1's deepcopy differ
// from a fresh generation: a marker or type changed without regenerating.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("go", "tool", "controller-gen",
		"object", "paths=./api/...", "output:object:dir="+filepath.Join(out, "object"),
		"crd", "paths=./api/...", "output:crd:dir="+filepath.Join(out, "crds"))
	output, err := cmd.CombinedOutput()
	require.NoError(t, err, "controller-gen: %s", output)

	t.Run("deepcopy", func(t *testing.T) {
		assertSameFile(t, filepath.Join(out, "object", "zz_generated.deepcopy.go"), filepath.Join("api", "v1", "zz_generated.deepcopy.go"))
	})
	t.Run("crds", func(t *testing.T) {
		fresh, err := filepath.Glob(filepath.Join(out, "crds", "*.yaml"))
		require.NoError(t, err)
		require.NotEmpty(t, fresh)
		committed, err := filepath.Glob(filepath.Join("crds", "*.yaml"))
		require.NoError(t, err)
		assert.Equal(t, baseNames(fresh), baseNames(committed), "the same CRD files")
		for _, f := range fresh {
			assertSameFile(t, f, filepath.Join("crds", filepath.Base(f)))
		}
	})
}

func assertSameFile(t *testing.T, fresh, committed string) {
	t.Helper()
	want, err := os.ReadFile(fresh)
	require.NoError(t, err)
	got, err := os.ReadFile(committed)
	require.NoError(t, err, "%s is missing: run `%s`", committed, generateCommand)
	if string(want) != string(got) {
		t.Errorf("%s is stale, first difference %s: run `%s`", committed, firstDifference(string(want), string(got)), generateCommand)
	}
}

// firstDifference names the first line where fresh and committed differ.
func firstDifference(fresh, committed string) string {
	a, b := strings.Split(fresh, "\n"), strings.Split(committed, "\n")
	for i := range max(len(a), len(b)) {
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
