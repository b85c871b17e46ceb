package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// profiler saves the plugin's pprof profiles into a folder, named by
// inventory size and moment, for `go tool pprof`. A nil profiler saves
// nothing.
type profiler struct {
	// base is the pprof endpoints' URL, up to /debug/pprof/.
	base string
	// client reaches it (nil: http.DefaultClient).
	client *http.Client
	dir    string
	disks  int
	// process names the profiled process in file names ("" for the plugin).
	process string
}

func (p *profiler) url(path string) string { return p.base + path }

func (p *profiler) file(moment, kind string) string {
	if p.process != "" {
		kind = p.process + "." + kind
	}
	return filepath.Join(p.dir, fmt.Sprintf("%d-%s.%s.pprof", p.disks, moment, kind))
}

// heap saves the heap profile after a garbage collection (gc=1), so it
// shows what is live at that moment.
func (p *profiler) heap(ctx context.Context, moment string) error {
	if p == nil {
		return nil
	}
	return p.save(ctx, p.url("heap?gc=1"), p.file(moment, "heap"))
}

// cpu profiles the process for the first cpuProfileLength of during.
// (pprof writes a CPU profile only when its length has passed.)
func (p *profiler) cpu(ctx context.Context, moment string, during func() error) error {
	return p.cpuFor(ctx, moment, cpuProfileLength, during)
}

// cpuFor profiles the process for the first length of during.
func (p *profiler) cpuFor(ctx context.Context, moment string, length time.Duration, during func() error) error {
	if p == nil {
		return during()
	}
	saved := make(chan error, 1)
	go func() {
		saved <- p.save(ctx, p.url(fmt.Sprintf("profile?seconds=%d", max(1, int(length.Seconds())))), p.file(moment, "cpu"))
	}()
	err := during()
	if saveErr := <-saved; err == nil {
		err = saveErr
	}
	return err
}

const cpuProfileLength = 20 * time.Second

func (p *profiler) save(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	c := p.client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// apiServerProfiler profiles the control plane's kube-apiserver (its
// /debug/pprof, with the admin's credentials), or nil when dir is empty.
func apiServerProfiler(cfg *rest.Config, dir string, disks int) (*profiler, error) {
	if dir == "" {
		return nil, nil
	}
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &profiler{base: strings.TrimSuffix(cfg.Host, "/") + "/debug/pprof/", client: c, dir: dir, disks: disks, process: "apiserver"}, nil
}
