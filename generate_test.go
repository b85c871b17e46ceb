package main

import (
	"testing"

	"github.com/fundament-oss/ceph-rook/internal/gencheck"
)

// TestGeneratedCodeIsCurrent fails when the committed CRDs in crds/ or
// api/v1alpha1/zz_generated.deepcopy.go differ from a fresh controller-gen
// run: a marker or type changed without `just generate`.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	gencheck.AssertCurrent(t, gencheck.Paths{
		APIPackages: "./api/...",
		Deepcopy:    "api/v1alpha1/zz_generated.deepcopy.go",
		CRDs:        "crds",
		Regenerate:  "`just generate`",
	})
}
