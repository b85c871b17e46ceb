package patch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// TestMerge: a nil value removes its field, and a value is JSON-quoted as
// JSON quotes it (Go's %q would write \x00 and \a, which JSON refuses).
func TestMerge(t *testing.T) {
	p := Merge(map[string]any{"metadata": map[string]any{"labels": map[string]any{
		"ceph.rook.io/do-not-reconcile": nil,
		"odd":                           "a\"b\x00\a",
	}}})
	assert.Equal(t, types.MergePatchType, p.Type())
	data, err := p.Data(nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"labels":{"ceph.rook.io/do-not-reconcile":null,"odd":"a\"b\u0000\u0007"}}}`, string(data))
}
