package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler saves the plugin's pprof profiles into a folder, named by
// inventory size and moment, for `go tool pprof`. A nil profiler saves
// nothing.
type profiler struct {
	addr, dir string
	disks     int
}

func (p *profiler) url(path string) string { return "http://" + p.addr + "/debug/pprof/" + path }

func (p *profiler) file(moment, kind string) string {
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

// cpu profiles the plugin for the first cpuProfileLength of during.
// (pprof writes a CPU profile only when its length has passed.)
func (p *profiler) cpu(ctx context.Context, moment string, during func() error) error {
	if p == nil {
		return during()
	}
	saved := make(chan error, 1)
	go func() {
		saved <- p.save(ctx, p.url(fmt.Sprintf("profile?seconds=%d", int(cpuProfileLength.Seconds()))), p.file(moment, "cpu"))
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
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", url, err)
	}
	defer resp.Body.Close()
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
