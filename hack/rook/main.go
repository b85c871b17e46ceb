// Command rook fetches Rook's real release artefacts from the Go module proxy
// and caches them outside the clone, where the tests and `just run` find
// them (see internal/cachedir):
//
//   - crds.yaml: every Rook CRD (deploy/examples/crds.yaml), installed by the
//     envtest-backed tests;
//   - rook-ceph-<version>.tgz: the operator chart, made installable offline
//     (its library subchart vendored, the unreachable ceph-csi-operator
//     dependency dropped, the version stamped as Rook's release build does),
//     installed by the plugin's real install path from a local chart
//     repository;
//   - osd-purge.yaml: Rook's OSD removal Job (deploy/examples), the shape
//     the plugin's retirement Job is tested against;
//   - the chart of cachedir.PreviousRookVersion, which the e2e installs
//     first and upgrades from.
//
// The module github.com/rook/rook is on the proxy but not in the checksum
// database, so its known h1: sum is checked here instead. Nothing happens
// when every artefact is already cached, and a cached chart archive is
// kept (its digest is what local installs pin).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
)

// rookModuleSums are the go.sum hashes of github.com/rook/rook at the
// release the plugin installs and the one the e2e upgrades from.
var rookModuleSums = map[string]string{
	"v1.18.11": "h1:Uv4iqTA0ukpZkREN/1CVBkFpRI/O3ChmuhnBq6YPIU0=",
	"v1.18.0":  "h1:vkI3HeSoC1h595WHzC/4NuFjB/x6Westw8iEozfrbVE=",
}

func main() {
	force := flag.Bool("force", false, "fetch and package again even when cached")
	flag.Parse()
	if err := run(*force); err != nil {
		fmt.Fprintln(os.Stderr, "hack/rook:", err)
		os.Exit(1)
	}
	fmt.Println(cachedir.RookDir())
}

func run(force bool) error {
	if err := cacheRelease(cachedir.RookVersion, force, cachedir.RookCRDs(), cachedir.RookOSDPurgeJob()); err != nil {
		return err
	}
	// The e2e's upgrade phase installs the release before first: its
	// chart only.
	return cacheRelease(cachedir.PreviousRookVersion, force)
}

// cacheRelease caches a release's chart, and the deploy/examples files
// named by examples.
func cacheRelease(version string, force bool, examples ...string) error {
	chartCached := !force && exists(cachedir.RookChartArchiveOf(version))
	if chartCached && exists(examples...) {
		return nil
	}
	moduleDir, err := downloadRook(version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cachedir.RookDirOf(version), 0o755); err != nil {
		return err
	}
	for _, cached := range examples {
		if err := copyFile(filepath.Join(moduleDir, "deploy", "examples", filepath.Base(cached)), cached); err != nil {
			return fmt.Errorf("cache %s: %w", filepath.Base(cached), err)
		}
	}
	if chartCached {
		return nil
	}
	return packageChart(moduleDir, version)
}

// downloadRook fetches the module and checks its hash against the known sum.
func downloadRook(version string) (string, error) {
	want, known := rookModuleSums[version]
	if !known {
		return "", fmt.Errorf("no known sum for github.com/rook/rook@%s", version)
	}
	tmp, err := os.MkdirTemp("", "rook-download-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/rook/rook@"+version)
	cmd.Dir = tmp // outside any module
	cmd.Env = append(os.Environ(), "GONOSUMDB=github.com/rook/rook", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download github.com/rook/rook@%s: %w\n%s%s", version, err, out, stderr.Bytes())
	}
	var info struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("read go mod download output: %w", err)
	}
	if info.Error != "" {
		return "", errors.New(info.Error)
	}
	if info.Sum != want {
		return "", fmt.Errorf("github.com/rook/rook@%s has sum %s, want %s: refusing to use it", version, info.Sum, want)
	}
	return info.Dir, nil
}

// packageChart turns deploy/charts/rook-ceph into an archive that installs
// without network access.
func packageChart(moduleDir, version string) error {
	charts := filepath.Join(moduleDir, "deploy", "charts")
	rookCeph, err := loader.LoadDir(filepath.Join(charts, "rook-ceph"))
	if err != nil {
		return fmt.Errorf("load rook-ceph chart: %w", err)
	}
	library, err := loader.LoadDir(filepath.Join(charts, "library"))
	if err != nil {
		return fmt.Errorf("load library chart: %w", err)
	}
	// The templates call "library.rook-ceph.labels": without the subchart
	// rendering fails.
	rookCeph.AddDependency(library)
	// ceph-csi-operator comes from a chart repository we cannot reach; it
	// is only rendered when csi.rookUseCsiOperator is true, which we turn off.
	var deps []*chart.Dependency
	for _, dep := range rookCeph.Metadata.Dependencies {
		if dep.Name != "ceph-csi-operator" {
			deps = append(deps, dep)
		}
	}
	rookCeph.Metadata.Dependencies = deps
	rookCeph.Metadata.Version = version
	rookCeph.Metadata.AppVersion = version
	if err := disableCSIOperator(rookCeph); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "rook-chart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	archive, err := chartutil.Save(rookCeph, tmp)
	if err != nil {
		return fmt.Errorf("package rook-ceph chart: %w", err)
	}
	if _, err := loader.Load(archive); err != nil {
		return fmt.Errorf("packaged chart does not load: %w", err)
	}
	return copyFile(archive, cachedir.RookChartArchiveOf(version))
}

// disableCSIOperator sets csi.rookUseCsiOperator to false in the chart's
// values.yaml (the raw file is what chartutil.Save writes, comments and all).
func disableCSIOperator(ch *chart.Chart) error {
	for _, f := range ch.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		from := []byte("  rookUseCsiOperator: true\n")
		if bytes.Count(f.Data, from) != 1 {
			return errors.New("rook-ceph values.yaml: expected exactly one `rookUseCsiOperator: true` under csi")
		}
		f.Data = bytes.Replace(f.Data, from, []byte("  rookUseCsiOperator: false\n"), 1)
		csi, _ := ch.Values["csi"].(map[string]any)
		if csi == nil {
			return errors.New("rook-ceph values.yaml: no csi section")
		}
		csi["rookUseCsiOperator"] = false
		return nil
	}
	return errors.New("rook-ceph chart has no values.yaml")
}

func exists(paths ...string) bool {
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	return true
}

// copyFile writes dst atomically, so an interrupted run leaves no half file.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
