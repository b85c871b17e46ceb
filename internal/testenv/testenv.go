package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	cephv1 "github.com/rook/rook/pkg/apis/ceph.rook.io/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
)

// Options choose what the control plane is started with.
type Options struct {
	// Scheme backs Env.Client. Nil means DefaultScheme().
	Scheme *kruntime.Scheme
	// OurCRDs installs the generated CRDs in the repository's crds/ folder.
	OurCRDs bool
	// RookCRDs installs Rook's real deploy/examples/crds.yaml.
	RookCRDs bool
	// SnapshotCRDs installs the external-snapshotter's VolumeSnapshot,
	// VolumeSnapshotContent and VolumeSnapshotClass CRDs (SnapshotCRDFiles),
	// as a cluster whose distribution ships snapshots has them.
	SnapshotCRDs bool
	// ExtraCRDPaths are further CRD files or folders to install.
	ExtraCRDPaths []string
	// GarbageCollector runs kube-controller-manager with only the garbage
	// collector controller.
	GarbageCollector bool
	// DataDir keeps etcd's data in DataDir/etcd so a later Start resumes
	// the same cluster state (for `just run`). Empty means a throwaway
	// folder, removed at Stop.
	DataDir string
	// UnsafeNoFsync runs etcd with --unsafe-no-fsync: writes are not
	// synced to disk, so a benchmark measures the API server and its
	// client rather than the machine's disk (never for data that must
	// survive a crash).
	UnsafeNoFsync bool
}

// Env is a running control plane.
type Env struct {
	Environment *envtest.Environment
	Config      *rest.Config
	Client      client.Client
	Scheme      *kruntime.Scheme
	// Kubeconfig is the path of an admin kubeconfig file for the API server.
	Kubeconfig string
	// CRDs are the CustomResourceDefinitions installed at start.
	CRDs []*apiextensionsv1.CustomResourceDefinition

	dir       string
	kcm       *exec.Cmd
	kcmExited chan struct{}
}

// DefaultScheme knows the built-in kinds, CRDs and Rook's ceph.rook.io/v1.
func DefaultScheme() *kruntime.Scheme {
	scheme := kruntime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(apiextensionsv1.AddToScheme(scheme))
	must(cephv1.AddToScheme(scheme))
	return scheme
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// RepoRoot is the module root, found from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// AssetsDir is where etcd and kube-apiserver are looked for:
// $KUBEBUILDER_ASSETS when set, else the folder `just envtest` builds into.
func AssetsDir() string {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	return cachedir.EnvtestAssets()
}

// CheckPrerequisites reports what is missing, naming the command that
// provides it.
func CheckPrerequisites(opts Options) error {
	var missing []error
	bins := []string{"etcd", "kube-apiserver"}
	if opts.GarbageCollector {
		bins = append(bins, "kube-controller-manager")
	}
	for _, bin := range bins {
		if _, err := os.Stat(filepath.Join(AssetsDir(), bin)); err != nil {
			missing = append(missing, fmt.Errorf("%s not found in %s: run `just envtest` (hack/envtest/build.sh) to build the control plane", bin, AssetsDir()))
		}
	}
	if opts.RookCRDs {
		if _, err := os.Stat(cachedir.RookCRDs()); err != nil {
			missing = append(missing, fmt.Errorf("rook CRDs not found at %s: run `just rook-artifacts` (go run ./hack/rook)", cachedir.RookCRDs()))
		}
	}
	if opts.OurCRDs {
		if _, err := os.Stat(filepath.Join(RepoRoot(), "crds")); err != nil {
			missing = append(missing, fmt.Errorf("the project's CRDs are not in %s: run `just generate`", filepath.Join(RepoRoot(), "crds")))
		}
	}
	return errors.Join(missing...)
}

// snapshotClientModule is the external-snapshotter's API module, a
// dependency of the plugin: its module zip carries the CRDs generated from
// the same types, so the versions cannot part.
const snapshotClientModule = "github.com/kubernetes-csi/external-snapshotter/client/v8"

// SnapshotCRDFiles are the snapshot.storage.k8s.io CRDs of the
// external-snapshotter version go.mod requires, in the module cache.
func SnapshotCRDFiles() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", snapshotClientModule)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("find module %s (go list -m): %w", snapshotClientModule, err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd")
	var files []string
	for _, kind := range []string{"volumesnapshotclasses", "volumesnapshotcontents", "volumesnapshots"} {
		f := filepath.Join(dir, "snapshot.storage.k8s.io_"+kind+".yaml")
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("snapshot CRD of module %s: %w", snapshotClientModule, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// Start brings up the control plane. Call Stop when done.
func Start(opts Options) (*Env, error) {
	if err := CheckPrerequisites(opts); err != nil {
		return nil, err
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = DefaultScheme()
	}
	var crdPaths []string
	if opts.OurCRDs {
		crdPaths = append(crdPaths, filepath.Join(RepoRoot(), "crds"))
	}
	if opts.RookCRDs {
		crdPaths = append(crdPaths, cachedir.RookCRDs())
	}
	if opts.SnapshotCRDs {
		files, err := SnapshotCRDFiles()
		if err != nil {
			return nil, err
		}
		crdPaths = append(crdPaths, files...)
	}
	crdPaths = append(crdPaths, opts.ExtraCRDPaths...)

	environment := &envtest.Environment{
		BinaryAssetsDirectory: AssetsDir(),
		CRDDirectoryPaths:     crdPaths,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	if opts.DataDir != "" {
		etcdDir := filepath.Join(opts.DataDir, "etcd")
		if err := os.MkdirAll(etcdDir, 0o700); err != nil {
			return nil, err
		}
		environment.ControlPlane.Etcd = &envtest.Etcd{DataDir: etcdDir}
	}
	if opts.UnsafeNoFsync {
		if environment.ControlPlane.Etcd == nil {
			environment.ControlPlane.Etcd = &envtest.Etcd{}
		}
		environment.ControlPlane.Etcd.Configure().Append("unsafe-no-fsync", "true")
	}
	cfg, err := environment.Start()
	if err != nil {
		return nil, fmt.Errorf("start envtest (binaries from %s): %w", AssetsDir(), err)
	}
	env := &Env{Environment: environment, Config: cfg, Scheme: scheme, CRDs: environment.CRDs}
	if err := env.setup(opts); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return env, nil
}

func (e *Env) setup(opts Options) error {
	var err error
	if e.Client, err = client.New(e.Config, client.Options{Scheme: e.Scheme}); err != nil {
		return fmt.Errorf("client for envtest: %w", err)
	}
	if e.dir, err = os.MkdirTemp("", "testenv-"); err != nil {
		return err
	}
	if e.Kubeconfig, err = e.writeKubeconfig("admin"); err != nil {
		return err
	}
	if opts.GarbageCollector {
		return e.startGarbageCollector()
	}
	return nil
}

// writeKubeconfig adds a system:masters user and writes its kubeconfig.
func (e *Env) writeKubeconfig(name string) (string, error) {
	user, err := e.Environment.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("add envtest user %s: %w", name, err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("kubeconfig for %s: %w", name, err)
	}
	path := filepath.Join(e.dir, name+".kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// startGarbageCollector runs kube-controller-manager with nothing but the
// garbage collector, so owner references cascade as on a real cluster.
func (e *Env) startGarbageCollector() error {
	kubeconfig, err := e.writeKubeconfig("kube-controller-manager")
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(e.dir, "kube-controller-manager.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(AssetsDir(), "kube-controller-manager"),
		"--kubeconfig="+kubeconfig,
		"--controllers=garbagecollector",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--secure-port=0",
	)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start kube-controller-manager: %w", err)
	}
	e.kcm = cmd
	e.kcmExited = make(chan struct{})
	go func() { _ = cmd.Wait(); close(e.kcmExited) }()
	return nil
}

// Stop ends the controller manager and the control plane.
func (e *Env) Stop() error {
	if e.kcm != nil && e.kcm.Process != nil {
		_ = e.kcm.Process.Signal(os.Interrupt)
		select {
		case <-e.kcmExited:
		case <-time.After(5 * time.Second):
			_ = e.kcm.Process.Kill()
			<-e.kcmExited
		}
	}
	err := e.Environment.Stop()
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
	return err
}

// Shared is one control plane for a test package, started at the first
// Env call (a test run of only pure functions starts none) and stopped by
// Main once every test has run.
type Shared struct {
	opts Options
	once sync.Once
	env  *Env
	err  error
}

// NewShared describes the package's control plane; nothing starts yet.
func NewShared(opts Options) *Shared { return &Shared{opts: opts} }

// Env is the running control plane, started on the first call. A control
// plane that cannot start fails the calling test with the reason (and
// every later caller with the same one), never skips it.
func (s *Shared) Env(t testing.TB) *Env {
	t.Helper()
	s.once.Do(func() {
		start := time.Now()
		s.env, s.err = Start(s.opts)
		if s.err == nil {
			t.Logf("testenv: control plane started in %s", time.Since(start).Round(10*time.Millisecond))
		}
	})
	if s.err != nil {
		t.Fatalf("testenv: %v", s.err)
	}
	return s.env
}

// Main runs the package's tests, stops the control plane if a test started
// one, and exits with the tests' result.
func (s *Shared) Main(m *testing.M) {
	code := m.Run()
	if s.env != nil {
		if err := s.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		}
	}
	os.Exit(code)
}

// Eventually polls cond until it returns nil or the timeout passes, and
// returns the last error. Tests use it for what controllers do in time.
func Eventually(ctx context.Context, timeout time.Duration, cond func(context.Context) error) error {
	return Poll(ctx, timeout, func(time.Duration) time.Duration { return 100 * time.Millisecond }, cond)
}

// Poll is Eventually with the pause after each call of cond chosen by gap
// from how long that call took.
func Poll(ctx context.Context, timeout time.Duration, gap func(took time.Duration) time.Duration, cond func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		start := time.Now()
		err := cond(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %w", timeout, err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(gap(time.Since(start))):
		}
	}
}
