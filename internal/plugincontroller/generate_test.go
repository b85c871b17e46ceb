package plugincontroller

import (
	"testing"

	"github.com/fundament-oss/ceph-rook/internal/gencheck"
)

// TestGeneratedCodeIsCurrent fails when the committed CRD in crds/ or
// api/v1's deepcopy differ from a fresh controller-gen run: a marker or
// type changed without regenerating (`just generate`).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	gencheck.AssertCurrent(t, gencheck.Paths{
		APIPackages: "./api/...",
		Deepcopy:    "api/v1/zz_generated.deepcopy.go",
		CRDs:        "crds",
		Regenerate:  "`just generate`",
	})
}
