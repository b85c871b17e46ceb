package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// pluginProcess is the real plugin binary, run as in production.
type pluginProcess struct {
	cmd         *exec.Cmd
	exited      chan error
	addr        string
	metricsAddr string

	mu sync.Mutex
	// peakAnon and peakFile are the largest anonymous (heap, stacks) and
	// file-backed (the binary's own pages) resident sizes sampled.
	peakAnon, peakFile int64
}

func buildPlugin(ctx context.Context, repoRoot, dir string) (string, error) {
	out := filepath.Join(dir, "ceph-rook")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	cmd.Dir = repoRoot
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the plugin: %w\n%s", err, output)
	}
	return out, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startPluginProcess(binary, kubeconfig, chartRepo string, env []string, log io.Writer) (*pluginProcess, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	metricsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, "--addr="+addr, "--metrics-addr="+metricsAddr)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+kubeconfig,
		"FUNDAMENT_CLUSTER_ID=bench", "FUNDAMENT_INSTALL_ID=bench", "FUNDAMENT_ORGANIZATION_ID=bench",
		"FUNP_CHART_REPOSITORY="+chartRepo,
		"FUNP_LOG_LEVEL=error",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &pluginProcess{cmd: cmd, exited: make(chan error, 1), addr: addr, metricsAddr: metricsAddr}
	done := make(chan struct{})
	go func() { p.exited <- cmd.Wait(); close(done) }()
	go p.sampleMemory(done)
	return p, nil
}

// sampleMemory records the split of resident memory every 100 ms: VmHWM
// says how much, this says what (the Go heap, or the binary's pages).
func (p *pluginProcess) sampleMemory(done <-chan struct{}) {
	path := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
	for {
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		anon, file := statusKB(string(data), "RssAnon:"), statusKB(string(data), "RssFile:")
		p.mu.Lock()
		p.peakAnon, p.peakFile = max(p.peakAnon, anon*1024), max(p.peakFile, file*1024)
		p.mu.Unlock()
	}
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

func (p *pluginProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		resp, err := http.Get("http://" + p.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-p.exited:
			return fmt.Errorf("the plugin exited: %v", err)
		case <-deadline:
			return fmt.Errorf("the plugin was not ready within %s", timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (p *pluginProcess) stop() error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("the plugin did not stop within 40s of SIGTERM")
	}
}

// peakRSS is the process's high-water mark of resident memory (VmHWM).
func (p *pluginProcess) peakRSS() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM for pid %d", p.cmd.Process.Pid)
}

// metrics scrapes the controllers' reconcile counters, keyed by
// "controller result" (results: success, error, requeue, requeue_after),
// plus "errors" for controller_runtime_reconcile_errors_total.
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
		if !ok || (name != "controller_runtime_reconcile_total" && name != "controller_runtime_reconcile_errors_total") {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		controller, result := label(labels, "controller"), label(labels, "result")
		if name == "controller_runtime_reconcile_errors_total" {
			out["errors"] += v
			continue
		}
		out[controller+" "+result] += v
		out["all "+result] += v
	}
	return out, s.Err()
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
