package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocNamesEveryFileAndPackage keeps doc.go's map honest: every
// production file of this package, and every package under internal/, is
// named there, and every package under internal/ has a doc.go with its
// package comment.
func TestDocNamesEveryFileAndPackage(t *testing.T) {
	doc, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, doc.Doc, "doc.go has the package comment")
	text := doc.Doc.Text()

	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var unnamed []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && f != "doc.go" && !strings.Contains(text, f) {
			unnamed = append(unnamed, f)
		}
	}
	top, err := os.ReadDir("internal")
	require.NoError(t, err)
	for _, e := range top {
		if e.IsDir() && !strings.Contains(text, "internal/"+e.Name()) {
			unnamed = append(unnamed, "internal/"+e.Name())
		}
	}
	assert.Empty(t, unnamed, "doc.go names every production file of the root and every internal package")
	require.NoError(t, filepath.WalkDir("internal", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			return err
		}
		sources, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil || len(sources) == 0 {
			return err
		}
		pkg, err := parser.ParseFile(token.NewFileSet(), filepath.Join(path, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
		if assert.NoError(t, err, "%s has a doc.go", path) {
			assert.NotNil(t, pkg.Doc, "%s/doc.go holds the package comment", path)
		}
		return nil
	}))
}

// internalEdges are the only imports of the plugin's own internal packages
// each day-two package and its helpers may make: the retirement and the
// upgrade use the Ceph Job protocol and Rook's names, the protocol uses
// Rook's names, and the upgrade never reaches into the retirement.
var internalEdges = map[string][]string{
	"internal/rook":       {"internal/message"},
	"internal/cephjob":    {"internal/rook"},
	"internal/message":    nil,
	"internal/patch":      nil,
	"internal/retirement": {"internal/cephjob", "internal/rook", "internal/message", "internal/patch"},
	"internal/upgrade":    {"internal/cephjob", "internal/rook", "internal/message", "internal/patch"},
}

// TestDependenciesPointOneWay: the production files of each package in
// internalEdges import no other internal package than it lists.
func TestDependenciesPointOneWay(t *testing.T) {
	const module = "github.com/fundament-oss/ceph-rook/"
	for pkg, allowed := range internalEdges {
		sources, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		require.NoError(t, err)
		require.NotEmpty(t, sources, pkg)
		for _, src := range sources {
			if strings.HasSuffix(src, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), src, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				path := strings.Trim(imp.Path.Value, `"`)
				if rest, ok := strings.CutPrefix(path, module); ok && strings.HasPrefix(rest, "internal/") {
					assert.Contains(t, allowed, rest, "%s imports %s", src, rest)
				}
			}
		}
	}
}
