package images

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
	"github.com/fundament-oss/ceph-rook/internal/e2e/ociimage"
)

const (
	// CephImage is the name the Ceph image is imported under (the
	// CephCluster's spec.cephVersion.image).
	CephImage = "quay.io/ceph/ceph:v18.2.7"
	// RookUID is the operator's user and group (images/ceph/Dockerfile).
	RookUID = 2016

	// rookRecipe is part of the rook binary's cache path: bump it when the
	// way the binary is built changes.
	rookRecipe = "r2"
)

// PauseImages are the names of the pause image: Kubernetes 1.37's default
// sandbox image and containerd 1.6's default sandbox_image.
var PauseImages = []string{"registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.6"}

//go:embed pause/main.go
var pauseSource []byte

// dmsetupShim answers Rook's `dmsetup version` on a kernel without
// device-mapper (see the script); it sits before /usr/sbin in PATH.
//
//go:embed dmsetup-shim.sh
var dmsetupShim []byte

// cephOSDShim gives Debian's ceph-osd its object classes' absolute
// directory (see the script); it sits before /usr/bin in PATH.
//
//go:embed ceph-osd-shim.sh
var cephOSDShim []byte

// shims are the stand-ins both Ceph-based images carry.
var shims = []ociimage.File{
	{Path: "/usr/local/sbin/dmsetup", Mode: 0o755, Content: dmsetupShim},
	{Path: "/usr/local/sbin/ceph-osd", Mode: 0o755, Content: cephOSDShim},
}

// RookVersions are the Rook releases whose operator images are built: the
// one the plugin installs, and with upgrade the one the e2e installs first
// and upgrades from (only `just e2e-upgrade` runs it: building a Rook
// operator is minutes of CPU every other run would pay for nothing).
func RookVersions(upgrade bool) []string {
	if upgrade {
		return []string{cachedir.PreviousRookVersion, cachedir.RookVersion}
	}
	return []string{cachedir.RookVersion}
}

// RookImage is the operator image a Rook release's chart names.
func RookImage(version string) string { return "docker.io/rook/ceph:" + version }

// rookAPIsPatches take Rook's nested module github.com/rook/rook/pkg/apis
// from the version Rook's go.mod requires to the tree of each release tag
// (rook-apis-<version>.patch; see its header).
//
//go:embed rook-apis-*.patch
var rookAPIsPatches embed.FS

// Options says where things are and where progress goes.
type Options struct {
	// CacheDir is the e2e cache folder; empty means cachedir.Root()/e2e.
	CacheDir string
	// RootfsScript is hack/e2e/ceph-rootfs.sh; empty means found by walking
	// up from the working directory to this module's go.mod.
	RootfsScript string
	// Log receives progress lines; nil means os.Stderr.
	Log io.Writer
	// Upgrade also builds the operator image of the Rook release the
	// e2e's upgrade phase upgrades from (RookVersions).
	Upgrade bool
}

func (o Options) cacheDir() string {
	if o.CacheDir != "" {
		return o.CacheDir
	}
	return filepath.Join(cachedir.Root(), "e2e")
}

func (o Options) log() io.Writer {
	if o.Log != nil {
		return o.Log
	}
	return os.Stderr
}

func (o Options) logf(format string, args ...any) {
	fmt.Fprintf(o.log(), "e2e/images: "+format+"\n", args...)
}

// Archive is one built image archive.
type Archive struct {
	// Names the image is imported under.
	Names []string
	// Path of the Docker-format archive for `ctr images import`.
	Path string
	// Built is true when this call wrote it (false: it was cached).
	Built bool
}

// Build makes (or finds in the cache) the Ceph, Rook (each of
// RookVersions) and pause archives, in that order.
func Build(ctx context.Context, o Options) ([]Archive, error) {
	rootfs, err := CephRootfs(ctx, o)
	if err != nil {
		return nil, err
	}
	pause, err := PauseBinary(ctx, o)
	if err != nil {
		return nil, err
	}
	specs := []ociimage.Image{CephImageSpec(rootfs)}
	for _, version := range RookVersions(o.Upgrade) {
		rook, err := RookBinary(ctx, o, version)
		if err != nil {
			return nil, err
		}
		rookDir, err := RookSource(ctx, o, version)
		if err != nil {
			return nil, err
		}
		rookFiles, err := rookExtraFiles(rookDir)
		if err != nil {
			return nil, err
		}
		specs = append(specs, RookImageSpec(version, rootfs, rook, rookFiles))
	}
	specs = append(specs, PauseImageSpec(pause))
	var out []Archive
	for _, spec := range specs {
		start := time.Now()
		p, built, err := ociimage.Ensure(filepath.Join(o.cacheDir(), "images"), spec)
		if err != nil {
			return nil, err
		}
		if built {
			var size int64
			if st, err := os.Stat(p); err == nil {
				size = st.Size()
			}
			o.logf("image %s: written in %s (%d MB)", strings.Join(spec.Names, ", "), time.Since(start).Round(100*time.Millisecond), size>>20)
		}
		out = append(out, Archive{Names: spec.Names, Path: p, Built: built})
	}
	return out, nil
}

// cephEnv is the environment of both Ceph-based images.
var cephEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"CEPH_VERSION=reef",
	"CEPH_POINT_RELEASE=-18.2.7",
}

// CephImageSpec is the Ceph image over the root filesystem tarball rootfs.
// Rook sets each daemon's command; the default just prints the version.
func CephImageSpec(rootfs string) ociimage.Image {
	return ociimage.Image{
		Names: []string{CephImage},
		Base:  rootfs,
		Files: shims,
		Config: ociimage.Config{
			Cmd:    []string{"ceph", "--version"},
			Env:    cephEnv,
			Labels: map[string]string{"io.ceph-rook.e2e": "ceph"},
		},
	}
}

// RookImageSpec is the operator image: rootfs, the rook binary at
// /usr/local/bin/rook and extra (Rook's toolbox scripts and monitoring
// files), running as 2016 with rook as entrypoint (images/ceph/Dockerfile).
func RookImageSpec(version, rootfs, rookBinary string, extra []ociimage.File) ociimage.Image {
	files := append([]ociimage.File{{Path: "/usr/local/bin/rook", Mode: 0o755, Source: rookBinary}}, shims...)
	files = append(files, extra...)
	return ociimage.Image{
		Names: []string{RookImage(version)},
		Base:  rootfs,
		Files: files,
		Config: ociimage.Config{
			Entrypoint: []string{"/usr/local/bin/rook"},
			Cmd:        []string{""},
			Env:        cephEnv,
			User:       fmt.Sprint(RookUID),
			Labels:     map[string]string{"io.ceph-rook.e2e": "rook"},
		},
	}
}

// PauseImageSpec is the sandbox image: the static pause binary alone.
func PauseImageSpec(pauseBinary string) ociimage.Image {
	return ociimage.Image{
		Names: PauseImages,
		Files: []ociimage.File{{Path: "/pause", Mode: 0o755, Source: pauseBinary}},
		Config: ociimage.Config{
			Entrypoint: []string{"/pause"},
			User:       "65535:65535",
			Labels:     map[string]string{"io.ceph-rook.e2e": "pause"},
		},
	}
}

// CephRootfs runs hack/e2e/ceph-rootfs.sh (a no-op when its tarball is
// cached) and returns the tarball's path.
func CephRootfs(ctx context.Context, o Options) (string, error) {
	script := o.RootfsScript
	if script == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		script = filepath.Join(root, "hack", "e2e", "ceph-rootfs.sh")
	}
	cmd := exec.CommandContext(ctx, script)
	cmd.Env = append(os.Environ(), "CEPH_ROOK_CACHE="+filepath.Dir(o.cacheDir()))
	cmd.Stderr = o.log()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("images: %s: %w", script, err)
	}
	p := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(p, '\n'); i >= 0 {
		p = p[i+1:]
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("images: %s printed %q: %w", script, p, err)
	}
	return p, nil
}

// moduleRoot walks up from the working directory to this module's go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/fundament-oss/ceph-rook\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("images: not inside the ceph-rook module; set Options.RootfsScript")
		}
		dir = parent
	}
}

// goEnv is the environment for the throwaway builds: static binaries, and
// Rook's module fetched without the checksum database (as the brief and
// hack/rook do).
func goEnv() []string {
	return append(os.Environ(), "CGO_ENABLED=0", "GONOSUMDB=github.com/rook", "GOFLAGS=-mod=mod", "GOWORK=off")
}

func run(ctx context.Context, o Options, dir string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("images: %s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, tail(stderr.String(), 40))
	}
	return out, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// RookBinary builds Rook's operator binary of a release (CGO_ENABLED=0,
// version stamped) once, in a throwaway module under the cache that requires
// github.com/rook/rook at that version with the replace and exclude
// directives of Rook's own go.mod, github.com/rook/rook/pkg/apis replaced by
// the release's tree (rookAPIs), and returns its path.
func RookBinary(ctx context.Context, o Options, version string) (string, error) {
	dir := filepath.Join(o.cacheDir(), "rook", version+"-"+rookRecipe)
	bin := filepath.Join(dir, "rook")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	mod := filepath.Join(dir, "src")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return "", err
	}
	rookDir, err := RookSource(ctx, o, version)
	if err != nil {
		return "", err
	}
	rookGoMod, err := os.ReadFile(filepath.Join(rookDir, "go.mod"))
	if err != nil {
		return "", err
	}
	apis, err := rookAPIs(ctx, o, version, rookGoMod, filepath.Join(dir, "apis"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(mod, "go.sum")); err != nil {
		o.logf("preparing a module for github.com/rook/rook %s", version)
		gomod, err := RookBuildGoMod(rookGoMod, version, apis)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(mod, "go.mod"), gomod, 0o644); err != nil {
			return "", err
		}
		tools := "//go:build tools\n\npackage tools\n\nimport _ \"github.com/rook/rook/cmd/rook\"\n"
		if err := os.WriteFile(filepath.Join(mod, "tools.go"), []byte(tools), 0o644); err != nil {
			return "", err
		}
		if _, err := run(ctx, o, mod, "go", "mod", "tidy"); err != nil {
			os.Remove(filepath.Join(mod, "go.sum"))
			return "", err
		}
	}
	o.logf("building rook %s (cold: ~10 min on 2 busy cores)", version)
	ldflags := "-s -w -X github.com/rook/rook/pkg/version.Version=" + version
	if _, err := run(ctx, o, mod, "nice", "-n", "10", "go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin+".tmp", "github.com/rook/rook/cmd/rook"); err != nil {
		return "", err
	}
	return bin, os.Rename(bin+".tmp", bin)
}

// RookSource downloads github.com/rook/rook at a release into the module
// cache (a no-op when it is there) and returns its folder.
func RookSource(ctx context.Context, o Options, version string) (string, error) {
	return download(ctx, o, "github.com/rook/rook@"+version)
}

// download puts module@version into the module cache and returns its folder.
func download(ctx context.Context, o Options, modVersion string) (string, error) {
	// Outside any module, so that no go.mod is consulted or changed.
	dir := o.cacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out, err := run(ctx, o, dir, "go", "mod", "download", "-json", modVersion)
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("images: go mod download %s: %s", modVersion, info.Error)
	}
	if err != nil {
		return "", err
	}
	if info.Dir == "" {
		return "", fmt.Errorf("images: go mod download %s: no folder in %q", modVersion, out)
	}
	return info.Dir, nil
}

var apisRequireRE = regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/rook/rook/pkg/apis\s+(v\S+)`)

// rookAPIs makes, once, dir: Rook's github.com/rook/rook/pkg/apis at the tree
// of Rook's release. Rook builds against ./pkg/apis, which its module zip
// omits (a nested module), and the proxy serves pkg/apis only at the
// version Rook's go.mod requires (December 2024, which lacks types v1.18's
// operator uses). So: that version from the proxy, plus the release's
// patch (rookAPIsPatches).
func rookAPIs(ctx context.Context, o Options, version string, rookGoMod []byte, dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	rookAPIsPatch, err := rookAPIsPatches.ReadFile("rook-apis-" + version + ".patch")
	if err != nil {
		return "", fmt.Errorf("images: no pkg/apis patch for Rook %s: %w", version, err)
	}
	m := apisRequireRE.FindSubmatch(rookGoMod)
	if m == nil {
		return "", errors.New("images: Rook's go.mod does not require github.com/rook/rook/pkg/apis")
	}
	src, err := download(ctx, o, "github.com/rook/rook/pkg/apis@"+string(m[1]))
	if err != nil {
		return "", err
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	if err := copyTree(src, tmp); err != nil {
		return "", err
	}
	patch := exec.CommandContext(ctx, "patch", "-p3", "--batch", "--forward", "--quiet", "-d", tmp)
	patch.Stdin = bytes.NewReader(rookAPIsPatch)
	if out, err := patch.CombinedOutput(); err != nil {
		return "", fmt.Errorf("images: patching github.com/rook/rook/pkg/apis to %s: %w\n%s", version, err, out)
	}
	os.RemoveAll(dir)
	return dir, os.Rename(tmp, dir)
}

// copyTree copies src's regular files to dst, writable, without tests (a
// module-cache folder is read-only; the old tests do not match the patch).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

var (
	blockRE = regexp.MustCompile(`(?ms)^(replace|exclude)\s*\((.*?)^\)`)
	lineRE  = regexp.MustCompile(`(?m)^(replace|exclude)\s+([^(\s].*)$`)
	goRE    = regexp.MustCompile(`(?m)^go\s+(\S+)`)
)

// RookBuildGoMod is the go.mod of the throwaway module that builds
// github.com/rook/rook@version: it requires Rook, copies the replace and
// exclude directives of rookGoMod (Rook's own go.mod), and points Rook's
// relative replace of its nested module github.com/rook/rook/pkg/apis
// (./pkg/apis) at apisDir (see rookAPIs).
func RookBuildGoMod(rookGoMod []byte, version, apisDir string) ([]byte, error) {
	src := string(rookGoMod)
	var directives []string // "replace X => Y" or "exclude X V"
	for _, m := range blockRE.FindAllStringSubmatch(src, -1) {
		for _, l := range strings.Split(m[2], "\n") {
			if l = stripComment(l); l != "" {
				directives = append(directives, m[1]+" "+l)
			}
		}
	}
	for _, m := range lineRE.FindAllStringSubmatch(src, -1) {
		if l := stripComment(m[2]); l != "" {
			directives = append(directives, m[1]+" "+l)
		}
	}
	goVersion := "1.24"
	if m := goRE.FindStringSubmatch(src); m != nil {
		goVersion = m[1]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// Generated by internal/e2e/images: builds github.com/rook/rook/cmd/rook.\nmodule rookbuild\n\ngo %s\n\nrequire github.com/rook/rook %s\n", goVersion, version)
	sawAPIs := false
	for _, d := range directives {
		kind, rest, _ := strings.Cut(d, " ")
		if kind == "replace" {
			from, to, ok := strings.Cut(rest, "=>")
			if !ok {
				return nil, fmt.Errorf("images: bad replace in Rook's go.mod: %q", rest)
			}
			from, to = strings.TrimSpace(from), strings.TrimSpace(to)
			if strings.HasPrefix(to, "./") || strings.HasPrefix(to, "../") {
				if strings.Fields(from)[0] != "github.com/rook/rook/pkg/apis" {
					return nil, fmt.Errorf("images: unexpected relative replace in Rook's go.mod: %q", rest)
				}
				to = apisDir
				sawAPIs = true
			}
			fmt.Fprintf(&b, "\nreplace %s => %s", from, to)
			continue
		}
		fmt.Fprintf(&b, "\nexclude %s", rest)
	}
	if !sawAPIs {
		fmt.Fprintf(&b, "\nreplace github.com/rook/rook/pkg/apis => %s", apisDir)
	}
	b.WriteString("\n")
	return []byte(b.String()), nil
}

func stripComment(l string) string {
	if i := strings.Index(l, "//"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// rookExtraFiles (from rookDir, Rook's module folder) are the files Rook's images/ceph/Dockerfile copies next to
// the binary: toolbox.sh and set-ceph-debug-level in /usr/local/bin, and the
// monitoring manifests the operator reads from /etc/ceph-monitoring.
func rookExtraFiles(rookDir string) ([]ociimage.File, error) {
	var files []ociimage.File
	for _, s := range []string{"toolbox.sh", "set-ceph-debug-level"} {
		files = append(files, ociimage.File{Path: "/usr/local/bin/" + s, Mode: 0o755, Source: filepath.Join(rookDir, "images", "ceph", s)})
	}
	mon := filepath.Join(rookDir, "deploy", "examples", "monitoring")
	err := filepath.WalkDir(mon, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(mon, p)
		files = append(files, ociimage.File{Path: "/etc/ceph-monitoring/" + filepath.ToSlash(rel), Mode: 0o644, Source: p})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("images: Rook's monitoring files: %w", err)
	}
	return files, nil
}

// PauseBinary builds the pause program (pause/main.go, embedded) as a static
// binary, cached by its source and the Go version, and returns its path.
func PauseBinary(ctx context.Context, o Options) (string, error) {
	key := shortHash(append(append([]byte(nil), pauseSource...), runtime.Version()...))
	dir := filepath.Join(o.cacheDir(), "pause", key)
	bin := filepath.Join(dir, "pause")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module pause\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), pauseSource, 0o644); err != nil {
		return "", err
	}
	o.logf("building pause")
	if _, err := run(ctx, o, dir, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin+".tmp", "."); err != nil {
		return "", err
	}
	return bin, os.Rename(bin+".tmp", bin)
}

func shortHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16]
}
