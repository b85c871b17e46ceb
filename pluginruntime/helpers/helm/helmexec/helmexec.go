// Package helmexec runs a Helm install in a child process, so that a
// long-running plugin does not link the Helm SDK: Helm pulls in kubectl,
// kustomize and OCI registry clients, tens of megabytes of code that stay
// resident for the life of the process although they run once, at install.
//
// The plugin ships a small helper binary beside itself whose main calls
// helm.ServeRequest (package pluginruntime/helpers/helm), and runs it
// through a Runner; this package imports nothing of Helm's.
//
//	bin, err := helmexec.Locate("my-plugin-helm")
//	if err != nil { ... } // not beside the plugin, nor on $PATH
//	res, err := helmexec.Runner{Binary: bin}.InstallOrUpgrade(ctx, restConfig, helmexec.Request{
//		Name:      "rook-ceph",
//		Namespace: "rook-ceph",
//		Chart:     helmexec.Chart{RepoURL: "https://charts.rook.io/release", Name: "rook-ceph", Version: "v1.18.11"},
//	})
//
// The protocol is one JSON Request on the helper's stdin and one JSON
// Response on its stdout; the helper logs to stderr, which the Runner
// passes through, and exits non-zero when the install failed.
package helmexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// Chart names a chart in a chart repository (see helm.Chart).
type Chart struct {
	RepoURL string `json:"repoURL"`
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// Request is one InstallOrUpgrade call (see helm.Release for the fields'
// meaning). Values travel as JSON, so numbers arrive as float64, as they
// do from a values file.
type Request struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	Chart     Chart          `json:"chart"`
	Values    map[string]any `json:"values,omitempty"`
	Wait      bool           `json:"wait,omitempty"`
	// Timeout is in nanoseconds on the wire; zero is Helm's default.
	Timeout   time.Duration `json:"timeout,omitempty"`
	Exclusive bool          `json:"exclusive,omitempty"`
}

// Response is the helper's answer: what InstallOrUpgrade did and the
// release's revision, or why it failed.
type Response struct {
	// Action is "installed", "upgraded" or "unchanged" (helm.Action).
	Action   string `json:"action,omitempty"`
	Revision int    `json:"revision,omitempty"`
	Error    string `json:"error,omitempty"`
	// Permanent says retrying cannot help (pluginerrors.Permanent): the
	// Runner's error is then permanent too.
	Permanent bool `json:"permanent,omitempty"`
}

// Flags of the helper binary, which a Runner passes.
const (
	FlagKubeconfig   = "kubeconfig"
	FlagKubeAPIQPS   = "kube-api-qps"
	FlagKubeAPIBurst = "kube-api-burst"
)

// ErrNotFound is wrapped by Locate when the helper is nowhere to be found.
var ErrNotFound = errors.New("helm helper binary not found")

// Locate finds the helper binary name beside the running executable (where
// an image or a build puts it) or else on $PATH. Its error names both
// places it looked.
func Locate(name string) (string, error) {
	var beside string
	if self, err := os.Executable(); err == nil {
		beside = filepath.Join(filepath.Dir(self), name)
		if info, err := os.Stat(beside); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%w: %s is neither beside this executable (%s) nor on $PATH", ErrNotFound, name, beside)
}

// DefaultStopGrace is how long a Runner's helper has to exit after SIGTERM.
const DefaultStopGrace = 10 * time.Second

// Runner runs the helper binary, one process per call.
type Runner struct {
	// Binary is the helper's path (see Locate).
	Binary string
	// Stderr receives the helper's log lines as they come (os.Stderr when
	// nil), so they land in the plugin's container log.
	Stderr io.Writer
	// StopGrace is how long the helper has after SIGTERM, when ctx ends,
	// before it is killed (DefaultStopGrace when zero).
	StopGrace time.Duration
}

// InstallOrUpgrade makes the release match req, in a helper process that
// talks to the API server of config (written to a private temporary
// kubeconfig, see Kubeconfig, and removed afterwards; its QPS and Burst
// are passed as flags). The helper is stopped with SIGTERM when ctx ends,
// and killed if this process dies first, so it never outlives a lock its
// caller holds.
//
// A failure carries the helper's own error message or, when it died
// without answering, how it exited and the end of its stderr.
func (r Runner) InstallOrUpgrade(ctx context.Context, config *rest.Config, req Request) (Response, error) {
	input, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode the helm request: %w", err)
	}
	kubeconfig, err := writeKubeconfig(config)
	if err != nil {
		return Response{}, err
	}
	defer os.Remove(kubeconfig)

	args := []string{"--" + FlagKubeconfig + "=" + kubeconfig}
	if config.QPS > 0 {
		args = append(args, "--"+FlagKubeAPIQPS+"="+strconv.FormatFloat(float64(config.QPS), 'g', -1, 32))
	}
	if config.Burst > 0 {
		args = append(args, "--"+FlagKubeAPIBurst+"="+strconv.Itoa(config.Burst))
	}
	cmd := exec.CommandContext(ctx, r.Binary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = r.StopGrace
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = DefaultStopGrace
	}
	cmd.SysProcAttr = childProcAttr()
	cmd.Env = HelperEnv(os.Environ(), filepath.Join(os.TempDir(), "pluginruntime-helm"))
	var stdout bytes.Buffer
	stderrTail := &tailBuffer{max: 8 << 10}
	passthrough := r.Stderr
	if passthrough == nil {
		passthrough = os.Stderr
	}
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(passthrough, stderrTail)

	// The parent-death signal follows the thread that started the child, so
	// that thread must live as long as the child does.
	runtime.LockOSThread()
	err = cmd.Run()
	runtime.UnlockOSThread()

	name := filepath.Base(r.Binary)
	var res Response
	decodeErr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res)
	switch {
	case ctx.Err() != nil && err != nil:
		return Response{}, fmt.Errorf("%s stopped: %w", name, ctx.Err())
	case decodeErr == nil && res.Error != "" && res.Permanent:
		return res, pluginerrors.NewPermanent(fmt.Errorf("%s: %s", name, res.Error))
	case decodeErr == nil && res.Error != "":
		return res, fmt.Errorf("%s: %s", name, res.Error)
	case err != nil:
		return Response{}, fmt.Errorf("%s %s: %w%s", name, exitWithoutAnswer(decodeErr), err, stderrTail.lines(10))
	case decodeErr != nil:
		return Response{}, fmt.Errorf("%s exited without a valid answer on stdout (%v)%s", name, decodeErr, stderrTail.lines(10))
	}
	return res, nil
}

func exitWithoutAnswer(decodeErr error) string {
	if decodeErr != nil {
		return "failed without answering"
	}
	return "failed"
}

// tailBuffer keeps the last max bytes written to it. It is written by
// exec's copying goroutine, which may outlive Wait by WaitDelay.
type tailBuffer struct {
	max int
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lines is the last n lines, introduced for an error message, or nothing.
func (t *tailBuffer) lines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	text := strings.TrimRight(string(t.buf), "\n")
	if text == "" {
		return "; its stderr was empty"
	}
	all := strings.Split(text, "\n")
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return "; its stderr ends with:\n" + strings.Join(all, "\n")
}

// Helm's home folders, which it otherwise derives from $HOME.
var helmHomes = []struct{ env, sub string }{
	{"HELM_CACHE_HOME", "cache"},
	{"HELM_CONFIG_HOME", "config"},
	{"HELM_DATA_HOME", "data"},
}

// HelperEnv is the helper's environment: environ, with Helm's cache, config
// and data homes under dir unless environ sets them. Helm derives some
// paths from $HOME whatever its settings say (a repository's index is
// written under HELM_CACHE_HOME), and a plugin's pod has no writable home:
// its user has none and its root filesystem is read-only. dir is under
// os.TempDir, which the pod mounts writable.
func HelperEnv(environ []string, dir string) []string {
	env := slices.Clone(environ)
	for _, h := range helmHomes {
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, h.env+"=") }) {
			env = append(env, h.env+"="+filepath.Join(dir, h.sub))
		}
	}
	return env
}
