package images

import (
	"bufio"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/e2e/ociimage"
)

// A trimmed copy of Rook v1.18.11's go.mod, with every directive form it uses.
const rookGoMod = `module github.com/rook/rook

go 1.24.3

replace (
	github.com/googleapis/gnostic => github.com/googleapis/gnostic v0.4.1
	github.com/kubernetes-incubator/external-storage => github.com/libopenstorage/external-storage v0.20.4-openstorage-rc3

	// TODO: remove this replace once https://github.com/libopenstorage/secrets/pull/83 is merged
	github.com/libopenstorage/secrets => github.com/rook/secrets v0.0.0-20240315053144-3195f6906937
	github.com/portworx/sched-ops => github.com/portworx/sched-ops v0.20.4-openstorage-rc3
	github.com/rook/rook/pkg/apis => ./pkg/apis
)

require (
	github.com/rook/rook/pkg/apis v0.0.0-20241216163035-3170ac6a0c58
	k8s.io/client-go v0.33.3
)

replace example.com/single => example.com/single v1.0.0 // a one-line replace

exclude (
	// exclude goproxy versions with security bugs
	github.com/elazarl/goproxy v0.0.0-20170405201442-c4fc26588b6e
	k8s.io/client-go v1.4.0
)
`

func TestRookBuildGoMod(t *testing.T) {
	got, err := RookBuildGoMod([]byte(rookGoMod), "v1.18.11", "/cache/apis")
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	for _, want := range []string{
		"module rookbuild\n",
		"go 1.24.3\n",
		"require github.com/rook/rook v1.18.11\n",
		"replace github.com/googleapis/gnostic => github.com/googleapis/gnostic v0.4.1\n",
		"replace github.com/kubernetes-incubator/external-storage => github.com/libopenstorage/external-storage v0.20.4-openstorage-rc3\n",
		"replace github.com/libopenstorage/secrets => github.com/rook/secrets v0.0.0-20240315053144-3195f6906937\n",
		"replace github.com/portworx/sched-ops => github.com/portworx/sched-ops v0.20.4-openstorage-rc3\n",
		"replace example.com/single => example.com/single v1.0.0\n",
		"replace github.com/rook/rook/pkg/apis => /cache/apis\n",
		"exclude github.com/elazarl/goproxy v0.0.0-20170405201442-c4fc26588b6e\n",
		"exclude k8s.io/client-go v1.4.0\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, s)
		}
	}
	for _, bad := range []string{"./pkg/apis", "TODO", "//  ", "require (", "k8s.io/client-go v0.33.3"} {
		if strings.Contains(s, bad) {
			t.Errorf("go.mod has %q:\n%s", bad, s)
		}
	}
}

func TestRookBuildGoModErrors(t *testing.T) {
	tests := map[string]string{
		"other relative replace": "module x\n\nreplace example.com/a => ../a\n",
		"replace without arrow":  "module x\n\nreplace (\n\texample.com/a v1.0.0\n)\n",
	}
	for name, gomod := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := RookBuildGoMod([]byte(gomod), "v1.18.11", "/cache/apis"); err == nil {
				t.Errorf("want an error")
			}
		})
	}
}

func TestImageSpecs(t *testing.T) {
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs.tar")
	bin := filepath.Join(dir, "bin")
	for _, p := range []string{rootfs, bin} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ceph := CephImageSpec(rootfs)
	rook := RookImageSpec("v1.18.11", rootfs, bin, nil)
	previous := RookImageSpec("v1.18.0", rootfs, bin, nil)
	pause := PauseImageSpec(bin)
	tests := []struct {
		name       string
		spec       ociimage.Image
		wantNames  string
		user       string
		entrypoint string
		files      int
		base       bool
	}{
		{"ceph", ceph, "quay.io/ceph/ceph:v18.2.7", "", "", 2, true},
		{"rook", rook, "docker.io/rook/ceph:v1.18.11", "2016", "/usr/local/bin/rook", 3, true},
		{"the Rook the e2e upgrades from", previous, "docker.io/rook/ceph:v1.18.0", "2016", "/usr/local/bin/rook", 3, true},
		{"pause", pause, "registry.k8s.io/pause:3.10 registry.k8s.io/pause:3.6", "65535:65535", "/pause", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(tt.spec.Names, " "); got != tt.wantNames {
				t.Errorf("names = %s, want %s", got, tt.wantNames)
			}
			c := tt.spec.Config
			if c.User != tt.user || strings.Join(c.Entrypoint, " ") != tt.entrypoint {
				t.Errorf("user %q entrypoint %q, want %q %q", c.User, c.Entrypoint, tt.user, tt.entrypoint)
			}
			if len(tt.spec.Files) != tt.files {
				t.Errorf("%d files, want %d", len(tt.spec.Files), tt.files)
			}
			for _, shim := range []string{"/usr/local/sbin/dmsetup", "/usr/local/sbin/ceph-osd"} {
				if tt.base && !slices.ContainsFunc(tt.spec.Files, func(f ociimage.File) bool { return f.Path == shim }) {
					t.Errorf("no %s stand-in first in PATH", shim)
				}
			}
			if (tt.spec.Base != "") != tt.base {
				t.Errorf("base = %q", tt.spec.Base)
			}
		})
	}
	if rook.Files[0].Path != "/usr/local/bin/rook" || rook.Files[0].Mode != 0o755 {
		t.Errorf("rook binary file = %+v", rook.Files[0])
	}
}

func TestRookExtraFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"images/ceph/toolbox.sh", "images/ceph/set-ceph-debug-level", "deploy/examples/monitoring/service-monitor.yaml", "deploy/examples/monitoring/grafana/a.json"} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := rookExtraFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	want := "/usr/local/bin/toolbox.sh /usr/local/bin/set-ceph-debug-level /etc/ceph-monitoring/grafana/a.json /etc/ceph-monitoring/service-monitor.yaml"
	if strings.Join(got, " ") != want {
		t.Errorf("files = %v, want %s", got, want)
	}
	if _, err := rookExtraFiles(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("missing Rook folder: want an error")
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "e2e", "ceph-rootfs.sh")); err != nil {
		t.Errorf("module root %s has no hack/e2e/ceph-rootfs.sh: %v", root, err)
	}
}

// TestPause builds the pause program (cached on the second call) and checks
// that it is static and exits 0 on SIGTERM.
func TestPause(t *testing.T) {
	o := Options{CacheDir: t.TempDir(), Log: testWriter{t}}
	bin, err := PauseBinary(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := PauseBinary(context.Background(), o); err != nil || again != bin {
		t.Fatalf("second PauseBinary = %s, %v", again, err)
	}
	// Static: no program interpreter (dynamic loader) to find in an image.
	exe, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("pause is dynamically linked")
		}
	}
	_ = exe.Close()
	cmd := exec.Command(bin)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Pause says it is not PID 1 once its signal handler is in place.
	if line, err := bufio.NewReader(stderr).ReadString('\n'); err != nil || !strings.Contains(line, "first process") {
		t.Fatalf("pause's first line = %q, %v", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pause exited with %v, want 0", err)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("pause ignored SIGTERM")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestAPIsRequire(t *testing.T) {
	m := apisRequireRE.FindStringSubmatch(rookGoMod)
	if m == nil || m[1] != "v0.0.0-20241216163035-3170ac6a0c58" {
		t.Fatalf("pkg/apis version = %v", m)
	}
	if m := apisRequireRE.FindStringSubmatch("module x\n\nrequire github.com/rook/rook/pkg/apis v1.2.3\n"); m == nil || m[1] != "v1.2.3" {
		t.Fatalf("one-line require: %v", m)
	}
}

// TestRookAPIsPatch applies each release's embedded patch to the pkg/apis
// version both releases require (from the module cache or the proxy).
func TestRookAPIsPatch(t *testing.T) {
	for _, version := range RookVersions(true) {
		t.Run(version, func(t *testing.T) { testRookAPIsPatch(t, version) })
	}
}

func testRookAPIsPatch(t *testing.T, version string) {
	dir := filepath.Join(t.TempDir(), "apis")
	got, err := rookAPIs(context.Background(), Options{CacheDir: t.TempDir(), Log: testWriter{t}}, version, []byte(rookGoMod), dir)
	if err != nil {
		t.Fatal(err)
	}
	types, err := os.ReadFile(filepath.Join(got, "ceph.rook.io", "v1", "types.go"))
	if err != nil {
		t.Fatal(err)
	}
	// Used by Rook v1.18's pkg/util/dependents, absent before the patch.
	for _, want := range []string{"PoolEmptyReason", "ConditionRadosNSDeletionIsBlocked"} {
		if !strings.Contains(string(types), want) {
			t.Errorf("patched types.go lacks %s", want)
		}
	}
	if _, err := os.Stat(filepath.Join(got, "ceph.rook.io", "v1", "namespace.go")); err != nil {
		t.Errorf("the patch's new file: %v", err)
	}
	if tests, _ := filepath.Glob(filepath.Join(got, "ceph.rook.io", "v1", "*_test.go")); len(tests) != 0 {
		t.Errorf("tests copied: %v", tests)
	}
	if again, err := rookAPIs(context.Background(), Options{CacheDir: t.TempDir()}, version, []byte(rookGoMod), dir); err != nil || again != got {
		t.Errorf("second rookAPIs = %s, %v", again, err)
	}
}

// Only the upgrade run builds the operator of the Rook it starts from; every
// run builds the one the plugin installs.
func TestRookVersions(t *testing.T) {
	for _, tc := range []struct {
		upgrade bool
		want    []string
	}{
		{false, []string{cachedir.RookVersion}},
		{true, []string{cachedir.PreviousRookVersion, cachedir.RookVersion}},
	} {
		if got := RookVersions(tc.upgrade); !slices.Equal(got, tc.want) {
			t.Errorf("RookVersions(%v) = %v, want %v", tc.upgrade, got, tc.want)
		}
	}
}
