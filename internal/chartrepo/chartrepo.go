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
)

// Server is a running chart repository.
type Server struct {
	URL      string
	dir      string
	listener net.Listener
	server   *http.Server
}

// Serve copies the archives into a fresh folder, indexes it and serves it
// on addr ("127.0.0.1:0" for any free port).
func Serve(addr string, archives ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "chartrepo-")
	if err != nil {
		return nil, err
	}
	for _, archive := range archives {
		data, err := os.ReadFile(archive)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("chart archive: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(archive)), data, 0o644); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
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
	s := &Server{URL: url, dir: dir, listener: l, server: &http.Server{Handler: http.FileServer(http.Dir(dir))}}
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Close stops serving and removes the folder.
func (s *Server) Close() error {
	err := s.server.Close()
	os.RemoveAll(s.dir)
	return err
}
