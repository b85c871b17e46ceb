package plugincontroller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
)

// writeDefinition publishes raw for ref below dir in the registry layout.
func writeDefinition(t *testing.T, dir, org, plugin, version string, raw []byte) {
	t.Helper()
	path := filepath.Join(dir, org, plugin, version, "definition.yaml")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

func TestSourcesFetchTheRawDefinition(t *testing.T) {
	raw := publishedDefinition("widgets", "1.2.3")
	dir := t.TempDir()
	writeDefinition(t, dir, "acme", "widgets", "1.2.3", raw)
	var requested atomic.Value
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requested.Store(r.URL.Path)
		http.StripPrefix("/v1", http.FileServer(http.Dir(dir))).ServeHTTP(w, r)
	}))
	t.Cleanup(registry.Close)

	sources := map[string]DefinitionSource{
		"registry":  &RegistrySource{BaseURL: registry.URL + "/v1"},
		"directory": &DirectorySource{Dir: dir},
	}
	for name, source := range sources {
		t.Run(name+" returns the published bytes", func(t *testing.T) {
			got, err := source.Fetch(context.Background(), refTo("acme", "widgets", "1.2.3", raw))
			require.NoError(t, err)
			assert.Equal(t, raw, got)
		})
		t.Run(name+" reports a missing definition as not found", func(t *testing.T) {
			_, err := source.Fetch(context.Background(), refTo("acme", "widgets", "2.0.0", raw))
			assert.ErrorIs(t, err, ErrDefinitionNotFound)
		})
	}
	t.Run("registry path is <org>/<plugin>/<version>/definition.yaml below the base URL", func(t *testing.T) {
		_, err := sources["registry"].Fetch(context.Background(), refTo("acme", "widgets", "1.2.3", raw))
		require.NoError(t, err)
		assert.Equal(t, "/v1/acme/widgets/1.2.3/definition.yaml", requested.Load())
	})
	t.Run("registry error status is an error naming the URL", func(t *testing.T) {
		broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "down", http.StatusBadGateway)
		}))
		t.Cleanup(broken.Close)
		_, err := (&RegistrySource{BaseURL: broken.URL}).Fetch(context.Background(), refTo("acme", "widgets", "1.2.3", raw))
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrDefinitionNotFound)
		assert.Contains(t, err.Error(), "/acme/widgets/1.2.3/definition.yaml: 502")
	})
}

// countingSource serves fixed bytes and counts the fetches.
type countingSource struct {
	raw     []byte
	fetches int
}

func (s *countingSource) Fetch(context.Context, pluginsv1.DefinitionRef) ([]byte, error) {
	s.fetches++
	return s.raw, nil
}

func TestCachedSourceKeepsOnlyMatchingBytes(t *testing.T) {
	raw := publishedDefinition("widgets", "1.2.3")
	t.Run("matching bytes are fetched once", func(t *testing.T) {
		inner := &countingSource{raw: raw}
		cached := &CachedSource{Source: inner}
		for range 3 {
			got, err := cached.Fetch(context.Background(), refTo("acme", "widgets", "1.2.3", raw))
			require.NoError(t, err)
			assert.Equal(t, raw, got)
		}
		assert.Equal(t, 1, inner.fetches)
	})
	t.Run("mismatching bytes are fetched again, the registry may fix them", func(t *testing.T) {
		inner := &countingSource{raw: raw}
		cached := &CachedSource{Source: inner}
		ref := refTo("acme", "widgets", "1.2.3", []byte("something else"))
		for range 2 {
			_, err := cached.Fetch(context.Background(), ref)
			require.NoError(t, err)
		}
		assert.Equal(t, 2, inner.fetches)
	})
}
