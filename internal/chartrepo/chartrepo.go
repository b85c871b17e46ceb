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
	// Digest is the first served archive's digest, for the plugin to pin
	// (FUNP_CHART_DIGEST), so every local install checks it as production
	// checks the published one.
	Digest string
	// Digests are every served archive's, by the archive's file name
	// (rook-ceph-v1.18.0.tgz).
	Digests  map[string]string
	dir      string
	listener net.Listener
	server   *http.Server
}

// Serve copies the archives into a fresh folder, indexes them and serves
// them on addr ("127.0.0.1:0" for any free port).
func Serve(addr string, archives ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "chartrepo-")
	if err != nil {
		return nil, err
	}
	s, err := serve(dir, addr, archives)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func serve(dir, addr string, archives []string) (*Server, error) {
	if len(archives) == 0 {
		return nil, fmt.Errorf("chart repository: no archive to serve")
	}
	digests := map[string]string{}
	for _, archive := range archives {
		data, err := os.ReadFile(archive)
		if err != nil {
			return nil, fmt.Errorf("chart archive: %w", err)
		}
		served := filepath.Join(dir, filepath.Base(archive))
		if err := os.WriteFile(served, data, 0o644); err != nil {
			return nil, err
		}
		if digests[filepath.Base(archive)], err = helmexec.ArchiveDigest(served); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("chart repository on %s: %w", addr, err)
	}
	url := "http://" + l.Addr().String()
	index, err := repo.IndexDirectory(dir, url)
	if err == nil {
		err = index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644)
	}
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("index charts: %w", err)
	}
	s := &Server{URL: url, Digest: digests[filepath.Base(archives[0])], Digests: digests, dir: dir, listener: l,
		server: &http.Server{Handler: http.FileServer(http.Dir(dir))}}
	go func() { _ = s.server.Serve(l) }()
	return s, nil
}

// Close stops serving and removes the folder.
func (s *Server) Close() error {
	err := s.server.Close()
	os.RemoveAll(s.dir)
	return err
}
