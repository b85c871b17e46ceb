package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/chartrepo"
	"github.com/fundament-oss/ceph-rook/internal/pluginproc"
)

// pluginProcess is the real plugin binary, run as in production, with
// what the benchmark reads of it: its metrics and its memory.
type pluginProcess struct {
	*pluginproc.Process
	metricsAddr string
	// pprofAddr serves the plugin's profiles (empty: not profiled).
	pprofAddr string

	mu sync.Mutex
	// peakAnon and peakFile are the largest anonymous (heap, stacks) and
	// file-backed (the binary's own pages) resident sizes sampled.
	peakAnon, peakFile int64
	// peakChild is the largest VmHWM seen of a child process.
	peakChild int64
}

func buildPlugin(ctx context.Context, repoRoot, dir string) (string, error) {
	out := filepath.Join(dir, "ceph-rook")
	return out, pluginproc.Build(ctx, repoRoot, out)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startPluginProcess(binary, kubeconfig string, chartRepo *chartrepo.Server, env []string, profiled bool, log io.Writer) (*pluginProcess, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var pprofAddr string
	if profiled {
		if pprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
	}
	proc, err := pluginproc.Start(pluginproc.Options{
		Binary:      binary,
		Addr:        addr,
		MetricsAddr: metricsAddr,
		PprofAddr:   pprofAddr,
		Kubeconfig:  kubeconfig,
		ID:          "bench",
		Env:         append([]string{"FUNP_CHART_REPOSITORY=" + chartRepo.URL, "FUNP_DEV_INSECURE_CHART_REPOSITORY=true", "FUNP_CHART_DIGEST=" + chartRepo.Digest, "FUNP_LOG_LEVEL=error"}, env...),
		Output:      log,
	})
	if err != nil {
		return nil, err
	}
	p := &pluginProcess{Process: proc, metricsAddr: metricsAddr, pprofAddr: pprofAddr}
	go p.sampleMemory()
	return p, nil
}

// profiler saves this process's profiles into dir (nil when the process
// is not profiled).
func (p *pluginProcess) profiler(dir string, disks int) *profiler {
	if p.pprofAddr == "" {
		return nil
	}
	return &profiler{base: "http://" + p.pprofAddr + "/debug/pprof/", dir: dir, disks: disks}
}

func (p *pluginProcess) stop() error { return p.Stop(40 * time.Second) }

// sampleMemory records the split of resident memory every 100 ms: VmHWM
// says how much, this says what (the Go heap, or the binary's pages).
func (p *pluginProcess) sampleMemory() {
	path := fmt.Sprintf("/proc/%d/status", p.Pid())
	for {
		select {
		case <-p.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		anon, file := statusKB(string(data), "RssAnon:"), statusKB(string(data), "RssFile:")
		child := p.childrenHWM()
		p.mu.Lock()
		p.peakAnon, p.peakFile = max(p.peakAnon, anon*1024), max(p.peakFile, file*1024)
		p.peakChild = max(p.peakChild, child*1024)
		p.mu.Unlock()
	}
}

// childrenHWM is the largest VmHWM (kB) of the plugin's child processes
// now. A child belongs to the thread that started it, so every thread's
// list is read.
func (p *pluginProcess) childrenHWM() int64 {
	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p.Pid()))
	var peak int64
	for _, list := range lists {
		data, err := os.ReadFile(list)
		if err != nil {
			continue
		}
		for _, pid := range strings.Fields(string(data)) {
			if status, err := os.ReadFile("/proc/" + pid + "/status"); err == nil {
				peak = max(peak, statusKB(string(status), "VmHWM:"))
			}
		}
	}
	return peak
}

func (p *pluginProcess) childPeak() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakChild
}

func (p *pluginProcess) peakSplit() (anon, file int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakAnon, p.peakFile
}

func statusKB(status, key string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// peakRSS is the process's high-water mark of resident memory (VmHWM).
func (p *pluginProcess) peakRSS() (int64, error) { return p.statusBytes("VmHWM:") }

// statusBytes is a kB field of the process's /proc status, in bytes.
func (p *pluginProcess) statusBytes(key string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, err
	}
	return statusKB(string(data), key) * 1024, nil
}

// metrics scrapes the controllers' reconcile counters, keyed by
// "controller result" (results: success, error, requeue, requeue_after),
// plus "errors" for controller_runtime_reconcile_errors_total and
// "workers controller" for each started controller's worker count.
func (p *pluginProcess) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + p.metricsAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		if timing, ok := timings[name]; ok {
			// The inventory's queue and work, and the client's time, by
			// verb: where convergence waits (Sample.Waits).
			if key := label(labels, "name"); key == "" || key == "diskinventory" {
				out[timing] += v
			}
			continue
		}
		if name != "controller_runtime_reconcile_total" && name != "controller_runtime_reconcile_errors_total" && name != "controller_runtime_max_concurrent_reconciles" {
			continue
		}
		controller, result := label(labels, "controller"), label(labels, "result")
		switch name {
		case "controller_runtime_reconcile_errors_total":
			out["errors"] += v
			continue
		case "controller_runtime_max_concurrent_reconciles":
			out["workers "+controller] = v
			continue
		}
		out[controller+" "+result] += v
		out["all "+result] += v
	}
	return out, s.Err()
}

// timings are the plugin's duration metrics the benchmark reads, by the
// key metrics() gives their sums and counts.
var timings = map[string]string{
	"workqueue_queue_duration_seconds_sum":          "queue seconds",
	"workqueue_queue_duration_seconds_count":        "queue count",
	"workqueue_work_duration_seconds_sum":           "work seconds",
	"workqueue_work_duration_seconds_count":         "work count",
	"rest_client_rate_limiter_duration_seconds_sum": "limiter seconds",
	"rest_client_request_duration_seconds_sum":      "request seconds",
	"rest_client_request_duration_seconds_count":    "request count",
}

func label(labels, name string) string {
	for _, kv := range strings.Split(labels, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// waitController waits until the plugin runs the named controller: its
// worker count is set when the controller starts, which is after the
// plugin won leader election and the controller's caches synced. Ready
// (/readyz) comes before that, once the caches synced.
func (p *pluginProcess) waitController(ctx context.Context, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if m, err := p.metrics(); err == nil && m["workers "+name] > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the plugin's %s controller did not start within %s", name, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.Done():
			return fmt.Errorf("the plugin exited: %v", p.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
