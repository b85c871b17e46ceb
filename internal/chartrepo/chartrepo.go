// Package chartrepo serves chart archives as a Helm chart repository on a
// local address, so the plugin's real install path (repository URL, chart
// name, pinned version) runs without network access: in the install tests
// and in `just run`, with Rook's real rook-ceph chart.
package chartrepo

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/repo"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
)

// Server is a running chart repository.
type Server struct {
	URL string
	// Digest is the served archive's digest, for the plugin to pin
	// (FUNP_CHART_DIGEST), so every local install checks it as production
	// checks the published one.
	Digest   string
	dir      string
	listener net.Listener
	server   *http.Server
}

// Serve copies the archive into a fresh folder, indexes it and serves it
// on addr ("127.0.0.1:0" for any free port).
func Serve(addr, archive string) (*Server, error) {
	dir, err := os.MkdirTemp("", "chartrepo-")
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("chart archive: %w", err)
	}
	served := filepath.Join(dir, filepath.Base(archive))
	if err := os.WriteFile(served, data, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	digest, err := helmexec.ArchiveDigest(served)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("chart repository on %s: %w", addr, err)
	}
	url := "http://" + l.Addr().String()
	index, err := repo.IndexDirectory(dir, url)
	if err == nil {
		err = index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)
	}
	if err != nil {
		l.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("index charts: %w", err)
	}
	s := &Server{URL: url, Digest: digest, dir: dir, listener: l, server: &http.Server{Handler: http.FileServer(http.Dir(dir))}}
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Close stops serving and removes the folder.
func (s *Server) Close() error {
	err := s.server.Close()
	os.RemoveAll(s.dir)
	return err
}
