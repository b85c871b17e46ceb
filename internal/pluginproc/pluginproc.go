package pluginproc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// HelmBinary is the plugin's helm helper (./cmd/ceph-rook-helm), which the
// plugin looks for beside its own binary.
const HelmBinary = "ceph-rook-helm"

// Build compiles the plugin (the repository's root package) into out and
// its helm helper beside it, as the Dockerfile does: static, without cgo,
// stripped (BuildPackage). The flags matter for what is measured: with cgo,
// the plugin package kustomize imports turns off the linker's dead-code
// elimination, and the binary, resident in memory, grows by megabytes.
//
// Each of set is a link-time assignment of a string variable
// ("main.RookChartVersion=v1.18.0"): the e2e builds the plugin of the
// release before with it, to upgrade from.
func Build(ctx context.Context, repoRoot, out string, set ...string) error {
	if err := BuildPackage(ctx, repoRoot, ".", out, set...); err != nil {
		return err
	}
	return BuildHelm(ctx, repoRoot, filepath.Join(filepath.Dir(out), HelmBinary))
}

// BuildHelm compiles only the helm helper into out, for tests that run the
// plugin in-process.
func BuildHelm(ctx context.Context, repoRoot, out string) error {
	return BuildPackage(ctx, repoRoot, "./cmd/"+HelmBinary, out)
}

// BuildPackage compiles the module's package pkg into out the way every
// Dockerfile here builds a binary, static, without cgo and stripped, but
// not -trimpath: `just` runs every Go command of the repository with
// CGO_ENABLED=0 (Justfile), so this build reuses every package the tests
// and go vet compiled. With -trimpath, or cgo, every dependency (Helm,
// client-go, controller-runtime) was compiled a second time on a fresh
// machine, in the middle of the tests. The binaries differ from an
// image's only in the source paths they name. set are link-time
// assignments of string variables (Build).
func BuildPackage(ctx context.Context, repoRoot, pkg, out string, set ...string) error {
	ldflags := "-s -w"
	for _, assignment := range set {
		ldflags += " -X " + assignment
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags="+ldflags, "-o", out, pkg)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", pkg, err, output)
	}
	return nil
}

// Options say how to run the plugin.
type Options struct {
	Binary string
	// Addr is the runtime's HTTP server (probes, metadata API, console).
	Addr string
	// MetricsAddr serves the controllers' metrics; empty means off.
	MetricsAddr string
	// PprofAddr serves Go's pprof profiles; empty means off.
	PprofAddr  string
	Kubeconfig string
	// ID fills FUNDAMENT_CLUSTER_ID, _INSTALL_ID and _ORGANIZATION_ID.
	ID string
	// Env adds variables (FUNP_ settings) to the process's environment.
	Env []string
	// Output receives the plugin's stdout and stderr.
	Output io.Writer
}

// Process is a running plugin.
type Process struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs the plugin in its own process group, so a Ctrl-C in a
// terminal reaches the caller first and the plugin is stopped in order,
// not killed mid-write.
func Start(o Options) (*Process, error) {
	metrics := o.MetricsAddr
	if metrics == "" {
		metrics = "0"
	}
	args := []string{"--addr=" + o.Addr, "--metrics-addr=" + metrics}
	if o.PprofAddr != "" {
		args = append(args, "--pprof-addr="+o.PprofAddr)
	}
	cmd := exec.Command(o.Binary, args...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+o.Kubeconfig,
		"FUNDAMENT_CLUSTER_ID="+o.ID,
		"FUNDAMENT_INSTALL_ID="+o.ID,
		"FUNDAMENT_ORGANIZATION_ID="+o.ID,
	)
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout, cmd.Stderr = o.Output, o.Output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the plugin: %w", err)
	}
	p := &Process{Addr: o.Addr, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited; Err then says how.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is how the process exited (valid once Done is closed).
func (p *Process) Err() error { return p.err }

// WaitReady polls /readyz until it answers 200, the plugin exits, ctx
// ends or timeout passes.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		resp, err := http.Get("http://" + p.Addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("the plugin exited before it was ready: %v", p.err)
		case <-deadline:
			return fmt.Errorf("the plugin was not ready within %s", timeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop sends SIGTERM and kills the process if it has not exited within
// grace (the runtime's shutdown deadline is 30 s).
func (p *Process) Stop(grace time.Duration) error {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("the plugin did not stop within %s of SIGTERM", grace)
	}
}

// Kill ends the process with SIGKILL — no shutdown, no lease released, as
// a crash or an OOM kill would — and waits for it.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}
