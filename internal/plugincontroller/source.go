package plugincontroller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	pluginsv1 "github.com/fundament-oss/ceph-rook/internal/plugincontroller/api/v1"
	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

// DefinitionSource fetches published definitions. Sources return the raw
// bytes exactly as published; checking them against the pinned hash is the
// caller's job (CheckDefinition), so a source needs no trust.
type DefinitionSource interface {
	Fetch(ctx context.Context, ref pluginsv1.DefinitionRef) ([]byte, error)
}

// ErrDefinitionNotFound is wrapped by sources when the definition does not
// exist (yet): the registry may still be publishing it.
var ErrDefinitionNotFound = errors.New("definition not found")

// maxDefinitionSize bounds what a source reads; real definitions are a few
// kilobytes.
const maxDefinitionSize = 1 << 20

// definitionPath is where a definition lives below a registry or directory
// root: <organization>/<plugin>/<version>/definition.yaml. The same layout
// serves both, so a directory of definitions can be published as a
// registry by any static file server.
func definitionPath(ref pluginsv1.DefinitionRef) []string {
	return []string{ref.OrganizationName, ref.PluginName, ref.PluginVersion, "definition.yaml"}
}

// RegistrySource fetches definitions over HTTP:
//
//	GET <BaseURL>/<organization>/<plugin>/<version>/definition.yaml
//
// answered by 200 and the raw definition, or 404 when there is none.
type RegistrySource struct {
	// BaseURL is the registry's root, such as https://plugins.example.com/v1.
	BaseURL string
	// Client defaults to a client with a 30 s timeout.
	Client *http.Client
}

// Fetch implements DefinitionSource.
func (s *RegistrySource) Fetch(ctx context.Context, ref pluginsv1.DefinitionRef) ([]byte, error) {
	u, err := url.JoinPath(s.BaseURL, definitionPath(ref)...)
	if err != nil {
		return nil, fmt.Errorf("definition URL below %q: %w", s.BaseURL, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("definition request %s: %w", u, err)
	}
	client := s.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch definition: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", u, ErrDefinitionNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxDefinitionSize+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", u, err)
	}
	if len(raw) > maxDefinitionSize {
		return nil, fmt.Errorf("GET %s: definition larger than %d bytes", u, maxDefinitionSize)
	}
	return raw, nil
}

// DirectorySource reads definitions from a local directory laid out as the
// registry is, <Dir>/<organization>/<plugin>/<version>/definition.yaml. It
// is for development and air-gapped clusters.
type DirectorySource struct {
	Dir string
}

// Fetch implements DefinitionSource.
func (s *DirectorySource) Fetch(_ context.Context, ref pluginsv1.DefinitionRef) ([]byte, error) {
	// The API server validated the parts as DNS labels and a version
	// without slashes, so the path cannot leave Dir.
	path := filepath.Join(append([]string{s.Dir}, definitionPath(ref)...)...)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, ErrDefinitionNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read definition: %w", err)
	}
	return raw, nil
}

// CachedSource remembers definitions whose bytes match their pinned hash.
// Content pinned by hash cannot change, so the registry is asked once per
// hash rather than at every poll. Bytes that do not match are not kept: the
// registry may still correct them.
type CachedSource struct {
	Source DefinitionSource

	mu    sync.Mutex
	byRef map[pluginsv1.DefinitionRef][]byte
}

// Fetch implements DefinitionSource.
func (s *CachedSource) Fetch(ctx context.Context, ref pluginsv1.DefinitionRef) ([]byte, error) {
	s.mu.Lock()
	raw, ok := s.byRef[ref]
	s.mu.Unlock()
	if ok {
		return raw, nil
	}
	raw, err := s.Source.Fetch(ctx, ref)
	if err != nil {
		return nil, err
	}
	if definition.Hash(raw) == ref.DefinitionHash {
		s.mu.Lock()
		if s.byRef == nil {
			s.byRef = map[pluginsv1.DefinitionRef][]byte{}
		}
		s.byRef[ref] = raw
		s.mu.Unlock()
	}
	return raw, nil
}
